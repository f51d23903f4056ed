package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// A spec found invalid is not checked again until its generation changes,
// and a fixed spec is forgotten.
func TestInvalidAnalysesRemembersAGeneration(t *testing.T) {
	bad := "result[0] <"
	dc := &dcv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{UID: "u1", Generation: 1}}
	dc.Spec.Strategy.RollingParams = &dcv1.RollingDeploymentStrategyParams{Pre: &dcv1.LifecycleHook{
		FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort,
		Analysis: &dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{{
			Name:             "m",
			Prometheus:       &dcv1.PrometheusMetric{Address: "http://127.0.0.1:9090", Query: "up"},
			SuccessCondition: bad,
		}}},
	}}
	m := newInvalidAnalyses()
	first := m.check(dc)
	if len(first) != 1 {
		t.Fatalf("check: %v, want one error", first)
	}
	// The same generation is answered from memory: a spec changed without
	// a new generation (which the API server never does) shows it.
	dc.Spec.Strategy.RollingParams.Pre.Analysis.Metrics[0].SuccessCondition = "true"
	if again := m.check(dc); len(again) != 1 || &again[0] != &first[0] {
		t.Errorf("second check of generation 1: %v, want the remembered errors", again)
	}
	dc.Generation = 2
	if fixed := m.check(dc); len(fixed) != 0 {
		t.Errorf("check of the fixed generation 2: %v, want none", fixed)
	}
	if _, ok := m.byUID[dc.UID]; ok {
		t.Error("a fixed spec is still remembered")
	}
}
