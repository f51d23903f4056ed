package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestDCStartsRollout(t *testing.T) {
	base := testDC(nil)
	deployed := rcOf(t, base, 1, dcv1.DeploymentPhaseComplete, 4)
	running := rcOf(t, base, 1, dcv1.DeploymentPhaseRunning, 4)
	at := func(version int64, mutate func(*dcv1.DeploymentConfig)) *dcv1.DeploymentConfig {
		return testDC(func(dc *dcv1.DeploymentConfig) {
			dc.Status.LatestVersion = version
			if mutate != nil {
				mutate(dc)
			}
		})
	}
	changed := func(dc *dcv1.DeploymentConfig) { dc.Spec.Template.Spec.Containers[0].Image = "img:2" }
	causedBy := func(types ...dcv1.DeploymentTriggerType) func(*dcv1.DeploymentConfig) {
		return func(dc *dcv1.DeploymentConfig) {
			dc.Status.Details = &dcv1.DeploymentDetails{}
			for _, t := range types {
				dc.Status.Details.Causes = append(dc.Status.Details.Causes, dcv1.DeploymentCause{Type: t})
			}
		}
	}
	cases := []struct {
		name string
		dc   *dcv1.DeploymentConfig
		// latest is the deployment of latestVersion the cache has.
		latest *corev1.ReplicationController
		// starts is the priority of a change of the DeploymentConfig,
		// awaits that of a change of one of its RCs.
		starts, awaits bool
	}{
		{"new, its config change fires", at(0, nil), nil, true, false},
		{"template changed since the latest deployment", at(1, changed), deployed, true, false},
		{"template changed while the latest still runs", at(1, changed), running, true, false},
		{"a user raised latestVersion", at(2, causedBy(dcv1.DeploymentTriggerManual)), nil, true, true},
		{"latestVersion raised without details", at(2, nil), nil, true, true},
		// The echo of the sync's own status write, which goes on to make
		// the deployment: bookkeeping. Should it wait for older rollouts,
		// their RCs' changes go first.
		{"a trigger raised latestVersion", at(2, causedBy(dcv1.DeploymentTriggerOnConfigChange)), nil, false, true},
		{"an image trigger raised latestVersion", at(2, causedBy(dcv1.DeploymentTriggerOnImageChange, dcv1.DeploymentTriggerOnConfigChange)), nil, false, true},
		{"a retry was asked for", at(1, func(dc *dcv1.DeploymentConfig) {
			dc.Annotations = map[string]string{dcv1.RolloutRequestAnnotation: "retry"}
		}), rcOf(t, base, 1, dcv1.DeploymentPhaseFailed, 0), true, false},
		{"a cancel was asked for: it starts nothing", at(1, func(dc *dcv1.DeploymentConfig) {
			dc.Annotations = map[string]string{dcv1.RolloutRequestAnnotation: "cancel"}
		}), running, false, false},
		{"RC status or phase bookkeeping: nothing changed", at(1, nil), deployed, false, false},
		{"a running rollout's bookkeeping", at(1, nil), running, false, false},
		{"scaled only", at(1, func(dc *dcv1.DeploymentConfig) { dc.Spec.Replicas = 9 }), deployed, false, false},
		{"paused", at(2, func(dc *dcv1.DeploymentConfig) { changed(dc); dc.Spec.Paused = true }), nil, false, false},
		{"being deleted", at(2, func(dc *dcv1.DeploymentConfig) { dc.DeletionTimestamp = &metav1.Time{} }), nil, false, false},
		{"no triggers: waits for a user", at(0, func(dc *dcv1.DeploymentConfig) { dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{} }), nil, false, false},
		{"image trigger unresolved", at(0, func(dc *dcv1.DeploymentConfig) {
			dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{imageTrigger(true, "")}
		}), nil, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := dcStartsRollout(tc.dc, tc.latest); got != tc.starts {
				t.Errorf("dcStartsRollout = %v, want %v", got, tc.starts)
			}
			if got := dcAwaitsDeployment(tc.dc, tc.latest); got != tc.awaits {
				t.Errorf("dcAwaitsDeployment = %v, want %v", got, tc.awaits)
			}
		})
	}
}

