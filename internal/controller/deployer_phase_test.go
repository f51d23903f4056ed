package controller

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// phaseWorld is a deployer controller on a fake client that counts the
// writes of the RC (its phase patches).
type phaseWorld struct {
	t       *testing.T
	r       *DeployerReconciler
	c       client.Client
	clock   *clocktesting.FakeClock
	rc      *corev1.ReplicationController
	patches int
	// creates counts pod creates; staleCache makes the controller's
	// cached reads of pods miss, as a cache that has not yet seen a new
	// pod does (the API reader still finds it).
	creates    int
	staleCache bool
}

func newPhaseWorld(t *testing.T) *phaseWorld {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	w := &phaseWorld{t: t, clock: clocktesting.NewFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))}
	w.rc = rcOf(t, testDC(nil), 1, dcv1.DeploymentPhaseNew, 0)
	w.c = fake.NewClientBuilder().WithScheme(scheme).WithObjects(w.rc).WithStatusSubresource(&corev1.Pod{}).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*corev1.ReplicationController); ok {
				w.patches++
			}
			return c.Patch(ctx, obj, patch, opts...)
		}, Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok {
				w.creates++
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
	cached := interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*corev1.Pod); ok && w.staleCache {
			return apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	w.r = &DeployerReconciler{Client: cached, APIReader: w.c, Recorder: events.NewFakeRecorder(10), Clock: w.clock,
		DeployerImage: "deployer:test", finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "finished"}, []string{"phase"})}
	return w
}

// sync reconciles the deployment once.
func (w *phaseWorld) sync() reconcile.Result {
	w.t.Helper()
	res, err := w.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w.rc)})
	if err != nil {
		w.t.Fatal(err)
	}
	return res
}

// phase is the deployment's phase as stored.
func (w *phaseWorld) phase() dcv1.DeploymentPhase {
	w.t.Helper()
	rc := &corev1.ReplicationController{}
	if err := w.c.Get(context.Background(), client.ObjectKeyFromObject(w.rc), rc); err != nil {
		w.t.Fatal(err)
	}
	return deployment.Phase(rc)
}

// setPod gives the deployer pod a creation time (the fake client sets
// none) and a phase, as the API server and its kubelet would.
func (w *phaseWorld) setPod(created time.Time, phase corev1.PodPhase) {
	w.t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{}
	key := types.NamespacedName{Namespace: w.rc.Namespace, Name: deployment.DeployerPodName(w.rc.Name)}
	if err := w.c.Get(ctx, key, pod); err != nil {
		w.t.Fatalf("the deployer pod: %v", err)
	}
	pod.CreationTimestamp = metav1.NewTime(created)
	if err := w.c.Update(ctx, pod); err != nil {
		w.t.Fatal(err)
	}
	pod.Status.Phase = phase
	if err := w.c.Status().Update(ctx, pod); err != nil {
		w.t.Fatal(err)
	}
}

