package analysis

import (
	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Validate checks what the API server cannot: that every condition
// compiles as a CEL bool expression and every query template renders (with
// SampleVars), and repeats the checks of the CRD that a Run depends on, for
// an RC created before those rules. Each error names its field under path,
// e.g. spec.strategy.rollingParams.pre.analysis.metrics[0].successCondition.
func Validate(spec *dcv1.Analysis, path *field.Path) field.ErrorList {
	if spec == nil {
		return nil
	}
	var errs field.ErrorList
	if len(spec.Metrics) == 0 {
		errs = append(errs, field.Required(path.Child("metrics"), "an analysis needs at least one metric"))
	}
	env, err := newEnv()
	if err != nil {
		return append(errs, field.InternalError(path, err))
	}
	for i, m := range spec.Metrics {
		errs = append(errs, validateMetric(env, m, path.Child("metrics").Index(i))...)
	}
	return errs
}

// validateMetric checks one metric.
func validateMetric(env *cel.Env, m dcv1.AnalysisMetric, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.Prometheus == nil {
		errs = append(errs, field.Required(path.Child("prometheus"), "a metric needs a prometheus query"))
	} else {
		if err := checkAddress(m.Prometheus.Address); err != nil {
			errs = append(errs, field.Invalid(path.Child("prometheus", "address"), m.Prometheus.Address, err.Error()))
		}
		if _, err := RenderQuery(m.Prometheus.Query, SampleVars()); err != nil {
			errs = append(errs, field.Invalid(path.Child("prometheus", "query"), m.Prometheus.Query, err.Error()))
		}
	}
	if m.SuccessCondition == "" && m.FailureCondition == "" {
		errs = append(errs, field.Required(path.Child("successCondition"), "at least one of successCondition or failureCondition is required"))
	}
	for _, c := range []struct{ field, expr string }{{"successCondition", m.SuccessCondition}, {"failureCondition", m.FailureCondition}} {
		if _, err := compileCondition(env, c.field, c.expr); err != nil {
			errs = append(errs, field.Invalid(path.Child(c.field), c.expr, err.Error()))
		}
	}
	return errs
}
