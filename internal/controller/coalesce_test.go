package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestOnlyCountsChanged(t *testing.T) {
	dc := testDC(nil)
	base := rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 2)
	base.ResourceVersion = "1"
	changed := func(mutate func(*corev1.ReplicationController)) *corev1.ReplicationController {
		rc := base.DeepCopy()
		rc.ResourceVersion = "2"
		mutate(rc)
		return rc
	}
	cases := []struct {
		name string
		new  *corev1.ReplicationController
		want bool
	}{
		{"a pod more", changed(func(rc *corev1.ReplicationController) { rc.Status.Replicas++ }), true},
		{"a pod ready and available", changed(func(rc *corev1.ReplicationController) {
			rc.Status.ReadyReplicas++
			rc.Status.AvailableReplicas++
		}), true},
		{"observed generation", changed(func(rc *corev1.ReplicationController) { rc.Status.ObservedGeneration++ }), true},
		{"resync: same resourceVersion", func() *corev1.ReplicationController { rc := base.DeepCopy(); rc.Status.Replicas++; return rc }(), false},
		{"phase", changed(func(rc *corev1.ReplicationController) {
			rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseComplete)
		}), false},
		{"scaled", changed(func(rc *corev1.ReplicationController) { rc.Spec.Replicas = new(int32(3)) }), false},
		{"labelled", changed(func(rc *corev1.ReplicationController) { rc.Labels[dcv1.DeploymentSettledLabel] = "true" }), false},
		{"released", changed(func(rc *corev1.ReplicationController) { rc.OwnerReferences = nil }), false},
		{"being deleted", changed(func(rc *corev1.ReplicationController) { rc.DeletionTimestamp = &metav1.Time{} }), false},
		{"a status condition", changed(func(rc *corev1.ReplicationController) {
			rc.Status.Conditions = []corev1.ReplicationControllerCondition{{Type: corev1.ReplicationControllerReplicaFailure, Status: corev1.ConditionTrue}}
		}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := onlyCountsChanged(base, tc.new); got != tc.want {
				t.Errorf("onlyCountsChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCountChangesSettle checks what the DeploymentConfig controller's
// queue gets from RC updates: count changes a second later, folded into
// one request; anything else, and a count change that lets a rollout
// start, at once.
func TestCountChangesSettle(t *testing.T) {
	dc := testDC(nil)
	rc := rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 2)
	rc.ResourceVersion = "1"
	next := func(old *corev1.ReplicationController, mutate func(*corev1.ReplicationController)) *corev1.ReplicationController {
		rc := old.DeepCopy()
		rc.ResourceVersion += "1"
		mutate(rc)
		return rc
	}
	onePod := next(rc, func(rc *corev1.ReplicationController) { rc.Status.Replicas = 1 })
	oneReady := next(onePod, func(rc *corev1.ReplicationController) { rc.Status.ReadyReplicas, rc.Status.AvailableReplicas = 1, 1 })
	complete := next(oneReady, func(rc *corev1.ReplicationController) {
		rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseComplete)
	})
	never := func(context.Context, reconcile.Request) bool { return false }
	always := func(context.Context, reconcile.Request) bool { return true }

	t.Run("count changes wait and fold", func(t *testing.T) {
		q := priorityqueue.New[reconcile.Request]("")
		defer q.ShutDown()
		h := enqueueDCsOfRC(never)
		h.Update(t.Context(), event.UpdateEvent{ObjectOld: rc, ObjectNew: onePod}, q)
		h.Update(t.Context(), event.UpdateEvent{ObjectOld: onePod, ObjectNew: oneReady}, q)
		if n := q.Len(); n != 0 {
			t.Fatalf("%d requests ready at once, want none before %s", n, countsSettle)
		}
		err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 5*countsSettle, true, func(context.Context) (bool, error) {
			return q.Len() > 0, nil
		})
		if err != nil {
			t.Fatalf("no request %s after the count changes", 5*countsSettle)
		}
		if n := q.Len(); n != 1 {
			t.Errorf("%d requests, want the two count changes folded into one", n)
		}
	})
	t.Run("a phase change goes at once, taking a waiting count change along", func(t *testing.T) {
		q := priorityqueue.New[reconcile.Request]("")
		defer q.ShutDown()
		h := enqueueDCsOfRC(never)
		h.Update(t.Context(), event.UpdateEvent{ObjectOld: rc, ObjectNew: onePod}, q)
		h.Update(t.Context(), event.UpdateEvent{ObjectOld: oneReady, ObjectNew: complete}, q)
		if n := q.Len(); n != 1 {
			t.Errorf("%d requests ready at once, want the DeploymentConfig's one", n)
		}
	})
	t.Run("a count change that lets a rollout start goes at once", func(t *testing.T) {
		q := priorityqueue.New[reconcile.Request]("")
		defer q.ShutDown()
		enqueueDCsOfRC(always).Update(t.Context(), event.UpdateEvent{ObjectOld: rc, ObjectNew: onePod}, q)
		req, priority, _ := q.GetWithPriority()
		if req.Name != dc.Name || priority != priorityRollout {
			t.Errorf("got %v at priority %d, want %s at %d", req, priority, dc.Name, priorityRollout)
		}
	})
}
