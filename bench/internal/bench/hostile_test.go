package bench

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/analysis"
)

// TestHostileDCs: the six hostile DCs each have one analysis,
// in its own place, whose query dc-controller's validation refuses at the
// field the report names.
func TestHostileDCs(t *testing.T) {
	want := []struct {
		name     string
		strategy dcv1.DeploymentStrategyType
		field    string
		query    string
	}{
		{"hostile-pre-hook", dcv1.DeploymentStrategyTypeRolling, "spec.strategy.rollingParams.pre.analysis.metrics[0].prometheus.query", nestedRangeQuery},
		{"hostile-step", dcv1.DeploymentStrategyTypeRolling, "spec.strategy.rollingParams.steps[1].analysis.metrics[0].prometheus.query", hugePrintfQuery},
		{"hostile-background", dcv1.DeploymentStrategyTypeRolling, "spec.strategy.rollingParams.analysis.metrics[0].prometheus.query", nestedRangeQuery},
		{"hostile-pre-promotion", dcv1.DeploymentStrategyTypeBlueGreen, "spec.strategy.blueGreenParams.prePromotionAnalysis.metrics[0].prometheus.query", hugePrintfQuery},
		{"hostile-post-promotion", dcv1.DeploymentStrategyTypeBlueGreen, "spec.strategy.blueGreenParams.postPromotionAnalysis.metrics[0].prometheus.query", nestedRangeQuery},
		{"hostile-mid-hook", dcv1.DeploymentStrategyTypeRecreate, "spec.strategy.recreateParams.mid.analysis.metrics[0].prometheus.query", hugePrintfQuery},
	}
	got := hostileDCs("ns", 3)
	if len(got) != len(want) {
		t.Fatalf("%d hostile DCs, want %d", len(got), len(want))
	}
	for i, w := range want {
		t.Run(w.name, func(t *testing.T) {
			h := got[i]
			if h.dc.Name != w.name || h.dc.Namespace != "ns" || h.dc.Spec.Replicas != 3 || h.field != w.field {
				t.Fatalf("got %s/%s (replicas %d) at %q, want ns/%s at %q", h.dc.Namespace, h.dc.Name, h.dc.Spec.Replicas, h.field, w.name, w.field)
			}
			if h.dc.Spec.Strategy.Type != w.strategy {
				t.Errorf("strategy %s, want %s", h.dc.Spec.Strategy.Type, w.strategy)
			}
			places := analysis.Places(&h.dc.Spec.Strategy)
			if len(places) != 1 {
				t.Fatalf("%d analyses, want 1", len(places))
			}
			for _, p := range places {
				if q := p.Analysis.Metrics[0].Prometheus.Query; q != w.query {
					t.Errorf("query %q, want %q", q, w.query)
				}
				errs := analysis.Validate(p.Analysis, p.Path)
				if len(errs) != 1 || errs[0].Field != w.field {
					t.Errorf("validation: %v, want one error at %s", errs, w.field)
				}
			}
		})
	}
}

// TestInvalidAnalysis: only Progressing False with reason InvalidAnalysis
// counts as refused.
func TestInvalidAnalysis(t *testing.T) {
	cond := func(typ dcv1.DeploymentConditionType, status corev1.ConditionStatus, reason string) []dcv1.DeploymentCondition {
		return []dcv1.DeploymentCondition{{Type: typ, Status: status, Reason: reason}}
	}
	cases := []struct {
		name       string
		conditions []dcv1.DeploymentCondition
		want       bool
	}{
		{"no conditions", nil, false},
		{"refused", cond(dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.InvalidAnalysisReason), true},
		{"other reason", cond(dcv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded"), false},
		{"progressing", cond(dcv1.DeploymentProgressing, corev1.ConditionTrue, dcv1.InvalidAnalysisReason), false},
		{"other condition", cond(dcv1.DeploymentAvailable, corev1.ConditionFalse, dcv1.InvalidAnalysisReason), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dc := newDC("ns", "app", 1)
			dc.Status.Conditions = tc.conditions
			if got := invalidAnalysis(dc); got != tc.want {
				t.Errorf("invalidAnalysis = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRefusals: each DC's first refusal is kept, and DCs not refused are
// not counted.
func TestRefusals(t *testing.T) {
	refused := newDC("ns", "a", 1)
	refused.Status.Conditions = []dcv1.DeploymentCondition{{Type: dcv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: dcv1.InvalidAnalysisReason}}
	first, later := time.Unix(100, 0), time.Unix(200, 0)
	f := newRefusals()
	f.observe(newDC("ns", "b", 1), first)
	f.observe(refused, first)
	f.observe(refused, later)
	if at, ok := f.at("a"); !ok || !at.Equal(first) || f.count() != 1 {
		t.Errorf("a refused at %v (%v), %d refused; want %v, 1", at, ok, f.count(), first)
	}
	if _, ok := f.at("b"); ok {
		t.Error("b counted as refused")
	}
}

// TestHostileScenarioOptions: the hostile scenario is known but not run
// by default, and needs at least one rollout.
func TestHostileScenarioOptions(t *testing.T) {
	cases := []struct {
		name      string
		scenarios []string
		rollouts  int
		ok        bool
	}{
		{"default run leaves it out", nil, 10, true},
		{"asked for", []string{ScenarioHostile}, 10, true},
		{"no rollouts", []string{ScenarioHostile}, 0, false},
		{"no rollouts, not run", []string{ScenarioLatency}, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Root, o.BinDir, o.OutDir = "/r", "/r/bin", "/r/out"
			o.Scenarios, o.HostileRollouts = tc.scenarios, tc.rollouts
			err := o.validate()
			if (err == nil) != tc.ok {
				t.Fatalf("validate: %v, want ok %v", err, tc.ok)
			}
			if tc.scenarios == nil && o.runs(ScenarioHostile) {
				t.Error("the default scenarios include hostile")
			}
		})
	}
}
