package integration

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// The query templates: executed, the first never ends and the
// second writes 200 MB.
const (
	nestedRangeQuery = `{{range 100000}}{{range 100000}}x{{end}}{{end}}`
	hugePrintfQuery  = `{{range 200}}{{printf "%01000000d" 0}}{{end}}`
)

// TestHostileAnalysesDoNotDelayOthers: six DeploymentConfigs whose
// analysis queries would run for ever or fill the controller's memory if
// executed, one in each place an analysis can be, are refused as
// InvalidAnalysis naming the query's field; and an ordinary DeploymentConfig
// in another namespace, created with them, rolls out meanwhile. Before the
// controller stopped executing templates, its workers rendered these and
// never came back: the ordinary DeploymentConfig got no deployment.
func TestHostileAnalysesDoNotDelayOthers(t *testing.T) {
	abort := dcv1.LifecycleHookFailurePolicyAbort
	hostile := func(query string) *dcv1.Analysis {
		return analysisWith(func(m *dcv1.AnalysisMetric) { m.Prometheus.Query = query })
	}
	weight := func(w int32) dcv1.RollingStep { return dcv1.RollingStep{SetWeight: &w} }
	cases := []struct {
		strategy dcv1.DeploymentStrategy
		field    string
	}{
		{strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Pre: &dcv1.LifecycleHook{FailurePolicy: abort, Analysis: hostile(nestedRangeQuery)}}},
			field: "spec.strategy.rollingParams.pre.analysis.metrics[0].prometheus.query"},
		{strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Steps: []dcv1.RollingStep{weight(20), {Analysis: hostile(hugePrintfQuery)}}}},
			field: "spec.strategy.rollingParams.steps[1].analysis.metrics[0].prometheus.query"},
		{strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Steps: []dcv1.RollingStep{weight(50)}, Analysis: hostile(nestedRangeQuery)}},
			field: "spec.strategy.rollingParams.analysis.metrics[0].prometheus.query"},
		{strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen, BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
			ActiveService: "web", PrePromotionAnalysis: hostile(hugePrintfQuery)}},
			field: "spec.strategy.blueGreenParams.prePromotionAnalysis.metrics[0].prometheus.query"},
		{strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen, BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
			ActiveService: "web", PostPromotionAnalysis: hostile(nestedRangeQuery)}},
			field: "spec.strategy.blueGreenParams.postPromotionAnalysis.metrics[0].prometheus.query"},
		{strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRecreate, RecreateParams: &dcv1.RecreateDeploymentStrategyParams{
			Mid: &dcv1.LifecycleHook{FailurePolicy: abort, Analysis: hostile(hugePrintfQuery)}}},
			field: "spec.strategy.recreateParams.mid.analysis.metrics[0].prometheus.query"},
	}
	hostileNS, ordinaryNS := newNamespace(t), newNamespace(t)
	for i, tc := range cases {
		mustCreate(t, newDC(hostileNS, fmt.Sprintf("hostile-%d", i), func(dc *dcv1.DeploymentConfig) { dc.Spec.Strategy = tc.strategy }))
	}
	mustCreate(t, newDC(ordinaryNS, "ordinary", nil))

	// The bounded wait is the proof: with stuck workers the deployment is
	// never created.
	waitRC(t, ordinaryNS, "ordinary-1", "created", func(*corev1.ReplicationController) bool { return true })
	for i, tc := range cases {
		name := fmt.Sprintf("hostile-%d", i)
		waitCondition(t, hostileNS, name, dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.InvalidAnalysisReason)
		waitEventMessage(t, hostileNS, name, dcv1.InvalidAnalysisReason, tc.field)
	}
}
