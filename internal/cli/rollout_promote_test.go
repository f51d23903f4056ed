package cli

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// canarySteps gives web the steps setWeight 20, pause, setWeight 60, pause 30s.
func canarySteps(dc *dcv1.DeploymentConfig) {
	dc.Spec.Strategy.RollingParams.Steps = []dcv1.RollingStep{
		{SetWeight: ptr.To[int32](20)},
		{Pause: &dcv1.RolloutPause{}},
		{SetWeight: ptr.To[int32](60)},
		{Pause: &dcv1.RolloutPause{Duration: &metav1.Duration{Duration: 30 * time.Second}}},
	}
}

// blueGreenStrategy makes web a BlueGreen DeploymentConfig.
func blueGreenStrategy(dc *dcv1.DeploymentConfig) {
	dc.Spec.Strategy = dcv1.DeploymentStrategy{
		Type:            dcv1.DeploymentStrategyTypeBlueGreen,
		BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: "web", PreviewService: "web-preview"},
	}
}

// annotated sets annotations on the deployment, as the deployer records them.
func annotated(kv ...string) rcOption {
	return func(rc *corev1.ReplicationController) {
		for i := 0; i+1 < len(kv); i += 2 {
			rc.Annotations[kv[i]] = kv[i+1]
		}
	}
}

var (
	atStep2Paused = annotated(dcv1.DeploymentStepAnnotation, "2", dcv1.DeploymentStepsAnnotation, "4",
		dcv1.DeploymentWeightAnnotation, "20", dcv1.DeploymentPausedSinceAnnotation, "2026-03-01T11:58:00Z")
	atStep3 = annotated(dcv1.DeploymentStepAnnotation, "3", dcv1.DeploymentStepsAnnotation, "4",
		dcv1.DeploymentWeightAnnotation, "20")
	atStep4Timed = annotated(dcv1.DeploymentStepAnnotation, "4", dcv1.DeploymentStepsAnnotation, "4",
		dcv1.DeploymentWeightAnnotation, "60", dcv1.DeploymentPausedSinceAnnotation, "2026-03-01T11:59:50Z",
		dcv1.DeploymentPauseDurationAnnotation, "30s")
	blueGreenWaiting    = annotated(dcv1.DeploymentPausedSinceAnnotation, "2026-03-01T11:59:00Z")
	atStep5Inconclusive = annotated(dcv1.DeploymentStepAnnotation, "5", dcv1.DeploymentStepsAnnotation, "5",
		dcv1.DeploymentWeightAnnotation, "60", dcv1.DeploymentPausedSinceAnnotation, "2026-03-01T11:59:50Z",
		dcv1.DeploymentPauseReasonAnnotation, string(dcv1.PauseReasonInconclusive))
)

// progressive is web at #2, running with the given strategy and recorded
// state, beside a complete #1.
func progressive(strategy dcOption, state rcOption) func(t *testing.T) []runtime.Object {
	return func(t *testing.T) []runtime.Object {
		dc := newDC("web", 2, strategy, func(dc *dcv1.DeploymentConfig) { dc.Spec.Replicas = 5 })
		return []runtime.Object{
			dc,
			newRC(t, dc, 1, dcv1.DeploymentPhaseComplete, 30*time.Minute, scaled(4, 4, 4, 4)),
			newRC(t, dc, 2, dcv1.DeploymentPhaseRunning, 2*time.Minute, scaled(1, 1, 1, 1), state),
		}
	}
}

func wantPromoteRequest(value string) func(t *testing.T, f *fixture) {
	return func(t *testing.T, f *fixture) {
		if got := f.getRC("web-2").Annotations[dcv1.PromoteRequestAnnotation]; got != value {
			t.Errorf("promote request %q, want %q", got, value)
		}
	}
}

func TestRolloutPromote(t *testing.T) {
	runCases(t, []commandCase{{
		name:  "ends the pause of the current step",
		objs:  progressive(canarySteps, atStep2Paused),
		args:  []string{"rollout", "promote", "web"},
		check: wantPromoteRequest("2"),
	}, {
		// An Inconclusive analysis waits for a person; promote goes on.
		name:  "goes on after an inconclusive analysis",
		objs:  progressive(func(dc *dcv1.DeploymentConfig) { canarySteps(dc); withAnalysis(dc) }, atStep5Inconclusive),
		args:  []string{"rollout", "promote", "web"},
		check: wantPromoteRequest("5"),
	}, {
		name:  "full",
		objs:  progressive(canarySteps, atStep3),
		args:  []string{"rollout", "promote", "web", "--full"},
		check: wantPromoteRequest(dcv1.PromoteFull),
	}, {
		name:  "not paused",
		objs:  progressive(canarySteps, atStep3),
		args:  []string{"rollout", "promote", "web"},
		check: wantPromoteRequest(""),
	}, {
		name:  "blue-green",
		objs:  progressive(blueGreenStrategy, blueGreenWaiting),
		args:  []string{"rollout", "promote", "web"},
		check: wantPromoteRequest(dcv1.PromoteFull),
	}, {
		name: "no steps",
		objs: history3(dcv1.DeploymentPhaseRunning),
		args: []string{"rollout", "promote", "web"},
	}, {
		name: "nothing in progress",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "promote", "web"},
	}, {
		name: "missing NAME",
		args: []string{"rollout", "promote"},
	}})
}

func TestRolloutStatusProgressive(t *testing.T) {
	runCases(t, []commandCase{{
		name: "canary paused until promoted",
		objs: progressive(canarySteps, atStep2Paused),
		args: []string{"rollout", "status", "web"},
	}, {
		name: "canary at a step",
		objs: progressive(canarySteps, atStep3),
		args: []string{"rollout", "status", "web", "--watch=false"},
	}, {
		name: "canary in a timed pause",
		objs: progressive(canarySteps, atStep4Timed),
		args: []string{"rollout", "status", "web", "--watch=false"},
	}, {
		name: "blue-green waiting for promote",
		objs: progressive(blueGreenStrategy, blueGreenWaiting),
		args: []string{"rollout", "status", "web"},
	}})
}

// withAnalysis adds an analysis step to the canary and a pre-promotion
// analysis to blue-green.
func withAnalysis(dc *dcv1.DeploymentConfig) {
	count := int32(3)
	a := &dcv1.Analysis{
		Interval: metav1.Duration{Duration: 30 * time.Second},
		Count:    &count,
		Metrics: []dcv1.AnalysisMetric{{Name: "error-rate", SuccessCondition: "result[0] <= 0.05",
			Prometheus: &dcv1.PrometheusMetric{Address: "http://prometheus.monitoring:9090", Query: `errors{deployment="{{.Deployment}}"}`}}},
	}
	if p := dc.Spec.Strategy.BlueGreenParams; p != nil {
		p.PrePromotionAnalysis = a
		return
	}
	dc.Spec.Strategy.RollingParams.Steps = append(dc.Spec.Strategy.RollingParams.Steps, dcv1.RollingStep{Analysis: a})
}

func TestDescribeProgressive(t *testing.T) {
	runCases(t, []commandCase{{
		name: "canary",
		objs: progressive(func(dc *dcv1.DeploymentConfig) { canarySteps(dc); withAnalysis(dc) }, atStep2Paused),
		args: []string{"describe", "web"},
	}, {
		name: "blue-green",
		objs: progressive(func(dc *dcv1.DeploymentConfig) { blueGreenStrategy(dc); withAnalysis(dc) }, blueGreenWaiting),
		args: []string{"describe", "web"},
	}})
}
