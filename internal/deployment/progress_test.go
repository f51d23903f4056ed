package deployment

import (
	"maps"
	"testing"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestClearProgress(t *testing.T) {
	own := map[string]string{
		dcv1.DeploymentConfigAnnotation:        "web",
		dcv1.DeploymentPhaseAnnotation:         string(dcv1.DeploymentPhaseFailed),
		dcv1.DesiredReplicasAnnotation:         "5",
		dcv1.EncodedDeploymentConfigAnnotation: "{}",
	}
	progress := map[string]string{
		dcv1.DeploymentStepAnnotation:            "2",
		dcv1.DeploymentStepsAnnotation:           "2",
		dcv1.DeploymentWeightAnnotation:          "40",
		dcv1.DeploymentPausedSinceAnnotation:     "2026-03-01T11:00:00Z",
		dcv1.DeploymentPauseDurationAnnotation:   "5m0s",
		dcv1.DeploymentPauseReasonAnnotation:     string(dcv1.PauseReasonInconclusive),
		dcv1.PromoteRequestAnnotation:            dcv1.PromoteFull,
		dcv1.AnalysisAnnotationPrefix + "pre":    "Successful: 1 measurement(s)",
		dcv1.AnalysisAnnotationPrefix + "step-2": "Inconclusive: no data",
	}
	tests := []struct {
		name     string
		switched string
		want     map[string]string
	}{
		{"no switch", "", own},
		{"switched on trial", dcv1.SwitchedTrial, own},
		{"switched for good stays live", dcv1.SwitchedFinal, merged(own, map[string]string{dcv1.DeploymentSwitchedAnnotation: dcv1.SwitchedFinal})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			annotations := merged(own, progress)
			if tt.switched != "" {
				annotations[dcv1.DeploymentSwitchedAnnotation] = tt.switched
			}
			if !ClearProgress(annotations) {
				t.Error("ClearProgress reported nothing removed")
			}
			if !maps.Equal(annotations, tt.want) {
				t.Errorf("annotations = %v, want %v", annotations, tt.want)
			}
			if ClearProgress(annotations) {
				t.Error("a second ClearProgress removed something")
			}
		})
	}
}

func merged(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	maps.Copy(m, b)
	return m
}
