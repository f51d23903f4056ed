package cli

import (
	"testing"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// withDryRun makes the analyses' error-rate metric a dry run.
func withDryRun(a *dcv1.Analysis) *dcv1.Analysis {
	a = a.DeepCopy()
	a.DryRun = []dcv1.DryRunMetric{{MetricName: "error-rate"}}
	return a
}

// TestDescribeAnalyses: describe shows every analysis a strategy runs:
// the background analysis of a canary, blue-green's post-promotion
// analysis, and the metrics of each that are dry runs.
func TestDescribeAnalyses(t *testing.T) {
	runCases(t, []commandCase{{
		name: "canary with a background analysis",
		objs: progressive(func(dc *dcv1.DeploymentConfig) {
			canarySteps(dc)
			withAnalysis(dc)
			p := dc.Spec.Strategy.RollingParams
			p.Analysis = withDryRun(p.Steps[len(p.Steps)-1].Analysis)
		}, atStep2Paused),
		args: []string{"describe", "web"},
	}, {
		name: "blue-green with a post-promotion analysis",
		objs: progressive(func(dc *dcv1.DeploymentConfig) {
			blueGreenStrategy(dc)
			withAnalysis(dc)
			p := dc.Spec.Strategy.BlueGreenParams
			p.PostPromotionAnalysis = withDryRun(p.PrePromotionAnalysis)
		}, blueGreenWaiting),
		args: []string{"describe", "web"},
	}})
}
