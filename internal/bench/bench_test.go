package bench

import (
	"io"
	"reflect"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployconfig/deployconfig/internal/bench/audit"
	"github.com/deployconfig/deployconfig/internal/bench/report"
)

func TestDeploymentComplete(t *testing.T) {
	three := int32(3)
	tests := []struct {
		name   string
		gen    int64
		status appsv1.DeploymentStatus
		want   bool
	}{
		{"done", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}, true},
		{"change not seen yet", 2, appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}, false},
		{"old pods left", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 3, AvailableReplicas: 3}, false},
		{"not all available", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 2}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: tt.gen}, Spec: appsv1.DeploymentSpec{Replicas: &three}, Status: tt.status}
			if got := deploymentComplete(d); got != tt.want {
				t.Errorf("deploymentComplete = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTracker(t *testing.T) {
	tr := newTracker()
	tr.expect(2)
	tr.observe("a", 1, false) // an older version: ignored
	tr.observe("a", 2, false)
	tr.observe("b", 2, true)
	tr.observe("b", 2, false) // already ended
	if n, all := tr.ended("a", "b", "c"); n != 2 || all {
		t.Errorf("ended = %d, %v; want 2, false", n, all)
	}
	done, failed := tr.results()
	if len(done) != 1 || len(failed) != 1 {
		t.Errorf("done %v, failed %v", done, failed)
	}
	tr.expect(3)
	if n, _ := tr.ended("a", "b"); n != 0 {
		t.Errorf("a new phase starts empty, got %d ended", n)
	}
}

func TestCurve(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	done := map[string]time.Time{
		"b": start.Add(3 * time.Second),
		"a": start.Add(time.Second),
		"c": start.Add(2 * time.Second),
	}
	want := []report.Point{{Seconds: 1, Count: 1}, {Seconds: 2, Count: 2}, {Seconds: 3, Count: 3}}
	if got := curve(start, done); !reflect.DeepEqual(got, want) {
		t.Errorf("curve = %v, want %v", got, want)
	}
}

func TestPhaseSeconds(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &phaseRecord{Start: start,
		Done:   map[string]time.Time{"a": start.Add(5 * time.Second)},
		Failed: map[string]time.Time{"b": start.Add(7 * time.Second)}}
	if got := p.Seconds(); got != 7 {
		t.Errorf("Seconds = %v, want 7 (a failed rollout ends the phase too)", got)
	}
	if got := (&phaseRecord{Start: start}).Seconds(); got != 0 {
		t.Errorf("empty phase: %v", got)
	}
}

func TestSameTemplateForBothSystems(t *testing.T) {
	dc := newDC("ns", "app-00001", 3)
	dep := newDeployment("ns", "app-00001", 3)
	if !reflect.DeepEqual(*dc.Spec.Template, dep.Spec.Template) {
		t.Errorf("templates differ:\nDC:         %+v\nDeployment: %+v", dc.Spec.Template, dep.Spec.Template)
	}
	if *dc.Spec.Strategy.RollingParams.MaxSurge != *dep.Spec.Strategy.RollingUpdate.MaxSurge ||
		*dc.Spec.Strategy.RollingParams.MaxUnavailable != *dep.Spec.Strategy.RollingUpdate.MaxUnavailable {
		t.Error("rolling parameters differ")
	}
	data, err := templateChange(2).Data(nil)
	if err != nil || string(data) != `{"spec":{"template":{"metadata":{"annotations":{"bench.deployconfig.io/revision":"2"}}}}}` {
		t.Errorf("template change patch = %s, %v", data, err)
	}
}

func TestOptions(t *testing.T) {
	o := DefaultOptions()
	o.Root, o.BinDir, o.OutDir = "/r", "/r/bin", "/r/out"
	o.Sizes = []int{1000, 200}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Sizes, []int{200, 1000}) || !reflect.DeepEqual(o.Scenarios, AllScenarios()) {
		t.Errorf("validate: sizes %v, scenarios %v", o.Sizes, o.Scenarios)
	}
	bad := o
	bad.Scenarios = []string{"nope"}
	if err := bad.validate(); err == nil {
		t.Error("unknown scenario accepted")
	}
	bad = o
	bad.ProbeInterval = 0
	if err := bad.validate(); err == nil {
		t.Error("probes without an interval accepted")
	}
	bad.Probes = 0
	if err := bad.validate(); err != nil {
		t.Errorf("no probes need no interval: %v", err)
	}
	q := QuickOptions(DefaultOptions())
	if !q.Quick || q.Sizes[0] >= 200 || q.FootprintSizes[len(q.FootprintSizes)-1] >= 1000 {
		t.Errorf("quick options are not small: %+v", q)
	}
}

func TestTrackerStarted(t *testing.T) {
	tests := []struct {
		name      string
		events    func(tr *tracker)
		wantCount int
		wantAll   bool
	}{
		{"nothing seen", func(*tracker) {}, 0, false},
		{"an older version's start is ignored", func(tr *tracker) { tr.begin("a", 1) }, 0, false},
		{"started", func(tr *tracker) { tr.begin("a", 2); tr.begin("a", 2) }, 1, false},
		{"ended without a start seen", func(tr *tracker) { tr.begin("a", 2); tr.observe("b", 2, true) }, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTracker()
			tr.expect(2)
			tt.events(tr)
			if n, all := tr.begun("a", "b"); n != tt.wantCount || all != tt.wantAll {
				t.Errorf("begun = %d, %v; want %d, %v", n, all, tt.wantCount, tt.wantAll)
			}
		})
	}
}

