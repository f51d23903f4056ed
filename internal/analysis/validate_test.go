package analysis

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestValidate(t *testing.T) {
	valid := func() dcv1.AnalysisMetric {
		return dcv1.AnalysisMetric{
			Name:             "error-rate",
			Prometheus:       &dcv1.PrometheusMetric{Address: "http://127.0.0.1:9090", Query: `sum(rate(x{deployment="{{.Deployment}}",ns="{{.Namespace}}",dc="{{.DeploymentConfig}}",v="{{.Version}}"}[1m]))`},
			SuccessCondition: "result[0] < 0.05",
		}
	}
	tests := []struct {
		name   string
		edit   func(m *dcv1.AnalysisMetric)
		field  string
		detail string
	}{
		{name: "valid", edit: func(*dcv1.AnalysisMetric) {}},
		{name: "scalar and failure condition", edit: func(m *dcv1.AnalysisMetric) { m.SuccessCondition = ""; m.FailureCondition = "result > 1.0" }},
		{name: "success condition does not compile", edit: func(m *dcv1.AnalysisMetric) { m.SuccessCondition = "result[0] <" },
			field: "spec.metrics[0].successCondition", detail: "does not compile as CEL"},
		{name: "failure condition is not bool", edit: func(m *dcv1.AnalysisMetric) { m.FailureCondition = "'x'" },
			field: "spec.metrics[0].failureCondition", detail: "must be a bool expression"},
		{name: "unknown variable", edit: func(m *dcv1.AnalysisMetric) { m.SuccessCondition = "value < 1.0" },
			field: "spec.metrics[0].successCondition", detail: "undeclared reference to 'value'"},
		{name: "no condition", edit: func(m *dcv1.AnalysisMetric) { m.SuccessCondition = "" },
			field: "spec.metrics[0].successCondition", detail: "at least one of successCondition or failureCondition"},
		{name: "template does not parse", edit: func(m *dcv1.AnalysisMetric) { m.Prometheus.Query = "up{x=\"{{.Deployment\"}" },
			field: "spec.metrics[0].prometheus.query", detail: "does not parse as a Go template"},
		{name: "template names an unknown field", edit: func(m *dcv1.AnalysisMetric) { m.Prometheus.Query = "up{x=\"{{.Deploymnet}}\"}" },
			field: "spec.metrics[0].prometheus.query", detail: "does not render"},
		{name: "empty query", edit: func(m *dcv1.AnalysisMetric) { m.Prometheus.Query = " " },
			field: "spec.metrics[0].prometheus.query", detail: "must not be empty"},
		{name: "address without scheme", edit: func(m *dcv1.AnalysisMetric) { m.Prometheus.Address = "prometheus:9090" },
			field: "spec.metrics[0].prometheus.address", detail: "http:// or https://"},
		{name: "a condition as users nest them", edit: func(m *dcv1.AnalysisMetric) {
			m.SuccessCondition = "size(result) == 0 || (result.all(x, !isNaN(x) && x < 1.0) && (result[0] <= 0.05 || result.exists(y, y == 0)))"
		}},
		// CEL's checker took 14 s on this one at its default nesting limit.
		{name: "a condition nested deeper than the limit", edit: func(m *dcv1.AnalysisMetric) {
			m.SuccessCondition = strings.Repeat("{1:", 30) + "1" + strings.Repeat("}", 30) + " == {}"
		}, field: "spec.metrics[0].successCondition", detail: "recursion limit"},
		{name: "a query of a define", edit: func(m *dcv1.AnalysisMetric) { m.Prometheus.Query = `{{define "x"}}{{.Version}}{{end}}up` },
			field: "spec.metrics[0].prometheus.query", detail: "define"},
		{name: "a query of comments only", edit: func(m *dcv1.AnalysisMetric) { m.Prometheus.Query = `{{/* nothing */}}` },
			field: "spec.metrics[0].prometheus.query", detail: "must not be empty"},
		{name: "no prometheus", edit: func(m *dcv1.AnalysisMetric) { m.Prometheus = nil },
			field: "spec.metrics[0].prometheus", detail: "needs a prometheus query"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			tc.edit(&m)
			errs := Validate(&dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{m}}, field.NewPath("spec"))
			if tc.field == "" {
				if len(errs) != 0 {
					t.Fatalf("valid spec refused: %v", errs.ToAggregate())
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("got %d errors (%v), want one on %s", len(errs), errs.ToAggregate(), tc.field)
			}
			if errs[0].Field != tc.field || !strings.Contains(errs[0].Error(), tc.detail) {
				t.Fatalf("error %q, want one on %s containing %q", errs[0].Error(), tc.field, tc.detail)
			}
		})
	}
	if errs := Validate(&dcv1.Analysis{}, field.NewPath("a")); len(errs) != 1 || errs[0].Field != "a.metrics" {
		t.Fatalf("an analysis without metrics: %v", errs.ToAggregate())
	}
}

// BenchmarkValidateLargest validates the largest analysis the CRD admits,
// hostile where it can be: 16 metrics, each with an 8192-character query of
// ranges and printfs and two 1024-character conditions of literals nested
// as deep as conditionNestingLimit allows (the costliest for CEL's type
// checker found). It shows what refuseInvalidAnalyses costs at worst.
func BenchmarkValidateLargest(b *testing.B) {
	query := strings.Repeat(`{{range 100000}}{{printf "%01000000d" 0}}`, 8192/40)[:8192]
	nested := "(" + strings.Repeat("{1:", 22) + "1" + strings.Repeat("}", 22) + " == {})"
	condition := strings.Repeat(nested+" && ", 1024/(len(nested)+4)) + "true"
	spec := &dcv1.Analysis{}
	for i := range 16 {
		spec.Metrics = append(spec.Metrics, dcv1.AnalysisMetric{
			Name:             fmt.Sprintf("m%d", i),
			Prometheus:       &dcv1.PrometheusMetric{Address: "http://127.0.0.1:9090", Query: query},
			SuccessCondition: condition, FailureCondition: condition,
		})
	}
	if errs := Validate(spec, field.NewPath("spec")); len(errs) != 16 {
		b.Fatalf("want the 16 queries refused and the conditions accepted, got %v", errs.ToAggregate())
	}
	for b.Loop() {
		Validate(spec, field.NewPath("spec"))
	}
}
