package bench

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// TestInFlightDC: the scenario's DC is the benchmark's Rolling DC with one
// canary step, a pause that waits for promotion, and needs no container
// of its own (no hook, not Custom), so that controller-when-possible runs
// it in the controller.
func TestInFlightDC(t *testing.T) {
	dc := inFlightDC("ns", "app-00001", 3)
	if dc.Namespace != "ns" || dc.Name != "app-00001" || dc.Spec.Replicas != 3 {
		t.Fatalf("got %s/%s with %d replicas", dc.Namespace, dc.Name, dc.Spec.Replicas)
	}
	s := dc.Spec.Strategy
	if s.Type != dcv1.DeploymentStrategyTypeRolling || s.RollingParams == nil {
		t.Fatalf("strategy %q, rolling params %v: want Rolling", s.Type, s.RollingParams)
	}
	p := s.RollingParams
	if len(p.Steps) != 1 || p.Steps[0].Pause == nil || p.Steps[0].Pause.Duration != nil {
		t.Fatalf("steps %+v: want one pause without a duration", p.Steps)
	}
	if p.Pre != nil || p.Post != nil || s.CustomParams != nil {
		t.Errorf("the DC has a hook or custom params: it would need a deployer pod")
	}
	if other := newDC("ns", "app-00001", 3); other.Spec.Strategy.RollingParams.Steps != nil {
		t.Errorf("inFlightDC changed the benchmark's other DCs: steps %+v", other.Spec.Strategy.RollingParams.Steps)
	}
}

// TestPausedRollout: only a Running deployment whose progress record
// says it waits is held in a pause.
func TestPausedRollout(t *testing.T) {
	paused := &deployment.Progress{Stage: deployment.StageSteps, Step: 1, Steps: 1, Wait: &deployment.Wait{
		Gate: deployment.StepGate(1), Reason: dcv1.PauseReasonPause, Since: metav1.NewTime(time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC))}}
	atStep := &deployment.Progress{Stage: deployment.StageSteps, Step: 1, Steps: 1}
	cases := []struct {
		name     string
		phase    dcv1.DeploymentPhase
		progress *deployment.Progress // nil for none
		want     bool
	}{
		{"running and paused", dcv1.DeploymentPhaseRunning, paused, true},
		{"running, not paused", dcv1.DeploymentPhaseRunning, atStep, false},
		{"running, no record", dcv1.DeploymentPhaseRunning, nil, false},
		{"pending", dcv1.DeploymentPhasePending, paused, false},
		{"complete with a stale pause", dcv1.DeploymentPhaseComplete, paused, false},
		{"no phase", "", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "app-00000-1", Annotations: map[string]string{}}}
			if c.phase != "" {
				rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(c.phase)
			}
			if c.progress != nil {
				deployment.SetProgress(rc, *c.progress)
			}
			if got := pausedRollout(rc); got != c.want {
				t.Errorf("pausedRollout = %v, want %v", got, c.want)
			}
		})
	}
}

// TestControllerArgs: pod mode is dc-controller's default and needs no
// argument; controller-when-possible names the mode and lets the
// controller hold at least N rollouts, never fewer than its default.
func TestControllerArgs(t *testing.T) {
	cases := []struct {
		mode string
		n    int
		want []string
	}{
		{dcv1.DeployerModePod, 1000, nil},
		{dcv1.DeployerModeControllerWhenPossible, 50, []string{"--deployer-mode=controller-when-possible", "--max-controller-rollouts=50"}},
		{dcv1.DeployerModeControllerWhenPossible, 5000, []string{"--deployer-mode=controller-when-possible", "--max-controller-rollouts=5000"}},
	}
	for _, c := range cases {
		if got := controllerArgs(c.mode, c.n); !slices.Equal(got, c.want) {
			t.Errorf("controllerArgs(%q, %d) = %q, want %q", c.mode, c.n, got, c.want)
		}
	}
}

// TestMedianMemory: each figure is the median of its own readings, and
// the gauge counts as served when any reading had it.
func TestMedianMemory(t *testing.T) {
	readings := []report.ControllerMemory{
		{HeapInuseBytes: 30, RSSBytes: 100, AnonBytes: 60, Goroutines: 9, RolloutsInFlight: 50, GaugeSeen: true},
		{HeapInuseBytes: 10, RSSBytes: 300, AnonBytes: 50, Goroutines: 7, RolloutsInFlight: 50},
		{HeapInuseBytes: 20, RSSBytes: 200, AnonBytes: 40, Goroutines: 8, RolloutsInFlight: 49},
	}
	want := report.ControllerMemory{HeapInuseBytes: 20, RSSBytes: 200, AnonBytes: 50, Goroutines: 8, RolloutsInFlight: 50, GaugeSeen: true}
	if got := medianMemory(readings); got != want {
		t.Errorf("medianMemory = %+v, want %+v", got, want)
	}
	if got := medianMemory(nil); got != (report.ControllerMemory{}) {
		t.Errorf("medianMemory(nil) = %+v, want zero", got)
	}
	// An even count takes the lower middle: a measured sample, not a mean.
	two := []report.ControllerMemory{{HeapInuseBytes: 4}, {HeapInuseBytes: 2}}
	if got := medianMemory(two).HeapInuseBytes; got != 2 {
		t.Errorf("median of 4 and 2 = %v, want 2", got)
	}
}

// TestMemoryOf: the figures come from the metrics the Go collector and
// dc-controller serve, and a controller without the in-flight gauge says
// so rather than reading 0.
func TestMemoryOf(t *testing.T) {
	metrics := map[string]float64{"go_memstats_heap_inuse_bytes": 64 << 20, "go_goroutines": 310, inFlightMetric: 1000}
	got := memoryOf(metrics, 120<<20, 80<<20)
	want := report.ControllerMemory{HeapInuseBytes: 64 << 20, RSSBytes: 120 << 20, AnonBytes: 80 << 20, Goroutines: 310, RolloutsInFlight: 1000, GaugeSeen: true}
	if got != want {
		t.Errorf("memoryOf = %+v, want %+v", got, want)
	}
	delete(metrics, inFlightMetric)
	if got := memoryOf(metrics, 0, 0); got.GaugeSeen {
		t.Errorf("gauge seen in metrics without it: %+v", got)
	}
}