// A deployer pod that starts soon after its creation takes the deployment
// from New to Running in one write: Pending, which would be overwritten a
// moment later, is not written (OpenShift allows New→Running), which
// saves a write (Pending at the pod's creation, then Running).
func TestDeployerPodStartingSoonSkipsPending(t *testing.T) {
	w := newPhaseWorld(t)
	res := w.sync()
	if got := w.phase(); got != dcv1.DeploymentPhaseNew {
		t.Errorf("phase after the pod's creation = %s, want New until the pod starts or %s pass", got, pendingGrace)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > pendingGrace {
		t.Errorf("requeue after %s, want within %s (to write Pending if the pod has not started by then)", res.RequeueAfter, pendingGrace)
	}
	// The pod's own events: created, still Pending.
	w.setPod(w.clock.Now(), corev1.PodPending)
	if res := w.sync(); w.phase() != dcv1.DeploymentPhaseNew || res.RequeueAfter <= 0 {
		t.Errorf("a young Pending pod: phase %s, requeue %s; want New and a requeue", w.phase(), res.RequeueAfter)
	}
	w.clock.Step(500 * time.Millisecond)
	w.setPod(w.clock.Now().Add(-500*time.Millisecond), corev1.PodRunning)
	w.sync()
	if got := w.phase(); got != dcv1.DeploymentPhaseRunning {
		t.Errorf("phase = %s, want Running", got)
	}
	if w.patches != 1 {
		t.Errorf("%d writes of the RC from New to Running, want 1", w.patches)
	}
}

// A deployer pod that has not started within pendingGrace (no node, an
// image pull) moves the deployment to Pending, as OpenShift's does.
func TestDeployerPodNotStartingGoesPending(t *testing.T) {
	w := newPhaseWorld(t)
	w.sync()
	created := w.clock.Now()
	w.setPod(created, corev1.PodPending)
	w.clock.Step(pendingGrace)
	if res := w.sync(); res.RequeueAfter != 0 {
		t.Errorf("requeue after %s once the grace has passed, want none", res.RequeueAfter)
	}
	if got := w.phase(); got != dcv1.DeploymentPhasePending {
		t.Errorf("phase = %s, want Pending", got)
	}
	w.setPod(created, corev1.PodRunning)
	w.sync()
	if got := w.phase(); got != dcv1.DeploymentPhaseRunning || w.patches != 2 {
		t.Errorf("phase %s after %d writes, want Running after 2", got, w.patches)
	}
}

// While the deployment stays New waiting for its pod to start, a sync from
// a cache that has not yet seen the new pod (an RC event comes first) reads
// the pod from the API server instead of trying to create it again: a
// create refused with AlreadyExists is a write all the same. Before the fix
// it made two creates.
func TestStaleCacheDoesNotCreateTheDeployerPodTwice(t *testing.T) {
	w := newPhaseWorld(t)
	w.sync()
	w.setPod(w.clock.Now(), corev1.PodPending)
	w.staleCache = true
	res := w.sync()
	if w.creates != 1 {
		t.Errorf("%d creates of the deployer pod, want 1", w.creates)
	}
	if got := w.phase(); got != dcv1.DeploymentPhaseNew || res.RequeueAfter <= 0 {
		t.Errorf("phase %s, requeue %s; want New and a requeue (the pod is young and not started)", got, res.RequeueAfter)
	}
}

// TestSkipCreatedAtRest: of the deployments an informer lists, only those
// finished with nothing to tidy stay out of the deployer controller's
// queue, as the cache holds them or whole.
func TestSkipCreatedAtRest(t *testing.T) {
	dc := testDC(nil)
	testDCOnly := testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Test = true })
	cancelled := func(rc *corev1.ReplicationController) *corev1.ReplicationController {
		rc.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
		return rc
	}
	cases := []struct {
		name string
		rc   *corev1.ReplicationController
		want bool
	}{
		{"complete", rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 3), false},
		{"failed", rcOf(t, dc, 1, dcv1.DeploymentPhaseFailed, 0), false},
		{"failed after a cancel", cancelled(rcOf(t, dc, 1, dcv1.DeploymentPhaseFailed, 0)), false},
		{"new", rcOf(t, dc, 1, dcv1.DeploymentPhaseNew, 0), true},
		{"running", rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 2), true},
		{"complete, cancelled after it succeeded", cancelled(rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 3)), true},
		{"test deployment complete with replicas", rcOf(t, testDCOnly, 1, dcv1.DeploymentPhaseComplete, 3), true},
		{"test deployment scaled down", rcOf(t, testDCOnly, 1, dcv1.DeploymentPhaseComplete, 0), false},
		{"unknown phase", rcOf(t, dc, 1, "Paused", 1), true},
	}
	skip := skipCreatedAtRest()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for form, rc := range map[string]*corev1.ReplicationController{"whole": tc.rc, "cached": cached(t, tc.rc)} {
				if got := skip.Create(event.CreateEvent{Object: rc}); got != tc.want {
					t.Errorf("%s: queued %v, want %v", form, got, tc.want)
				}
			}
		})
	}
}
