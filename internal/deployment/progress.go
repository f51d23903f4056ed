package deployment

import (
	"strings"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// IsProgressAnnotation reports whether key records how far a rollout went
// through its strategy: the canary step, the weight, a pause and why, a
// promote request, the blue-green switch, an analysis outcome, and for a
// rollout dc-controller ran, that it did and its log.
func IsProgressAnnotation(key string) bool {
	switch key {
	case dcv1.DeploymentStepAnnotation, dcv1.DeploymentStepsAnnotation, dcv1.DeploymentWeightAnnotation,
		dcv1.DeploymentPausedSinceAnnotation, dcv1.DeploymentPauseDurationAnnotation, dcv1.DeploymentPauseReasonAnnotation,
		dcv1.PromoteRequestAnnotation, dcv1.DeploymentSwitchedAnnotation,
		// Where and since when the last attempt ran, and its log: a
		// retry decides afresh, as its new deployer pod has a log of its own.
		dcv1.DeploymentRunnerAnnotation, dcv1.DeploymentRunnerStartedAnnotation, dcv1.DeploymentLogAnnotation:
		return true
	}
	return strings.HasPrefix(key, dcv1.AnalysisAnnotationPrefix)
}

// ClearProgress removes every record of a rollout's progress from an RC's
// annotations, so that a retried rollout starts its steps again: a
// leftover step would resume a pause with no canary pods, a leftover
// promote request or paused-since would skip a gate or shorten a pause, and
// a leftover analysis outcome would describe the rollout that failed. It
// reports whether it removed anything.
//
// A blue-green switch made for good (SwitchedFinal) stays: that deployment
// serves (see Live), and its retried deployer must not switch the active
// Service back to the version it replaced.
func ClearProgress(annotations map[string]string) bool {
	removed := false
	for k, v := range annotations {
		if k == dcv1.DeploymentSwitchedAnnotation && v == dcv1.SwitchedFinal {
			continue
		}
		if IsProgressAnnotation(k) {
			delete(annotations, k)
			removed = true
		}
	}
	return removed
}
