package scaler

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
)

const ns = "shop"

func testRC(name string, replicas int32) *corev1.ReplicationController {
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{}},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr.To(replicas),
			Selector: map[string]string{"deployment": name},
		},
		Status: corev1.ReplicationControllerStatus{Replicas: replicas, AvailableReplicas: replicas},
	}
}

func podOf(rc, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"deployment": rc}}}
}

func newCluster(t *testing.T, opts fc.Options, objects ...runtime.Object) (*fc.Cluster, *Scaler) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	c := fc.New(ctx, opts, objects...)
	t.Cleanup(func() { cancel(); c.Wait() })
	return c, New(c.Client, ns)
}

func TestScale(t *testing.T) {
	tests := []struct {
		name     string
		from, to int32
	}{
		{"up", 0, 3},
		{"down", 3, 1},
		{"to zero", 2, 0},
		{"unchanged", 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s := newCluster(t, fc.Options{}, testRC("web-1", tt.from))
			rc, err := s.Scale(t.Context(), "web-1", tt.to, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			// One write sets the count and records it: each write of a
			// deployer is one more request per rollout.
			if writes := rcWrites(c.Client.Actions()); len(writes) != 1 || writes[0] != "patch replicationcontrollers" {
				t.Errorf("writes of the RC %v, want one patch of the RC", writes)
			}
			if *rc.Spec.Replicas != tt.to || rc.Status.Replicas != tt.to {
				t.Errorf("spec %d status %d, want %d", *rc.Spec.Replicas, rc.Status.Replicas, tt.to)
			}
			got, err := s.Get(t.Context(), "web-1")
			if err != nil {
				t.Fatal(err)
			}
			if a := got.Annotations[dcv1.DeploymentReplicasAnnotation]; a != strconv.Itoa(int(tt.to)) {
				t.Errorf("replicas annotation %q, want %d", a, tt.to)
			}
		})
	}
}

// rcWrites lists the deployer's writes of RCs (and their subresources),
// as "verb resource[/subresource]".
func rcWrites(actions []k8stesting.Action) []string {
	var out []string
	for _, a := range actions {
		resource := a.GetResource().Resource
		if resource != "replicationcontrollers" {
			continue
		}
		if sub := a.GetSubresource(); sub != "" {
			resource += "/" + sub
		}
		switch a.(type) {
		case k8stesting.UpdateAction, k8stesting.PatchAction, k8stesting.CreateAction:
			out = append(out, a.GetVerb()+" "+resource)
		}
	}
	return out
}

