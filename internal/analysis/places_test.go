package analysis

import (
	"slices"
	"testing"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// TestPlaces: every place an analysis can be is listed, in the order the
// errors name them, with hooks told from the strategy's own gates.
func TestPlaces(t *testing.T) {
	a := &dcv1.Analysis{}
	hook := &dcv1.LifecycleHook{Analysis: a}
	strategies := map[string]*dcv1.DeploymentStrategy{
		"recreate": {RecreateParams: &dcv1.RecreateDeploymentStrategyParams{Pre: hook, Mid: hook, Post: &dcv1.LifecycleHook{}}},
		"rolling": {RollingParams: &dcv1.RollingDeploymentStrategyParams{Pre: hook, Post: hook,
			Steps: []dcv1.RollingStep{{}, {Analysis: a}}, Analysis: a}},
		"blue-green": {BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{PrePromotionAnalysis: a, PostPromotionAnalysis: a}},
	}
	want := map[string][]string{
		"recreate": {"hook spec.strategy.recreateParams.pre.analysis", "hook spec.strategy.recreateParams.mid.analysis"},
		"rolling": {"hook spec.strategy.rollingParams.pre.analysis", "hook spec.strategy.rollingParams.post.analysis",
			"gate spec.strategy.rollingParams.steps[1].analysis", "gate spec.strategy.rollingParams.analysis"},
		"blue-green": {"gate spec.strategy.blueGreenParams.prePromotionAnalysis", "gate spec.strategy.blueGreenParams.postPromotionAnalysis"},
	}
	for name, s := range strategies {
		var got []string
		for _, p := range Places(s) {
			kind := "gate"
			if p.Hook {
				kind = "hook"
			}
			got = append(got, kind+" "+p.Path.String())
		}
		if !slices.Equal(got, want[name]) {
			t.Errorf("%s: %q, want %q", name, got, want[name])
		}
	}
}
