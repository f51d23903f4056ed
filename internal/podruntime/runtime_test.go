package podruntime

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestRemovedWorkerRestarts checks which ended workers let a pod start
// again: a pod whose work ended for good must never run twice, even when the
// pod cache still shows it running, while a worker that stopped for the
// runtime's shutdown or a failed status write hands over to a new one.
func TestRemovedWorkerRestarts(t *testing.T) {
	tests := []struct {
		name        string
		ended       bool
		wantStarted bool
	}{
		{name: "pod finished or deleted", ended: true, wantStarted: false},
		{name: "shutdown or failed status write", ended: false, wantStarted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1-deploy", UID: "u1"}}
			w := &podWorker{uid: pod.UID, key: types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}}
			r := &Runtime{
				workers: map[types.UID]*podWorker{pod.UID: w},
				ended:   map[types.UID]types.NamespacedName{},
			}
			r.removeWorker(w, tt.ended)
			if _, running := r.workers[pod.UID]; running {
				t.Fatalf("worker still listed after removeWorker")
			}
			// startWorker refuses before it builds a worker, so only the
			// refusal is exercised here; an accepted start is seen as the
			// absence of the pod from the ended set.
			_, refused := r.ended[pod.UID]
			if refused == tt.wantStarted {
				t.Fatalf("pod remembered as ended = %v, want %v", refused, !tt.wantStarted)
			}
			if !tt.wantStarted && r.startWorker(context.Background(), nil, pod) {
				t.Errorf("startWorker started a pod whose work had ended")
			}
		})
	}
}