func TestWaitTimeouts(t *testing.T) {
	stale := testRC("web-1", 2)
	stale.Generation, stale.Status.ObservedGeneration = 3, 2
	unavailable := testRC("web-2", 2)
	unavailable.Status.AvailableReplicas = 1
	tests := []struct {
		name    string
		wait    func(s *Scaler) error
		wantErr string
	}{
		{
			name: "replicas: the RC manager has not seen the spec",
			wait: func(s *Scaler) error {
				_, err := s.WaitReplicas(t.Context(), "web-1", 2, 50*time.Millisecond)
				return err
			},
			wantErr: "replicationcontroller shop/web-1 did not reach 2 replicas: no progress within 50ms",
		},
		{
			name: "availability",
			wait: func(s *Scaler) error {
				_, err := s.WaitAvailable(t.Context(), "web-2", time.Second)
				return err
			},
			wantErr: "pods for rc 'shop/web-2' took longer than 1 seconds to become available",
		},
		{
			name: "pods gone",
			wait: func(s *Scaler) error {
				return s.WaitPodsGone(t.Context(), testRC("web-2", 0), 50*time.Millisecond)
			},
			wantErr: "pods of replicationcontroller shop/web-2 still exist after 50ms",
		},
		{
			name: "missing RC",
			wait: func(s *Scaler) error {
				_, err := s.WaitAvailable(t.Context(), "web-9", time.Second)
				return err
			},
			wantErr: `get replicationcontroller shop/web-9: replicationcontrollers "web-9" not found`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s := newCluster(t, fc.Options{}, stale, unavailable, podOf("web-2", "web-2-a"))
			err := tt.wait(s)
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestWaitAvailableLater(t *testing.T) {
	c, s := newCluster(t, fc.Options{NeverAvailable: []string{"web-1"}}, testRC("web-1", 0))
	if _, err := s.Scale(t.Context(), "web-1", 2, time.Second); err != nil {
		t.Fatal(err)
	}
	watches := c.Watches("replicationcontrollers")
	go func() {
		if c.WaitWatches(t.Context(), "replicationcontrollers", watches+1, 5*time.Second) != nil {
			return
		}
		_ = c.SetAvailable("web-1", 1)
		_ = c.SetAvailable("web-1", 2)
	}()
	rc, err := s.WaitAvailable(t.Context(), "web-1", 5*time.Second)
	if err != nil || rc.Status.AvailableReplicas != 2 {
		t.Fatalf("got %v, %v", rc, err)
	}
}

func TestWaitAvailableChange(t *testing.T) {
	c, s := newCluster(t, fc.Options{}, testRC("web-1", 2))
	start := time.Now()
	rc, err := s.WaitAvailableChange(t.Context(), "web-1", 2, start.Add(100*time.Millisecond))
	if err != nil || rc.Status.AvailableReplicas != 2 {
		t.Fatalf("at the deadline: got %v, %v; want the RC and no error", rc, err)
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Errorf("returned after %s, before the deadline", time.Since(start))
	}
	watches := c.Watches("replicationcontrollers")
	go func() {
		if c.WaitWatches(t.Context(), "replicationcontrollers", watches+1, 5*time.Second) == nil {
			_ = c.SetAvailable("web-1", 1)
		}
	}()
	rc, err = s.WaitAvailableChange(t.Context(), "web-1", 2, time.Now().Add(5*time.Second))
	if err != nil || rc.Status.AvailableReplicas != 1 {
		t.Fatalf("after a change: got %v, %v", rc, err)
	}
}

func TestWaitPodsGone(t *testing.T) {
	c, s := newCluster(t, fc.Options{}, testRC("web-1", 2), podOf("web-1", "a"), podOf("web-1", "b"), podOf("web-2", "other"))
	go func() {
		if c.WaitWatches(t.Context(), "pods", 1, 5*time.Second) != nil {
			return
		}
		for _, name := range []string{"a", "b"} {
			_ = c.Client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	}()
	if err := s.WaitPodsGone(t.Context(), testRC("web-1", 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitPodsGone(t.Context(), &corev1.ReplicationController{}, time.Second); err == nil {
		t.Error("an RC without a selector: want an error")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.WaitPodsGone(ctx, testRC("web-2", 0), time.Second)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Errorf("cancelled: err = %v, want context.Canceled and no timeout", err)
	}
}

// fakeTimer is a wait's timer that runs out only when the test says so, and
// shows each restart of the timeout.
type fakeTimer struct {
	fire   func()
	resets chan time.Duration
}

func (t *fakeTimer) Stop() bool { return true }

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.resets <- d
	return true
}

// slowManager sets up an RC that was scaled from 3 to 0 and that the RC
// manager has not caught up with, a scaler whose timers the test controls,
// and a channel that receives once the scaler's watch is open (so that every
// later write reaches the scaler as an event).
func slowManager(t *testing.T) (*fc.Cluster, *Scaler, chan *fakeTimer, chan struct{}) {
	t.Helper()
	rc := testRC("web-1", 3)
	rc.Spec.Replicas = ptr.To[int32](0)
	rc.Generation, rc.Status.ObservedGeneration = 2, 1
	c, s := newCluster(t, fc.Options{}, rc)
	timers := make(chan *fakeTimer, 1)
	s.afterFunc = func(_ time.Duration, f func()) stopResetter {
		ft := &fakeTimer{fire: f, resets: make(chan time.Duration, 10)}
		timers <- ft
		return ft
	}
	watching := make(chan struct{}, 1)
	c.Client.PrependWatchReactor("replicationcontrollers", func(action k8stesting.Action) (bool, watch.Interface, error) {
		w, err := c.Client.Tracker().Watch(action.GetResource(), action.GetNamespace())
		watching <- struct{}{}
		return true, w, err
	})
	return c, s, timers, watching
}

// setStatus writes the RC's status as the RC manager would, without the
// fake cluster's instant RC manager.
func setStatus(t *testing.T, c *fc.Cluster, mutate func(*corev1.ReplicationController)) {
	t.Helper()
	obj, err := c.Client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("replicationcontrollers"), ns, "web-1")
	if err != nil {
		t.Fatal(err)
	}
	rc := obj.(*corev1.ReplicationController).DeepCopy()
	mutate(rc)
	if err := c.Client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("replicationcontrollers"), rc, ns); err != nil {
		t.Fatal(err)
	}
}

// receive waits for a value the scaler is about to send, failing the test
// when it never comes.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}

type waitResult struct {
	rc  *corev1.ReplicationController
	err error
}

// TestWaitReplicasProgress: the timeout counts from the last change of the
// RC's counts (no progress within timeoutSeconds fails), so a
// backlogged RC manager that still removes pods does not fail the rollout,
// and one that stands still does.
func TestWaitReplicasProgress(t *testing.T) {
	t.Run("progressing", func(t *testing.T) {
		c, s, timers, watching := slowManager(t)
		done := make(chan waitResult, 1)
		go func() {
			rc, err := s.WaitReplicas(t.Context(), "web-1", 0, 10*time.Minute)
			done <- waitResult{rc, err}
		}()
		timer := receive(t, timers, "timer")
		receive(t, watching, "watch")
		// Not progress: nothing the RC manager counts changed.
		setStatus(t, c, func(rc *corev1.ReplicationController) { rc.Annotations["note"] = "x" })
		setStatus(t, c, func(rc *corev1.ReplicationController) { rc.Status.ObservedGeneration, rc.Status.Replicas = 2, 2 })
		if d := receive(t, timer.resets, "restart of the timeout"); d != 10*time.Minute {
			t.Errorf("timeout restarted with %s, want 10m", d)
		}
		setStatus(t, c, func(rc *corev1.ReplicationController) { rc.Status.Replicas = 0 })
		got := receive(t, done, "end of the wait")
		if got.err != nil || got.rc.Status.Replicas != 0 {
			t.Fatalf("got %v, %v; want the RC at 0 replicas", got.rc, got.err)
		}
		if n := len(timer.resets); n != 1 {
			t.Errorf("%d more restarts of the timeout, want 1 (for the last move)", n)
		}
	})
	t.Run("standing still", func(t *testing.T) {
		c, s, timers, watching := slowManager(t)
		done := make(chan waitResult, 1)
		go func() {
			rc, err := s.WaitReplicas(t.Context(), "web-1", 0, 10*time.Minute)
			done <- waitResult{rc, err}
		}()
		timer := receive(t, timers, "timer")
		receive(t, watching, "watch")
		setStatus(t, c, func(rc *corev1.ReplicationController) { rc.Status.ObservedGeneration, rc.Status.Replicas = 2, 1 })
		receive(t, timer.resets, "restart of the timeout")
		timer.fire()
		got := receive(t, done, "end of the wait")
		want := "replicationcontroller shop/web-1 did not reach 0 replicas: no progress within 10m0s"
		if !errors.Is(got.err, ErrTimeout) || !strings.HasPrefix(got.err.Error(), want) {
			t.Fatalf("err = %v, want %q wrapping ErrTimeout", got.err, want)
		}
		if got.rc == nil || got.rc.Status.Replicas != 1 {
			t.Errorf("last seen RC %v, want the one with 1 replica", got.rc)
		}
	})
}

// TestSettle: a resumed rollout waits for the RC manager to act on a scale
// its dead runner wrote, and does not wait when there is nothing to act on.
func TestSettle(t *testing.T) {
	fresh := testRC("web-2", 0)
	fresh.Generation = 1
	for name, rc := range map[string]*corev1.ReplicationController{"acted on": testRC("web-3", 2), "created at zero": fresh} {
		t.Run(name, func(t *testing.T) {
			c, s := newCluster(t, fc.Options{}, rc)
			got, err := s.Settle(t.Context(), rc, time.Second)
			if err != nil || got != rc {
				t.Fatalf("got %v, %v; want the RC as given", got, err)
			}
			if n := c.Watches("replicationcontrollers"); n != 0 {
				t.Errorf("%d watches, want none", n)
			}
		})
	}
	t.Run("scale-down not acted on", func(t *testing.T) {
		c, s, _, watching := slowManager(t)
		rc, err := s.Get(t.Context(), "web-1")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan waitResult, 1)
		go func() {
			rc, err := s.Settle(t.Context(), rc, 10*time.Minute)
			done <- waitResult{rc, err}
		}()
		receive(t, watching, "watch")
		select {
		case got := <-done:
			t.Fatalf("settled at %d pods before the RC manager removed any", got.rc.Status.Replicas)
		default:
		}
		setStatus(t, c, func(rc *corev1.ReplicationController) { rc.Status.ObservedGeneration, rc.Status.Replicas = 2, 0 })
		if got := receive(t, done, "end of the wait"); got.err != nil || got.rc.Status.Replicas != 0 {
			t.Fatalf("got %v, %v; want the RC at 0 pods", got.rc, got.err)
		}
	})
}
