package bench

import (
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	q := QuickOptions(DefaultOptions())
	if !q.Quick || q.Sizes[0] >= 200 || q.FootprintSizes[len(q.FootprintSizes)-1] >= 1000 {
		t.Errorf("quick options are not small: %+v", q)
	}
}
