package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// analysisWith is a valid analysis with one metric, changed by mutate.
func analysisWith(mutate func(m *dcv1.AnalysisMetric)) *dcv1.Analysis {
	m := dcv1.AnalysisMetric{
		Name:             "error-rate",
		Prometheus:       &dcv1.PrometheusMetric{Address: "http://127.0.0.1:9090", Query: `sum(rate(app_requests_total{deployment="{{.Deployment}}",code="500"}[1m]))`},
		SuccessCondition: "result[0] < 0.05",
	}
	mutate(&m)
	return &dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{m}}
}

// TestControllerRefusesInvalidAnalysis: what the API server cannot check
// in an analysis (CEL that does not compile, a query template that does
// not render) stops the rollout before its deployment is created, with the
// Progressing condition and an InvalidAnalysis event naming the field; a
// fixed spec then rolls out.
func TestControllerRefusesInvalidAnalysis(t *testing.T) {
	abort := dcv1.LifecycleHookFailurePolicyAbort
	rolling := func(pre *dcv1.Analysis) dcv1.DeploymentStrategy {
		return dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling,
			RollingParams: &dcv1.RollingDeploymentStrategyParams{Pre: &dcv1.LifecycleHook{FailurePolicy: abort, Analysis: pre}}}
	}
	cases := []struct {
		name     string
		strategy dcv1.DeploymentStrategy
		field    string
		detail   string
	}{
		{name: "success condition does not compile",
			strategy: rolling(analysisWith(func(m *dcv1.AnalysisMetric) { m.SuccessCondition = "result[0] <" })),
			field:    "spec.strategy.rollingParams.pre.analysis.metrics[0].successCondition", detail: "does not compile as CEL"},
		{name: "condition names an unknown variable",
			strategy: rolling(analysisWith(func(m *dcv1.AnalysisMetric) { m.SuccessCondition = "value < 0.05" })),
			field:    "spec.strategy.rollingParams.pre.analysis.metrics[0].successCondition", detail: "undeclared reference to 'value'"},
		{name: "failure condition is not a bool",
			strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRecreate, RecreateParams: &dcv1.RecreateDeploymentStrategyParams{
				Mid: &dcv1.LifecycleHook{FailurePolicy: abort, Analysis: analysisWith(func(m *dcv1.AnalysisMetric) { m.FailureCondition = "'high'" })}}},
			field: "spec.strategy.recreateParams.mid.analysis.metrics[0].failureCondition", detail: "must be a bool expression"},
		{name: "query template does not parse",
			strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRecreate, RecreateParams: &dcv1.RecreateDeploymentStrategyParams{
				Post: &dcv1.LifecycleHook{FailurePolicy: abort, Analysis: analysisWith(func(m *dcv1.AnalysisMetric) { m.Prometheus.Query = `up{deployment="{{.Deployment"}` })}}},
			field: "spec.strategy.recreateParams.post.analysis.metrics[0].prometheus.query", detail: "does not parse as a Go template"},
		{name: "query template names an unknown value",
			strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
				Post: &dcv1.LifecycleHook{FailurePolicy: abort, Analysis: analysisWith(func(m *dcv1.AnalysisMetric) { m.Prometheus.Query = `up{deployment="{{.Deploymnet}}"}` })}}},
			field: "spec.strategy.rollingParams.post.analysis.metrics[0].prometheus.query", detail: "does not render"},
		{name: "a canary step's analysis",
			strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
				Steps: []dcv1.RollingStep{{SetWeight: ptr(int32(20))}, {Analysis: analysisWith(func(m *dcv1.AnalysisMetric) { m.SuccessCondition = "result[0] <" })}}}},
			field: "spec.strategy.rollingParams.steps[1].analysis.metrics[0].successCondition", detail: "does not compile as CEL"},
		{name: "blue-green's prePromotionAnalysis",
			strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen, BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
				ActiveService: "web", PrePromotionAnalysis: analysisWith(func(m *dcv1.AnalysisMetric) { m.Prometheus.Query = `{{.Nope}}` })}},
			field: "spec.strategy.blueGreenParams.prePromotionAnalysis.metrics[0].prometheus.query", detail: "does not render"},
	}
	ns := newNamespace(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("bad-%d", i)
			mustCreate(t, newDC(ns, name, func(dc *dcv1.DeploymentConfig) { dc.Spec.Strategy = tc.strategy }))
			waitCondition(t, ns, name, dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.ReplicationControllerCreateErrorReason)
			for _, c := range getDC(t, ns, name).Status.Conditions {
				if c.Type == dcv1.DeploymentProgressing && (!strings.Contains(c.Message, tc.field) || !strings.Contains(c.Message, tc.detail)) {
					t.Errorf("Progressing message %q does not name %s with %q", c.Message, tc.field, tc.detail)
				}
			}
			waitEventMessage(t, ns, name, dcv1.InvalidAnalysisReason, tc.field)
			if _, err := getRC(context.Background(), ns, name+"-1"); !apierrors.IsNotFound(err) {
				t.Fatalf("the deployment was created (or the lookup failed: %v)", err)
			}
		})
	}

	t.Run("a fixed spec rolls out", func(t *testing.T) {
		updateDC(t, ns, "bad-0", func(dc *dcv1.DeploymentConfig) {
			dc.Spec.Strategy.RollingParams.Pre.Analysis.Metrics[0].SuccessCondition = "result[0] < 0.05"
		})
		waitRC(t, ns, "bad-0-1", "created", func(*corev1.ReplicationController) bool { return true })
	})
}

// waitEventMessage waits for an event with that reason about the named
// object whose message contains text.
func waitEventMessage(t *testing.T, ns, objectName, reason, text string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("event %s on %s naming %s", reason, objectName, text), func(ctx context.Context) (bool, string, error) {
		events := &corev1.EventList{}
		if err := cluster.client.List(ctx, events, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var seen []string
		for _, e := range events.Items {
			if e.InvolvedObject.Name == objectName && e.Reason == reason && strings.Contains(e.Message, text) {
				return true, "", nil
			}
			seen = append(seen, e.InvolvedObject.Name+":"+e.Reason+":"+e.Message)
		}
		return false, fmt.Sprintf("%v", seen), nil
	})
}
