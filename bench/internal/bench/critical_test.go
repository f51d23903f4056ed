package bench

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
)

// A pod-mode DC rollout's critical path from the audit log and the watch:
// the deployer pod's create, its binding, its kubelet's second status
// write (Running), then the scales and completion the watch saw.
func TestCriticalPathsFromAudit(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	binding := func(name string, s float64) audit.Event {
		e := auditEvent("kube-scheduler/v1.37", "create", "pods", "ns", name, at(s))
		e.ObjectRef.Subresource = "binding"
		return e
	}
	l := newLedger()
	for _, e := range []audit.Event{
		auditEvent("dc-bench", "patch", "deploymentconfigs", "ns", "web", at(1)),
		auditEvent("dc-controller", "create", "pods", "ns", "web-2-deploy", at(1.5)),
		binding("web-2-deploy", 2),
		// The kubelet's status writes arrive out of order in the log:
		// ContainerCreating at 2.5, Running at 3, Succeeded at 9.
		statusWrite("ns", "web-2-deploy", at(9)),
		statusWrite("ns", "web-2-deploy", at(2.5)),
		statusWrite("ns", "web-2-deploy", at(3)),
		// An app pod's binding is not the deployer's.
		binding("web-2-abcde", 2.2),
	} {
		l.add(e)
	}
	p := &phaseRecord{System: report.SystemDC, Mode: ModePod, Phase: report.PhaseChange, N: 1, Namespace: "ns", Version: 2,
		TriggerVerb: "patch", Names: []string{"web"}, Repeat: 1,
		Steps: map[string]map[string]time.Time{"web": {report.StepFirstScale: at(4), report.StepLastScale: at(8)}},
		Done:  map[string]time.Time{"web": at(10)}}
	steps := l.rolloutSteps(p, "web")
	want := map[string]float64{
		report.StepTrigger: 0, report.StepPodCreated: 0.5, report.StepScheduled: 1, report.StepPodRunning: 2,
		report.StepFirstScale: 3, report.StepLastScale: 7, report.StepComplete: 9,
	}
	for step, s := range want {
		if got, ok := steps[step]; !ok || got != s {
			t.Errorf("%s at %v (seen %v), want %v", step, got, ok, s)
		}
	}
	r := &runner{records: []*phaseRecord{p, {System: report.SystemDC, Mode: ModePod, Phase: probePhase(report.PhaseChange), Probe: true, Repeat: 1}}}
	paths := r.criticalPaths(l)
	if len(paths) != 1 {
		t.Fatalf("%d paths, want the throughput phase's alone", len(paths))
	}
	c := paths[0]
	if c.Mode != ModePod || c.Rollouts != 1 || len(c.Segments) != 6 || c.Total.P50 != 9 {
		t.Errorf("path %+v", c)
	}
	if b, _ := c.Bound(); b.From != report.StepFirstScale {
		t.Errorf("bound %+v, want first → last scale", b)
	}
}

// The tracker notes the steps the watch sees while a rollout is in
// flight: the first scale once, the last scale each time, nothing after
// the rollout ended or before a phase began.
func TestTrackerSteps(t *testing.T) {
	tr := newTracker()
	tr.scaled("web")
	if len(tr.stepsSeen()) != 0 {
		t.Error("a step was noted before any phase")
	}
	tr.expect(2)
	tr.step("web", report.StepPhaseRunning)
	tr.scaled("web")
	first := tr.stepsSeen()["web"][report.StepFirstScale]
	tr.scaled("web")
	seen := tr.stepsSeen()["web"]
	if !seen[report.StepFirstScale].Equal(first) || seen[report.StepLastScale].Before(first) {
		t.Errorf("first %v last %v: want the first kept and the last moved on", seen[report.StepFirstScale], seen[report.StepLastScale])
	}
	tr.observe("web", 2, false)
	last := seen[report.StepLastScale]
	tr.scaled("web")
	if got := tr.stepsSeen()["web"][report.StepLastScale]; !got.Equal(last) {
		t.Error("a scale after completion moved the last scale")
	}
	tr.expect(3)
	if len(tr.stepsSeen()) != 0 {
		t.Error("a new phase kept the previous one's steps")
	}
}

// Scales are changes of spec.replicas of an RC of the DC; a new RC made
// with 0 replicas is none.
func TestScaleHandler(t *testing.T) {
	tr := newTracker()
	tr.expect(2)
	h := scaleHandler(tr, rcOwner, "")
	rc := func(replicas int32) *corev1.ReplicationController {
		return &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Labels: map[string]string{dcv1.DeploymentConfigLabel: "web"}},
			Spec: corev1.ReplicationControllerSpec{Replicas: &replicas}}
	}
	h.OnAdd(rc(0), false)
	h.OnUpdate(rc(0), rc(0))
	if len(tr.stepsSeen()) != 0 {
		t.Errorf("steps %v without a scale", tr.stepsSeen())
	}
	h.OnUpdate(rc(0), rc(1))
	if _, ok := tr.stepsSeen()["web"][report.StepFirstScale]; !ok {
		t.Error("the scale 0 → 1 was not noted")
	}
}

// Three systems (DCs in two modes and the Deployment) rotate, so that each
// goes first once in three repeats.
func TestRepeatOrderRotates(t *testing.T) {
	three := []system{dcSystemIn(ModePod), dcSystemIn(ModeController), deploymentSystem()}
	var firsts []string
	for k := 1; k <= 3; k++ {
		order := repeatOrder(three, k)
		if len(order) != 3 {
			t.Fatalf("repeat %d: %d systems", k, len(order))
		}
		firsts = append(firsts, order[0].label())
	}
	if want := []string{"DC (pod)", "DC (controller)", report.SystemDeployment}; !slices.Equal(firsts, want) {
		t.Errorf("first per repeat %v, want %v", firsts, want)
	}
	if three[0].slug() != report.SystemDC || !strings.HasSuffix(three[1].slug(), "-controller") {
		t.Errorf("namespaces: pod mode %q, controller mode %q", three[0].slug(), three[1].slug())
	}
}

// A run of pod mode alone passes dc-controller no --deployer-mode, so that
// it works with one that predates the flag; a run of both names each.
func TestDeployerModeArgs(t *testing.T) {
	alone := Options{DCModes: []string{ModePod}}
	if args := alone.deployerModeArgs(ModePod); len(args) != 0 {
		t.Errorf("pod mode alone: %v", args)
	}
	both := Options{DCModes: []string{ModePod, ModeController}}
	if got := both.deployerModeArgs(ModePod); !slices.Equal(got, []string{"--deployer-mode=" + dcv1.DeployerModePod}) {
		t.Errorf("pod mode of two: %v", got)
	}
	if got := both.deployerModeArgs(ModeController); !slices.Equal(got, []string{"--deployer-mode=" + dcv1.DeployerModeControllerWhenPossible}) {
		t.Errorf("controller mode: %v", got)
	}
	for _, bad := range [][]string{{"pods"}, {ModePod, ModePod}} {
		o := Options{DCModes: bad}
		if err := o.validateModes(); err == nil {
			t.Errorf("modes %v accepted", bad)
		}
	}
	o := Options{}
	if err := o.validateModes(); err != nil || !slices.Equal(o.DCModes, []string{ModePod}) {
		t.Errorf("default modes %v, %v; want pod", o.DCModes, err)
	}
}
