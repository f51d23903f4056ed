package controller

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/analysis"
)

// InvalidAnalysisError is why a rollout did not start: an analysis of the
// strategy that the API server could not check (a CEL condition that does
// not compile, a query template that does not render). Its message names
// each field.
type InvalidAnalysisError struct {
	Version int64
	Errs    field.ErrorList
}

// Error names the fields and what is wrong with them, on one line.
func (e *InvalidAnalysisError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, fe := range e.Errs {
		msgs[i] = strings.Join(strings.Fields(fe.Error()), " ")
	}
	return fmt.Sprintf("invalid analysis, version %d is not rolled out: %s", e.Version, strings.Join(msgs, "; "))
}

// ConditionReason is the reason of the Progressing condition it causes.
func (e *InvalidAnalysisError) ConditionReason() string {
	return dcv1.InvalidAnalysisReason
}

// refuseInvalidAnalyses checks every analysis of the strategy before a
// deployment is created; an invalid one stops the rollout before it
// starts, with a Warning event naming the field.
func (r *DeploymentConfigReconciler) refuseInvalidAnalyses(dc *dcv1.DeploymentConfig) error {
	errs := analysisErrors(&dc.Spec.Strategy)
	if len(errs) == 0 {
		return nil
	}
	err := &InvalidAnalysisError{Version: dc.Status.LatestVersion, Errs: errs}
	r.Recorder.Eventf(dc, nil, corev1.EventTypeWarning, dcv1.InvalidAnalysisReason, "Create", "Couldn't deploy version %d: %v", dc.Status.LatestVersion, err)
	return err
}

// analysisErrors validates every analysis of a strategy: the hooks', the
// canary steps' and blue-green's prePromotionAnalysis.
func analysisErrors(s *dcv1.DeploymentStrategy) field.ErrorList {
	path := field.NewPath("spec", "strategy")
	var errs field.ErrorList
	hook := func(h *dcv1.LifecycleHook, p *field.Path) {
		if h != nil {
			errs = append(errs, analysis.Validate(h.Analysis, p.Child("analysis"))...)
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
			errs = append(errs, analysis.Validate(step.Analysis, rp.Child("steps").Index(i).Child("analysis"))...)
		}
	}
	if p := s.BlueGreenParams; p != nil {
		errs = append(errs, analysis.Validate(p.PrePromotionAnalysis, path.Child("blueGreenParams", "prePromotionAnalysis"))...)
	}
	return errs
}
