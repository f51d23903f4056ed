package cli

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
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

// recorded gives the deployment the progress record its runner wrote.
func recorded(p deployment.Progress) rcOption {
	return func(rc *corev1.ReplicationController) { deployment.SetProgress(rc, p) }
}

// at is a time on the morning of the tests.
func at(hour, minute, second int) metav1.Time {
	return metav1.NewTime(time.Date(2026, 3, 1, hour, minute, second, 0, time.UTC))
}

// runner is the deployer pod of web-2.
var runner = deployment.Runner{Kind: deployment.RunnerPod, Holder: deployment.DeployerPodName("web-2")}

var (
	atStep2Paused = recorded(deployment.Progress{Stage: deployment.StageSteps, Step: 2, Steps: 4, Weight: ptr.To[int32](20),
		Wait: &deployment.Wait{Gate: deployment.StepGate(2), Reason: dcv1.PauseReasonPause, Since: at(11, 58, 0)}, Runner: runner})
	atStep3      = recorded(deployment.Progress{Stage: deployment.StageSteps, Step: 3, Steps: 4, Weight: ptr.To[int32](20), Runner: runner})
	atStep4Timed = recorded(deployment.Progress{Stage: deployment.StageSteps, Step: 4, Steps: 4, Weight: ptr.To[int32](60),
		Wait: &deployment.Wait{Gate: deployment.StepGate(4), Reason: dcv1.PauseReasonPause, Since: at(11, 59, 50),
			Duration: &metav1.Duration{Duration: 30 * time.Second}}, Runner: runner})
	blueGreenWaiting = recorded(deployment.Progress{Stage: deployment.StageBeforeSwitch,
		Wait: &deployment.Wait{Gate: deployment.GatePromotion, Reason: dcv1.PauseReasonPromotion, Since: at(11, 59, 0)}, Runner: runner})
	atStep5Inconclusive = recorded(deployment.Progress{Stage: deployment.StageSteps, Step: 5, Steps: 5, Weight: ptr.To[int32](60),
		Wait: &deployment.Wait{Gate: deployment.StepGate(5), Reason: dcv1.PauseReasonInconclusive, Since: at(11, 59, 50)}, Runner: runner})
	// blueGreenAnalysing runs its prePromotionAnalysis: no wait yet.
	blueGreenAnalysing = recorded(deployment.Progress{Stage: deployment.StageBeforeSwitch,
		Analysis: &deployment.RunningAnalysis{Label: deployment.GatePrePromotion, Since: at(11, 59, 0)}, Runner: runner})
	// atStep5Analysing runs the analysis of its last step.
	atStep5Analysing = recorded(deployment.Progress{Stage: deployment.StageSteps, Step: 5, Steps: 5, Weight: ptr.To[int32](60),
		Analysis: &deployment.RunningAnalysis{Label: deployment.StepGate(5), Since: at(11, 59, 50)}, Runner: runner})
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

// wantPromoteRequest checks the promote request on web-2: of kind, ending
// the wait of gate; kind "" wants none.
func wantPromoteRequest(kind deployment.RequestKind, gate string) func(t *testing.T, f *fixture) {
	return func(t *testing.T, f *fixture) {
		rc := f.getRC("web-2")
		req, ok := deployment.ReadRequest(rc)
		switch {
		case kind == "" && ok:
			t.Errorf("promote request %+v, want none", req)
		case kind == "":
		case !ok:
			t.Errorf("no promote request (annotation %q), want %s of gate %q", rc.Annotations[dcv1.PromoteRequestAnnotation], kind, gate)
		case req.Kind != kind || req.Gate != gate || req.ID == "":
			t.Errorf("promote request %+v, want %s of gate %q with an ID", req, kind, gate)
		case deployment.ProgressOf(rc).HasConsumed(req.ID):
			t.Errorf("promote request %+v is already consumed", req)
		}
	}
}

func TestRolloutPromote(t *testing.T) {
	runCases(t, []commandCase{{
		name:  "ends the pause of the current step",
		objs:  progressive(canarySteps, atStep2Paused),
		args:  []string{"rollout", "promote", "web"},
		check: wantPromoteRequest(deployment.RequestPromote, deployment.StepGate(2)),
	}, {
		// An Inconclusive analysis waits for a person; promote goes on.
		name:  "goes on after an inconclusive analysis",
		objs:  progressive(func(dc *dcv1.DeploymentConfig) { canarySteps(dc); withAnalysis(dc) }, atStep5Inconclusive),
		args:  []string{"rollout", "promote", "web"},
		check: wantPromoteRequest(deployment.RequestPromote, deployment.StepGate(5)),
	}, {
		name:  "full",
		objs:  progressive(canarySteps, atStep3),
		args:  []string{"rollout", "promote", "web", "--full"},
		check: wantPromoteRequest(deployment.RequestPromoteFull, ""),
	}, {
		name:  "not paused",
		objs:  progressive(canarySteps, atStep3),
		args:  []string{"rollout", "promote", "web"},
		check: wantPromoteRequest("", ""),
	}, {
		// A plain promote ends the wait for promotion and nothing else:
		// the postPromotionAnalysis still runs.
		name:  "blue-green",
		objs:  progressive(blueGreenStrategy, blueGreenWaiting),
		args:  []string{"rollout", "promote", "web"},
		check: wantPromoteRequest(deployment.RequestPromote, deployment.GatePromotion),
	}, {
		name:  "blue-green full",
		objs:  progressive(blueGreenStrategy, blueGreenWaiting),
		args:  []string{"rollout", "promote", "web", "--full"},
		check: wantPromoteRequest(deployment.RequestPromoteFull, ""),
	}, {
		// Promote never skips an analysis: only --full does.
		name:  "blue-green analysing",
		objs:  progressive(func(dc *dcv1.DeploymentConfig) { blueGreenStrategy(dc); withAnalysis(dc) }, blueGreenAnalysing),
		args:  []string{"rollout", "promote", "web"},
		check: wantPromoteRequest("", ""),
	}, {
		name:  "canary analysing",
		objs:  progressive(func(dc *dcv1.DeploymentConfig) { canarySteps(dc); withAnalysis(dc) }, atStep5Analysing),
		args:  []string{"rollout", "promote", "web"},
		check: wantPromoteRequest("", ""),
	}, {
		name:  "canary analysing full",
		objs:  progressive(func(dc *dcv1.DeploymentConfig) { canarySteps(dc); withAnalysis(dc) }, atStep5Analysing),
		args:  []string{"rollout", "promote", "web", "--full"},
		check: wantPromoteRequest(deployment.RequestPromoteFull, ""),
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
