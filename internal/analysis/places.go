package analysis

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Place is one analysis of a strategy and the path that names it in
// errors, e.g. spec.strategy.rollingParams.steps[1].analysis.
type Place struct {
	Path     *field.Path
	Analysis *dcv1.Analysis
	// Hook is true for a lifecycle hook's analysis, which the hook runner
	// runs under the hook's failurePolicy; the others are the strategy's
	// own gates (canary steps, the background analysis, blue-green's pre-
	// and postPromotionAnalysis).
	Hook bool
}

// Places lists every analysis a strategy sets: its hooks', its canary
// steps', the background analysis and blue-green's pre- and
// postPromotionAnalysis. It is the one list of where an analysis can be,
// for whoever validates them.
func Places(s *dcv1.DeploymentStrategy) []Place {
	path := field.NewPath("spec", "strategy")
	var out []Place
	add := func(a *dcv1.Analysis, p *field.Path, hook bool) {
		if a != nil {
			out = append(out, Place{Path: p, Analysis: a, Hook: hook})
		}
	}
	hook := func(h *dcv1.LifecycleHook, p *field.Path) {
		if h != nil {
			add(h.Analysis, p.Child("analysis"), true)
		}
	}
	if p := s.RecreateParams; p != nil {
		rp := path.Child("recreateParams")
		hook(p.Pre, rp.Child("pre"))
		hook(p.Mid, rp.Child("mid"))
		hook(p.Post, rp.Child("post"))
	}
	if p := s.RollingParams; p != nil {
		rp := path.Child("rollingParams")
		hook(p.Pre, rp.Child("pre"))
		hook(p.Post, rp.Child("post"))
		for i, step := range p.Steps {
			add(step.Analysis, rp.Child("steps").Index(i).Child("analysis"), false)
		}
		add(p.Analysis, rp.Child("analysis"), false)
	}
	if p := s.BlueGreenParams; p != nil {
		bp := path.Child("blueGreenParams")
		add(p.PrePromotionAnalysis, bp.Child("prePromotionAnalysis"), false)
		add(p.PostPromotionAnalysis, bp.Child("postPromotionAnalysis"), false)
	}
	return out
}
