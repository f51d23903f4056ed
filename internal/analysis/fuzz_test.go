package analysis

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// FuzzValidateAndJudge: any condition and query are refused with an error
// naming the field or accepted, and an accepted condition judges any
// result without panicking.
func FuzzValidateAndJudge(f *testing.F) {
	f.Add("result[0] < 0.05", "", `up{deployment="{{.Deployment}}"}`, 0.5)
	f.Add("", "result > 1.0", "{{.Version}}", 2.0)
	f.Add("result[0] <", "'x'", "{{.Deploymnet}}", -1.0)
	f.Add("size(result) == 0 || result.all(x, x < 1.0)", "", "{{ if }}", 0.0)
	f.Fuzz(func(t *testing.T, success, failure, query string, value float64) {
		m := dcv1.AnalysisMetric{
			Name:             "m",
			Prometheus:       &dcv1.PrometheusMetric{Address: "http://127.0.0.1:9090", Query: query},
			SuccessCondition: success, FailureCondition: failure,
		}
		errs := Validate(&dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{m}}, field.NewPath("spec"))
		for _, e := range errs {
			if e.Field == "" {
				t.Fatalf("an error names no field: %v", e)
			}
		}
		compiled, err := compile(dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{m}}, SampleVars(), Options{}.withDefaults())
		if (err == nil) != (len(errs) == 0) {
			t.Fatalf("Validate said %v but compile said %v", errs.ToAggregate(), err)
		}
		if err != nil {
			return
		}
		for _, result := range []any{[]float64{}, []float64{value}, []float64{value, 1}, value} {
			got := compiled[0].judge(result)
			switch got.phase {
			case Successful, Failed, Inconclusive, Error:
			default:
				t.Fatalf("judge gave phase %q", got.phase)
			}
		}
	})
}
