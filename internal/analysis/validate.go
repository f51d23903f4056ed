package analysis

import (
	"slices"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Validate checks what the API server cannot: that every condition
// compiles as a CEL bool expression (nesting at most conditionNestingLimit
// levels), that every query holds only text and the fields of Vars
// (CheckQuery), and that every dryRun entry names a metric; and it repeats
// the checks of the CRD that a Run depends on, for an RC created before
// those rules. Nothing the spec's author wrote is executed, so its cost is
// bounded by the spec's size: dc-controller calls it in its sync. Each
// error names its field under path, e.g.
// spec.strategy.rollingParams.pre.analysis.metrics[0].successCondition.
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
	return append(errs, validateDryRun(spec, path.Child("dryRun"))...)
}

// validateDryRun checks that each dryRun entry names a metric of the
// analysis, or is "*": a misspelt name would otherwise let the metric it
// meant fail the rollout.
func validateDryRun(spec *dcv1.Analysis, path *field.Path) field.ErrorList {
	names := make([]string, 0, len(spec.Metrics)+1)
	for _, m := range spec.Metrics {
		names = append(names, m.Name)
	}
	names = append(names, DryRunAll)
	var errs field.ErrorList
	for i, d := range spec.DryRun {
		if !slices.Contains(names, d.MetricName) {
			errs = append(errs, field.NotSupported(path.Index(i).Child("metricName"), d.MetricName, names))
		}
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
		if err := CheckQuery(m.Prometheus.Query); err != nil {
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