func TestRCStartsRollout(t *testing.T) {
	dc := testDC(nil)
	with := func(phase dcv1.DeploymentPhase, mutate func(*corev1.ReplicationController)) *corev1.ReplicationController {
		rc := rcOf(t, dc, 1, phase, 4)
		if mutate != nil {
			mutate(rc)
		}
		return rc
	}
	cancelled := func(rc *corev1.ReplicationController) { rc.Annotations[dcv1.DeploymentCancelledAnnotation] = "true" }
	cases := []struct {
		name   string
		rc     *corev1.ReplicationController
		hasPod bool
		want   bool
	}{
		{"new: needs its deployer pod", with(dcv1.DeploymentPhaseNew, nil), false, true},
		{"no phase recorded yet counts as new", with(dcv1.DeploymentPhaseNew, func(rc *corev1.ReplicationController) {
			delete(rc.Annotations, dcv1.DeploymentPhaseAnnotation)
		}), false, true},
		// The echo of the pod's creation, before its phase is written.
		{"new with its deployer pod", with(dcv1.DeploymentPhaseNew, nil), true, false},
		{"pending: its pod's bookkeeping", with(dcv1.DeploymentPhasePending, nil), true, false},
		{"running", with(dcv1.DeploymentPhaseRunning, nil), true, false},
		{"complete", with(dcv1.DeploymentPhaseComplete, nil), true, false},
		{"failed", with(dcv1.DeploymentPhaseFailed, nil), false, false},
		{"cancelled while running: a newer one waits", with(dcv1.DeploymentPhaseRunning, cancelled), true, true},
		{"cancelled before its pod", with(dcv1.DeploymentPhaseNew, cancelled), false, true},
		{"cancelled and failed", with(dcv1.DeploymentPhaseFailed, cancelled), false, false},
		{"not a DeploymentConfig's", with(dcv1.DeploymentPhaseNew, func(rc *corev1.ReplicationController) {
			delete(rc.Labels, dcv1.DeploymentConfigLabel)
		}), false, false},
		{"being deleted", with(dcv1.DeploymentPhaseNew, func(rc *corev1.ReplicationController) {
			rc.DeletionTimestamp = &metav1.Time{}
		}), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := rcStartsRollout(tc.rc, tc.hasPod); got != tc.want {
				t.Errorf("rcStartsRollout = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestEnqueueByPriority checks the priority each kind of event is queued
// at, on controller-runtime's priority queue.
func TestEnqueueByPriority(t *testing.T) {
	starting := func(name string) client.Object {
		return &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "2"}}
	}
	older := func(o client.Object) client.Object {
		old := o.DeepCopyObject().(client.Object)
		old.SetResourceVersion("1")
		return old
	}
	rollout, other := starting("rollout"), starting("other")
	low, none, high := handler.LowPriority, 0, priorityRollout
	cases := []struct {
		name string
		send func(context.Context, handler.EventHandler, priorityqueue.PriorityQueue[reconcile.Request])
		want int
	}{
		{"create that starts a rollout", func(ctx context.Context, h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Create(ctx, event.CreateEvent{Object: rollout}, q)
		}, high},
		{"initial list entry that starts a rollout", func(ctx context.Context, h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Create(ctx, event.CreateEvent{Object: rollout, IsInInitialList: true}, q)
		}, high},
		{"update that starts a rollout", func(ctx context.Context, h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: older(rollout), ObjectNew: rollout}, q)
		}, high},
		{"bookkeeping update", func(ctx context.Context, h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: older(other), ObjectNew: other}, q)
		}, none},
		{"bookkeeping create", func(ctx context.Context, h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Create(ctx, event.CreateEvent{Object: other}, q)
		}, none},
		{"delete", func(ctx context.Context, h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Delete(ctx, event.DeleteEvent{Object: other}, q)
		}, none},
		{"initial list entry", func(ctx context.Context, h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Create(ctx, event.CreateEvent{Object: other, IsInInitialList: true}, q)
		}, low},
		{"resync that changes nothing", func(ctx context.Context, h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: other, ObjectNew: other}, q)
		}, low},
	}
	startsRollout := func(_ context.Context, req reconcile.Request) bool { return req.Name == rollout.GetName() }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := priorityqueue.New[reconcile.Request]("")
			defer q.ShutDown()
			tc.send(t.Context(), enqueueByPriority(requestFor, startsRollout), q)
			_, priority, _ := q.GetWithPriority()
			if priority != tc.want {
				t.Errorf("queued at priority %d, want %d", priority, tc.want)
			}
		})
	}
}

