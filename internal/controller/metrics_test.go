package controller

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// finishedCounts reads the finished-rollouts counter by outcome.
func finishedCounts(t *testing.T, c *prometheus.CounterVec) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, outcome := range []string{"available", "failed", "cancelled"} {
		m := &dto.Metric{}
		if err := c.WithLabelValues(outcome).Write(m); err != nil {
			t.Fatal(err)
		}
		out[outcome] = m.GetCounter().GetValue()
	}
	return out
}

// TestStandbyCountsNoRollouts: every replica of dc-controller caches the
// RCs, but only the leader finishes rollouts. A replica that only sees a
// deployment finish in its cache (a standby: another replica wrote the
// phase) must not count it, or a sum over the pods counts it twice.
func TestStandbyCountsNoRollouts(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	informers := &informertest.FakeInformers{Scheme: scheme}
	c, err := newMetricsCollector(ctx, informers, clocktesting.NewFakePassiveClock(time.Now()), make(chan struct{}))
	if err != nil {
		t.Fatal(err)
	}
	informer, err := informers.FakeInformerFor(ctx, &corev1.ReplicationController{})
	if err != nil {
		t.Fatal(err)
	}
	dc := testDC(nil)
	informer.Update(rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 0), rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 4))
	informer.Update(rcOf(t, dc, 2, dcv1.DeploymentPhaseRunning, 0), rcOf(t, dc, 2, dcv1.DeploymentPhaseFailed, 0))
	for outcome, n := range finishedCounts(t, c.finished) {
		if n != 0 {
			t.Errorf("%s = %v on a replica that wrote no phase, want 0", outcome, n)
		}
	}
}

// TestLeaderCountsThePhasesItWrites: the deployer controller counts a
// rollout once, when its write moves the deployment to Complete or Failed.
func TestLeaderCountsThePhasesItWrites(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	dc := testDC(nil)
	cancelled := func(rc *corev1.ReplicationController) *corev1.ReplicationController {
		rc.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
		return rc
	}
	cases := []struct {
		name   string
		stored *corev1.ReplicationController // as the API server has it
		cached *corev1.ReplicationController // what the controller decides from
		to     dcv1.DeploymentPhase
		want   map[string]float64
	}{
		{"running to complete", rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 0), nil, dcv1.DeploymentPhaseComplete,
			map[string]float64{"available": 1, "failed": 0, "cancelled": 0}},
		{"pending to failed", rcOf(t, dc, 1, dcv1.DeploymentPhasePending, 0), nil, dcv1.DeploymentPhaseFailed,
			map[string]float64{"available": 0, "failed": 1, "cancelled": 0}},
		{"cancelled", cancelled(rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 0)), nil, dcv1.DeploymentPhaseFailed,
			map[string]float64{"available": 0, "failed": 0, "cancelled": 1}},
		{"still running", rcOf(t, dc, 1, dcv1.DeploymentPhasePending, 0), nil, dcv1.DeploymentPhaseRunning,
			map[string]float64{"available": 0, "failed": 0, "cancelled": 0}},
		{"complete already", rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 3), nil, dcv1.DeploymentPhaseComplete,
			map[string]float64{"available": 0, "failed": 0, "cancelled": 0}},
		{"moved under us: a stale copy writes nothing", rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 3),
			rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 0), dcv1.DeploymentPhaseFailed,
			map[string]float64{"available": 0, "failed": 0, "cancelled": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.stored).Build()
			rc := tc.cached
			if rc == nil {
				rc = tc.stored.DeepCopy()
			}
			r := &DeployerReconciler{Client: c, Recorder: events.NewFakeRecorder(10),
				finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "finished"}, []string{"phase"})}
			_ = r.setPhase(context.Background(), rc, tc.to, "")
			got := finishedCounts(t, r.finished)
			for outcome, want := range tc.want {
				if got[outcome] != want {
					t.Errorf("%s = %v, want %v", outcome, got[outcome], want)
				}
			}
		})
	}
}

// TestOnlyTheLeaderReportsGauges: a standby replica's cache holds the same
// rollouts as the leader's; it reports none of them, so that an alert or a
// sum over the pods sees each rollout once.
func TestOnlyTheLeaderReportsGauges(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	dc := testDC(nil)
	// Informers that are never started: their stores are what the cache
	// would hold.
	store := func(gvk schema.GroupVersionKind, objs ...any) toolscache.SharedIndexInformer {
		obj, err := scheme.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		inf := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{}, obj, 0, toolscache.Indexers{})
		for _, o := range objs {
			if err := inf.GetStore().Add(o); err != nil {
				t.Fatal(err)
			}
		}
		return inf
	}
	informers := &informertest.FakeInformers{Scheme: scheme, InformersByGVK: map[schema.GroupVersionKind]toolscache.SharedIndexInformer{
		corev1.SchemeGroupVersion.WithKind("ReplicationController"): store(corev1.SchemeGroupVersion.WithKind("ReplicationController"),
			rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 1)),
		dcv1.GroupVersion.WithKind("DeploymentConfig"): store(dcv1.GroupVersion.WithKind("DeploymentConfig"), dc),
	}}
	elected := make(chan struct{})
	c, err := newMetricsCollector(context.Background(), informers, clocktesting.NewFakePassiveClock(time.Now()), elected)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	names := func() map[string]bool {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, f := range families {
			out[f.GetName()] = true
		}
		return out
	}
	gauges := []string{"deployconfig_active_rollouts_duration_seconds", "deployconfig_strategy_total"}
	standby := names()
	for _, g := range gauges {
		if standby[g] {
			t.Errorf("a standby reports %s", g)
		}
	}
	if !standby["deployconfig_complete_rollouts_total"] {
		t.Error("a standby does not report deployconfig_complete_rollouts_total (at 0)")
	}
	close(elected)
	leader := names()
	for _, g := range gauges {
		if !leader[g] {
			t.Errorf("the leader does not report %s", g)
		}
	}
}
