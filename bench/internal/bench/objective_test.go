package bench

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
)

// A DC's application pod names its DC and RC; deployer and hook pods,
// and pods of no DC, are not a rollout's new pods.
func TestDCPodOf(t *testing.T) {
	pod := func(labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
	}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		dc      string
		version int64
		ok      bool
	}{
		{"application pod", pod(map[string]string{dcv1.DeploymentConfigSelectorLabel: "dc-00001", dcv1.DeploymentSelectorLabel: "dc-00001-2"}), "dc-00001", 2, true},
		{"deployer pod", pod(map[string]string{dcv1.DeploymentConfigSelectorLabel: "dc-00001", dcv1.DeploymentSelectorLabel: "dc-00001-2",
			dcv1.DeployerPodForDeploymentLabel: "dc-00001-2"}), "", 0, false},
		{"no DC", pod(map[string]string{dcv1.DeploymentSelectorLabel: "dc-00001-2"}), "", 0, false},
		{"RC of another DC", pod(map[string]string{dcv1.DeploymentConfigSelectorLabel: "dc-00001", dcv1.DeploymentSelectorLabel: "other-2"}), "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dc, version, ok := dcPodOf(tc.pod)
			if ok != tc.ok || ok && (dc != tc.dc || version != tc.version) {
				t.Errorf("dcPodOf = %q %d %v, want %q %d %v", dc, version, ok, tc.dc, tc.version, tc.ok)
			}
		})
	}
}

// The first new pod of a rollout is the first pod of the phase's version
// the watch saw: later pods, pods of other versions and pods after the
// rollout ended do not move it.
func TestTrackerFirstPod(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	tr := newTracker()
	tr.firstPod("a", 2, at(1)) // no phase under way
	tr.expect(2)
	tr.firstPod("a", 1, at(2)) // the old version's pod
	tr.firstPod("a", 2, at(3))
	tr.firstPod("a", 2, at(4))
	tr.observe("b", 2, false)
	tr.firstPod("b", 2, at(5)) // after b ended
	steps := tr.stepsSeen()
	if got := steps["a"][report.StepFirstPod]; !got.Equal(at(3)) {
		t.Errorf("a's first new pod at %v, want %v", got, at(3))
	}
	if _, ok := steps["b"][report.StepFirstPod]; ok {
		t.Error("a pod seen after b's rollout ended counted")
	}
}

// A Deployment's pod counts for the rollout of its ReplicaSet's revision,
// with the time the pod was seen, whichever of the two watches delivered
// first.
func TestRSPods(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	yes := true
	rs := func(name, deployment, revision string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations:     map[string]string{deploymentRevisionAnnotation: revision},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: deployment, Controller: &yes}}}}
	}
	pod := func(rs string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: rs, Controller: &yes}}}}
	}
	for _, tc := range []struct {
		name  string
		steps func(p *rsPods)
		want  map[string]float64
	}{
		{"ReplicaSet first", func(p *rsPods) {
			p.replicaSet(rs("d1-new", "d1", "2"))
			p.pod(pod("d1-new"), at(3))
			p.pod(pod("d1-new"), at(4))
		}, map[string]float64{"d1": 3}},
		{"pod first", func(p *rsPods) {
			p.pod(pod("d1-new"), at(3))
			p.pod(pod("d1-new"), at(4))
			p.replicaSet(rs("d1-new", "d1", "2"))
		}, map[string]float64{"d1": 3}},
		{"the old revision's pods", func(p *rsPods) {
			p.replicaSet(rs("d1-old", "d1", "1"))
			p.pod(pod("d1-old"), at(1))
			p.pod(pod("d1-new"), at(5))
			p.replicaSet(rs("d1-new", "d1", "2"))
		}, map[string]float64{"d1": 5}},
		{"no revision yet", func(p *rsPods) {
			p.replicaSet(rs("d1-new", "d1", ""))
			p.pod(pod("d1-new"), at(3))
		}, map[string]float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracker()
			tr.expect(2)
			tc.steps(newRSPods(tr))
			steps := tr.stepsSeen()
			for name, s := range tc.want {
				if got := steps[name][report.StepFirstPod]; !got.Equal(at(s)) {
					t.Errorf("%s's first new pod at %v, want %v", name, got, at(s))
				}
			}
			for name, st := range steps {
				if _, ok := tc.want[name]; !ok && !st[report.StepFirstPod].IsZero() {
					t.Errorf("%s has a first new pod, want none", name)
				}
			}
		})
	}
}

// The objective pools the throughput phases triggered at once over the
// repeats, per size, phase, system and mode; probes and idle rollouts
// are not among them, and the latency rows get → first new pod too.
func TestObjectiveFromPhases(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	l := newLedger()
	for _, e := range []audit.Event{
		auditEvent("dc-bench", "patch", "deploymentconfigs", "r1", "dc-00000", at(1)),
		auditEvent("dc-bench", "patch", "deploymentconfigs", "r2", "dc-00000", at(2)),
		auditEvent("dc-bench", "patch", "deploymentconfigs", "probes", "probe1-00000", at(1)),
	} {
		l.add(e)
	}
	phase := func(ns string, repeat int, firstPod, done float64) *phaseRecord {
		return &phaseRecord{System: report.SystemDC, Mode: ModeController, Phase: report.PhaseChange, N: 1, Namespace: ns, Version: 2,
			TriggerVerb: "patch", Names: []string{"dc-00000"}, Repeat: repeat, InFlight: 1,
			Steps: map[string]map[string]time.Time{"dc-00000": {report.StepFirstPod: at(firstPod)}},
			Done:  map[string]time.Time{"dc-00000": at(done)}}
	}
	probe := phase("probes", 1, 2, 3)
	probe.Probe, probe.Phase, probe.Names = true, probePhase(report.PhaseChange), []string{"probe1-00000"}
	r := &runner{records: []*phaseRecord{phase("r1", 1, 1.5, 4), phase("r2", 2, 3, 7), probe}}
	got := r.objective(l)
	if len(got) != 1 {
		t.Fatalf("%d objective rows, want 1 (the probes are not among them): %+v", len(got), got)
	}
	o := got[0]
	want := report.ObjectiveKey{Where: report.WhereKwok, N: 1, Phase: report.PhaseChange, System: report.SystemDC, Mode: ModeController}
	if o.ObjectiveKey != want || o.Phases != 2 {
		t.Errorf("row %+v, want %+v over 2 phases", o.ObjectiveKey, want)
	}
	if o.FirstPod.Count != 2 || o.FirstPod.Min != 0.5 || o.FirstPod.Max != 1 || o.Complete.Min != 3 || o.Complete.Max != 5 {
		t.Errorf("first pod %+v, complete %+v; want 0.5 and 1, 3 and 5", o.FirstPod, o.Complete)
	}
	lat := r.latencyOf(l, r.records[0])
	if lat.ToFirstPod.Count != 1 || lat.ToFirstPod.P50 != 0.5 {
		t.Errorf("latency row's → first new pod %+v, want 0.5", lat.ToFirstPod)
	}
}
