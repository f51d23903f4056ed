package controller

import (
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// TestAnalysisErrors: every analysis of a strategy is checked, each error
// naming its field: the hooks', the canary steps', the background
// analysis of rollingParams and blue-green's pre- and postPromotionAnalysis,
// hostile query templates and dryRun names included.
func TestAnalysisErrors(t *testing.T) {
	bad := func(mutate func(a *dcv1.Analysis)) *dcv1.Analysis {
		a := &dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{{
			Name:             "error-rate",
			Prometheus:       &dcv1.PrometheusMetric{Address: "http://127.0.0.1:9090", Query: `up{deployment="{{.Deployment}}"}`},
			SuccessCondition: "result[0] < 0.05",
		}}}
		mutate(a)
		return a
	}
	badCEL := bad(func(a *dcv1.Analysis) { a.Metrics[0].SuccessCondition = "result[0] <" })
	nestedRange := bad(func(a *dcv1.Analysis) {
		a.Metrics[0].Prometheus.Query = `{{range 100000}}{{range 100000}}x{{end}}{{end}}`
	})
	hugePrintf := bad(func(a *dcv1.Analysis) {
		a.Metrics[0].Prometheus.Query = `{{range 200}}{{printf "%01000000d" 0}}{{end}}`
	})
	tests := []struct {
		name     string
		strategy dcv1.DeploymentStrategy
		fields   []string
		detail   string
	}{
		{name: "valid strategy", strategy: dcv1.DeploymentStrategy{RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Analysis: bad(func(*dcv1.Analysis) {}), Steps: []dcv1.RollingStep{{Analysis: bad(func(*dcv1.Analysis) {})}}}}},
		{name: "recreate hooks", strategy: dcv1.DeploymentStrategy{RecreateParams: &dcv1.RecreateDeploymentStrategyParams{
			Pre: &dcv1.LifecycleHook{Analysis: badCEL}, Mid: &dcv1.LifecycleHook{Analysis: badCEL}, Post: &dcv1.LifecycleHook{Analysis: badCEL}}},
			fields: []string{"spec.strategy.recreateParams.pre.analysis.metrics[0].successCondition",
				"spec.strategy.recreateParams.mid.analysis.metrics[0].successCondition",
				"spec.strategy.recreateParams.post.analysis.metrics[0].successCondition"}, detail: "does not compile as CEL"},
		{name: "a nested range in a rolling hook", strategy: dcv1.DeploymentStrategy{RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Pre: &dcv1.LifecycleHook{Analysis: nestedRange}}},
			fields: []string{"spec.strategy.rollingParams.pre.analysis.metrics[0].prometheus.query"}, detail: "range"},
		{name: "a huge printf in a step", strategy: dcv1.DeploymentStrategy{RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Steps: []dcv1.RollingStep{{SetWeight: ptr(int32(10))}, {Analysis: hugePrintf}}}},
			fields: []string{"spec.strategy.rollingParams.steps[1].analysis.metrics[0].prometheus.query"}, detail: "range"},
		{name: "background analysis", strategy: dcv1.DeploymentStrategy{RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Analysis: hugePrintf, Steps: []dcv1.RollingStep{{SetWeight: ptr(int32(10))}}}},
			fields: []string{"spec.strategy.rollingParams.analysis.metrics[0].prometheus.query"}, detail: "range"},
		{name: "prePromotionAnalysis", strategy: dcv1.DeploymentStrategy{BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
			PrePromotionAnalysis: badCEL}},
			fields: []string{"spec.strategy.blueGreenParams.prePromotionAnalysis.metrics[0].successCondition"}, detail: "does not compile as CEL"},
		{name: "postPromotionAnalysis", strategy: dcv1.DeploymentStrategy{BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
			PostPromotionAnalysis: nestedRange}},
			fields: []string{"spec.strategy.blueGreenParams.postPromotionAnalysis.metrics[0].prometheus.query"}, detail: "range"},
		{name: "dryRun names an unknown metric", strategy: dcv1.DeploymentStrategy{BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
			PostPromotionAnalysis: bad(func(a *dcv1.Analysis) { a.DryRun = []dcv1.DryRunMetric{{MetricName: "error-rte"}} })}},
			fields: []string{"spec.strategy.blueGreenParams.postPromotionAnalysis.dryRun[0].metricName"}, detail: `"error-rate"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := analysisErrors(&tc.strategy)
			if len(errs) != len(tc.fields) {
				t.Fatalf("got %d errors (%v), want %d on %v", len(errs), errs.ToAggregate(), len(tc.fields), tc.fields)
			}
			for i, e := range errs {
				if e.Field != tc.fields[i] || !strings.Contains(e.Error(), tc.detail) {
					t.Errorf("error %q, want one on %s containing %q", e.Error(), tc.fields[i], tc.detail)
				}
			}
		})
	}
}

// TestInvalidAnalysisErrorIsBounded: the message that goes into the
// Progressing condition and the event stays short however large the
// refused spec: long values are cut and only the first errors are listed,
// each still naming its field and what is wrong.
func TestInvalidAnalysisErrorIsBounded(t *testing.T) {
	errsOf := func(n int, value string) field.ErrorList {
		var errs field.ErrorList
		for i := range n {
			errs = append(errs, field.Invalid(field.NewPath("spec", "strategy", "rollingParams", "steps").Index(i).Child("analysis", "metrics").Index(0).Child("prometheus", "query"),
				value, "does not render: found {{range 1}} (a range action)"))
		}
		return errs
	}
	tests := []struct {
		name     string
		errs     field.ErrorList
		contains []string
		absent   []string
	}{
		{name: "a short value is whole", errs: errsOf(1, "up{x=1}"),
			contains: []string{`spec.strategy.rollingParams.steps[0].analysis.metrics[0].prometheus.query: Invalid value: "up{x=1}": does not render`}},
		{name: "a long value is cut", errs: errsOf(1, strings.Repeat("é", 4096)),
			contains: []string{"steps[0]", `..."`, "does not render"}},
		{name: "a long detail is cut", errs: field.ErrorList{field.Invalid(field.NewPath("spec", "a"), "x", "does not compile as CEL: "+strings.Repeat("ERROR: <input>:1:1 ", 500))},
			contains: []string{`spec.a: Invalid value: "x": does not compile as CEL: ERROR`, "..."}},
		{name: "many errors: the first ones and a count", errs: errsOf(64, strings.Repeat("{{range 1}}", 700)),
			contains: []string{"steps[0]", "steps[9]", "and 54 more"}, absent: []string{"steps[10]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := (&InvalidAnalysisError{Version: 3, Errs: tc.errs}).Error()
			if len(msg) > 6000 {
				t.Errorf("message is %d bytes", len(msg))
			}
			if !utf8.ValidString(msg) {
				t.Errorf("message is not valid UTF-8")
			}
			for _, want := range append([]string{"invalid analysis, version 3 is not rolled out: "}, tc.contains...) {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not contain %q", msg, want)
				}
			}
			for _, not := range tc.absent {
				if strings.Contains(msg, not) {
					t.Errorf("message %q contains %q", msg, not)
				}
			}
		})
	}
}