func TestTrackerWaitStarted(t *testing.T) {
	tr := newTracker()
	tr.expect(1)
	errs := make(chan error, 1)
	go func() { errs <- tr.waitStarted(t.Context(), time.Minute, io.Discard, "test", "a", "b") }()
	tr.begin("a", 1)
	tr.observe("b", 1, false)
	select {
	case err := <-errs:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("waitStarted did not return once both had started")
	}
	if err := tr.waitStarted(t.Context(), time.Millisecond, io.Discard, "test", "c"); err == nil {
		t.Error("waitStarted for a rollout that never starts returned no error")
	}
}

func TestProbeNames(t *testing.T) {
	first, second := probeNames(0, 2), probeNames(1, 2)
	if !reflect.DeepEqual(first, []string{"probe1-00000", "probe1-00001"}) || !reflect.DeepEqual(second, []string{"probe2-00000", "probe2-00001"}) {
		t.Errorf("probe names %v, %v", first, second)
	}
	for _, name := range append(first, second...) {
		if slices.Contains(objectNames(100), name) {
			t.Errorf("probe %s has a throughput object's name", name)
		}
	}
}

// auditEvent is a successful request as the audit log records it.
func auditEvent(agent, verb, resource, namespace, name string, at time.Time) audit.Event {
	return audit.Event{Stage: "ResponseComplete", Verb: verb, UserAgent: agent, Completed: at,
		ObjectRef: &audit.ObjectRef{Resource: resource, Namespace: namespace, Name: name}, ResponseStatus: &audit.Status{Code: 200}}
}

func TestLatencyOfProbes(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	l := newLedger()
	for _, e := range []audit.Event{
		auditEvent("dc-bench", "patch", "deploymentconfigs", "probes", "probe1-00000", at(1)),
		auditEvent("dc-controller", "create", "pods", "probes", "probe1-00000-2-deploy", at(1.5)),
		auditEvent("dc-bench", "patch", "deploymentconfigs", "probes", "probe1-00001", at(2)),
		auditEvent("dc-controller", "create", "pods", "probes", "probe1-00001-2-deploy", at(2.25)),
		// Another namespace's pod of the same name is not the probe's.
		auditEvent("dc-controller", "create", "pods", "elsewhere", "probe1-00001-2-deploy", at(2.1)),
	} {
		l.add(e)
	}
	p := &phaseRecord{System: report.SystemDC, Phase: probePhase(report.PhaseChange), N: 2, Namespace: "probes", Version: probeVersion,
		TriggerVerb: "patch", Names: []string{"probe1-00000", "probe1-00001"}, InFlight: 200, Probe: true, StillInFlight: 190,
		Load:  probeLoad(200, 190, report.PhaseChange),
		Done:  map[string]time.Time{"probe1-00000": at(11), "probe1-00001": at(22)},
		Start: at(1)}
	got := (&runner{}).latencyOf(l, p)
	if !got.Probes || got.InFlight != 200 || got.StillInFlight != 190 {
		t.Errorf("probe row %+v", got)
	}
	if got.ToDeployerPod.Count != 2 || got.ToDeployerPod.Max != 0.5 || got.ToDeployerPod.Min != 0.25 {
		t.Errorf("to deployer pod %+v, want 0.25 and 0.5", got.ToDeployerPod)
	}
	if got.ToComplete.Max != 20 || got.ToComplete.Min != 10 {
		t.Errorf("to complete %+v, want 10 and 20", got.ToComplete)
	}
	if want := "probes while 200 in flight (template change; ≥ 190 still in flight at each probe)"; got.Load != want {
		t.Errorf("load %q, want %q", got.Load, want)
	}
}

func TestFloorsCountProbes(t *testing.T) {
	tests := []struct {
		name       string
		probes     *phaseRecord
		wantPods   int
		wantProbes int
	}{
		{"no probes", nil, 200 * 3 * 2, 0},
		{"probes of the phase", &phaseRecord{System: report.SystemDC, Phase: probePhase(report.PhaseChange), InFlight: 200, Probe: true,
			Triggers: map[string]time.Time{"probe2-00000": {}, "probe2-00001": {}}}, 200*3*2 + 2*3*2, 2},
		{"probes of another size", &phaseRecord{System: report.SystemDC, Phase: probePhase(report.PhaseChange), InFlight: 400, Probe: true,
			Triggers: map[string]time.Time{"probe2-00000": {}}}, 200 * 3 * 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &runner{o: Options{Sizes: []int{200}, Replicas: 3}}
			r.records = []*phaseRecord{{System: report.SystemDC, Phase: report.PhaseChange, N: 200}}
			if tt.probes != nil {
				r.records = append(r.records, tt.probes)
			}
			floors := r.floors(newLedger(make([]audit.Window, len(r.records))...))
			if len(floors) != 1 || floors[0].PodWrites != tt.wantPods || floors[0].Probes != tt.wantProbes {
				t.Errorf("floors %+v, want %d pod writes with %d probes", floors, tt.wantPods, tt.wantProbes)
			}
		})
	}
}
