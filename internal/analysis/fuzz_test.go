package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

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

// FuzzQueryTemplate feeds query checking with hostile templates: whatever
// the input, Validate returns (no template is executed, so a loop or a
// huge printf costs nothing) and does not panic, and a query it accepts
// renders within MaxQueryBytes with the longest names Kubernetes allows.
func FuzzQueryTemplate(f *testing.F) {
	for _, seed := range []string{
		`{{range 100000}}{{range 100000}}x{{end}}{{end}}`,
		`{{range 200}}{{printf "%01000000d" 0}}{{end}}`,
		`{{printf "%0999999999d" 0}}`,
		`{{define "x"}}{{template "x" .}}{{end}}{{template "x" .}}`,
		`{{define "query"}}{{.Version}}{{end}}`,
		`{{block "b" .}}{{range 10}}{{.Deployment}}{{end}}{{end}}`,
		`{{range $i, $e := 5}}{{range $i}}{{$e}}{{end}}{{end}}`,
		`{{with .Deployment}}{{.}}{{end}}{{if .Version}}{{len .Namespace}}{{end}}`,
		`{{.Version | printf "%d" | printf "%s"}}`,
		`{{- .Namespace -}} {{.DeploymentConfig}}{{/* c */}}{{ .Deployment }}{{.Version}}`,
		`sum(rate(x{deployment="{{.Deployment}}"}[1m]))`,
		`{{(((((.Version)))))}}`,
	} {
		f.Add(seed)
	}
	longest := Vars{Namespace: strings.Repeat("n", 63), DeploymentConfig: strings.Repeat("d", 253), Deployment: strings.Repeat("r", 253), Version: math.MinInt64}
	f.Fuzz(func(t *testing.T, query string) {
		if len(query) > 8192 {
			// The CRD refuses longer queries.
			return
		}
		spec := &dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{{
			Name: "m", Prometheus: &dcv1.PrometheusMetric{Address: "http://127.0.0.1:9090", Query: query}, SuccessCondition: "true",
		}}}
		done := make(chan field.ErrorList, 1)
		go func() { done <- Validate(spec, field.NewPath("spec")) }()
		// A hang detector, not a timing assertion: checking is linear in
		// the query's length, microseconds where the old renderer ran for
		// ever.
		timer := time.NewTimer(time.Minute)
		defer timer.Stop()
		var errs field.ErrorList
		select {
		case errs = <-done:
		case <-timer.C:
			t.Fatalf("Validate did not return within a minute for %q", query)
		}
		if len(errs) > 0 {
			return
		}
		for _, vars := range []Vars{SampleVars(), longest} {
			out, err := RenderQuery(query, vars)
			if err != nil {
				t.Fatalf("Validate accepted %q but it does not render: %v", query, err)
			}
			if len(out) > MaxQueryBytes {
				t.Fatalf("Validate accepted %q but it renders %d bytes", query, len(out))
			}
		}
	})
}
