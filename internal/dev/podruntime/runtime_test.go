package podruntime

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A pod whose worker stopped before the pod ended (its status could not be
// written while the API server was away, or the runtime is stopping) may be
// taken over by a new worker; one that ended (final status written, or
// deleted) is never started again.
func TestRemoveWorker(t *testing.T) {
	tests := []struct {
		name      string
		ended     bool
		wantStart bool
	}{
		{name: "the pod ended", ended: true},
		{name: "the status could not be written", ended: false, wantStart: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1-hook-pre", UID: "uid-1"}}
			key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
			w := &podWorker{uid: pod.UID, key: key}
			r := &Runtime{workers: map[types.UID]*podWorker{pod.UID: w}, ended: map[types.UID]types.NamespacedName{}}
			r.removeWorker(w, tt.ended)
			if r.worker(pod.UID) != nil {
				t.Error("the stopped worker is still listed")
			}
			_, remembered := r.ended[pod.UID]
			if remembered == tt.wantStart {
				t.Errorf("the pod may be started again: %t, want %t", !remembered, tt.wantStart)
			}
			if tt.ended {
				if started, _ := r.startWorker(t.Context(), nil, pod); started {
					t.Error("startWorker started an ended pod again")
				}
			}
		})
	}
}

// The final status is written again until it is written, or until the
// worker says to stop (the pod is gone, the runtime stops).
func TestUntilWritten(t *testing.T) {
	away := errors.New("connection refused")
	tests := []struct {
		name      string
		failures  int
		stopAfter int
		wantCalls int
		wantErr   error
	}{
		{name: "written at once", wantCalls: 1},
		{name: "written once the API server is back", failures: 3, stopAfter: 100, wantCalls: 4},
		{name: "the pod is gone", failures: 100, stopAfter: 2, wantCalls: 3, wantErr: away},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, asked := 0, 0
			err := untilWritten(func() error {
				calls++
				if calls <= tt.failures {
					return away
				}
				return nil
			}, func(error) bool {
				asked++
				return asked <= tt.stopAfter
			})
			if !errors.Is(err, tt.wantErr) || calls != tt.wantCalls {
				t.Errorf("untilWritten() = %v after %d writes, want %v after %d", err, calls, tt.wantErr, tt.wantCalls)
			}
		})
	}
}