// TestRolloutFirst checks that a rollout's request overtakes bookkeeping
// queued before it, and that the bookkeeping still follows.
func TestRolloutFirst(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("")
	defer q.ShutDown()
	startsRollout := func(_ context.Context, req reconcile.Request) bool { return req.Name == "new" }
	h := enqueueByPriority(requestFor, startsRollout)
	for _, name := range []string{"busy-1", "busy-2", "new", "busy-3"} {
		rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		h.Create(t.Context(), event.CreateEvent{Object: rc}, q)
	}
	want := []string{"new", "busy-1", "busy-2", "busy-3"}
	for _, name := range want {
		req, _, _ := q.GetWithPriority()
		if req.Name != name {
			t.Fatalf("got %s, want the order %v", req.Name, want)
		}
		q.Done(req)
	}
}

func TestUpdateMapsOldAndNewOnce(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("")
	defer q.ShutDown()
	h := enqueueByPriority(deploymentConfigsOfRC, func(context.Context, reconcile.Request) bool { return false })
	old := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", ResourceVersion: "1",
		Labels: map[string]string{dcv1.DeploymentConfigLabel: "web"}}}
	relabelled := old.DeepCopy()
	relabelled.ResourceVersion = "2"
	relabelled.Labels[dcv1.DeploymentConfigLabel] = "api"
	h.Update(t.Context(), event.UpdateEvent{ObjectOld: old, ObjectNew: relabelled}, q)
	if n := q.Len(); n != 2 {
		t.Errorf("%d requests queued, want one for each DeploymentConfig", n)
	}
}

// TestRolloutPrioritiesReadTheCache checks the lookups behind the
// decisions: the DeploymentConfig's deployment of latestVersion is the
// one of that name, version and label.
func TestRolloutPrioritiesReadTheCache(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	dc := testDC(func(dc *dcv1.DeploymentConfig) { dc.Status.LatestVersion = 1 })
	// Stored as the API server has it: without the defaults, so the
	// lookup must default the triggers itself.
	stored := dc.DeepCopy()
	stored.Spec.Triggers = nil
	latest := rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 4)
	fresh := rcOf(t, testDC(func(dc *dcv1.DeploymentConfig) { dc.Name = "fresh" }), 1, dcv1.DeploymentPhaseNew, 4)
	started := rcOf(t, testDC(func(dc *dcv1.DeploymentConfig) { dc.Name = "started" }), 1, dcv1.DeploymentPhaseNew, 4)
	startedPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: started.Name + "-deploy"}}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored, latest, fresh, started, startedPod).Build()
	p := rolloutPriorities{reader: reader}
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if p.deploymentConfig(ctx, req("web")) {
		t.Error("a DeploymentConfig whose latest deployment runs its template starts no rollout")
	}
	if !p.deployment(ctx, req(fresh.Name)) || p.deployment(ctx, req(latest.Name)) || p.deployment(ctx, req(started.Name)) {
		t.Error("only the new deployment without a deployer pod starts a rollout")
	}
	if p.deploymentConfig(ctx, req("gone")) || p.deploymentConfigOfRC(ctx, req("gone")) || p.deployment(ctx, req("gone-1")) {
		t.Error("objects not in the cache start nothing")
	}
	latest.Labels[dcv1.DeploymentConfigLabel] = "someone-else"
	if err := reader.Update(ctx, latest); err != nil {
		t.Fatal(err)
	}
	if !p.deploymentConfig(ctx, req("web")) || !p.deploymentConfigOfRC(ctx, req("web")) {
		t.Error("an RC of the right name but another DeploymentConfig's is not its deployment: the rollout is still to start")
	}
}

func TestCreateRetry(t *testing.T) {
	cases := []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{"every 5 seconds", 600 * time.Second, 5 * time.Second},
		{"a shorter timeout", 2 * time.Second, 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := createRetry(tc.timeout)
			if got.RequeueAfter != tc.want {
				t.Errorf("retry after %s, want %s", got.RequeueAfter, tc.want)
			}
			if got.Priority == nil || *got.Priority >= priorityRollout {
				t.Errorf("retry at priority %v, want below priorityRollout: retries wait with the bookkeeping", got.Priority)
			}
		})
	}
}
