package controller

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// TestPromoteRequested: a promote request on the DeploymentConfig becomes
// the request `kubectl dc rollout promote` writes on the rollout's RC, and
// is refused where the command refuses. A plain promote ends the wait the
// rollout is in and nothing else; only a full one skips what is left.
func TestPromoteRequested(t *testing.T) {
	canary := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Steps: []dcv1.RollingStep{{SetWeight: ptr(int32(25))}, {Pause: &dcv1.RolloutPause{}}}}}
	})
	blueGreen := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen,
			BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: "web"}}
	})
	plain := testDC(nil)
	since := metav1.Now()
	atStep := func(k int, reason dcv1.PauseReason) deployment.Progress {
		p := deployment.Progress{Stage: deployment.StageSteps, Step: k, Steps: 2}
		if reason != "" {
			p.Wait = &deployment.Wait{Gate: deployment.StepGate(k), Reason: reason, Since: since}
		}
		return p
	}
	started := deployment.Progress{Stage: deployment.StageStarted}
	awaitingSwitch := deployment.Progress{Stage: deployment.StageBeforeSwitch,
		Wait: &deployment.Wait{Gate: deployment.GatePromotion, Reason: dcv1.PauseReasonPromotion, Since: since}}
	analysing := deployment.Progress{Stage: deployment.StageBeforeSwitch,
		Analysis: &deployment.RunningAnalysis{Label: deployment.GatePrePromotion, Since: since}}
	cases := []struct {
		name     string
		dc       *dcv1.DeploymentConfig
		progress deployment.Progress
		full     bool
		kind     deployment.RequestKind // "" when refused
		gate     string
		refuse   string
	}{
		{name: "paused at a step", dc: canary, progress: atStep(2, dcv1.PauseReasonPause), kind: deployment.RequestPromote, gate: "step-2"},
		{name: "Inconclusive at a step", dc: canary, progress: atStep(2, dcv1.PauseReasonInconclusive), kind: deployment.RequestPromote, gate: "step-2"},
		{name: "full at any step", dc: canary, progress: atStep(1, ""), full: true, kind: deployment.RequestPromoteFull},
		{name: "full before the first step", dc: canary, progress: started, full: true, kind: deployment.RequestPromoteFull},
		{name: "not paused", dc: canary, progress: atStep(1, ""), refuse: "at step 1 of 2 and not paused"},
		{name: "no step yet", dc: canary, progress: started, refuse: "not waiting for promotion yet"},
		{name: "past the last step", dc: canary, progress: deployment.Progress{Stage: deployment.StageFinalRoll}, full: true, refuse: "past its last step"},
		// A plain promote of a blue-green rollout ends its wait for
		// promotion; it used to be a full one, skipping the analyses.
		{name: "blue-green", dc: blueGreen, progress: awaitingSwitch, kind: deployment.RequestPromote, gate: "promotion"},
		{name: "blue-green analysing", dc: blueGreen, progress: analysing, refuse: "which promote does not skip"},
		{name: "blue-green, full", dc: blueGreen, progress: analysing, full: true, kind: deployment.RequestPromoteFull},
		{name: "no steps", dc: plain, progress: started, refuse: "has nothing to promote"},
		{name: "no steps, full", dc: plain, progress: started, full: true, refuse: "has nothing to promote"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dc := withVersion(tc.dc.DeepCopy(), 2)
			rc := rcOf(t, dc, 2, dcv1.DeploymentPhaseRunning, 2)
			p := tc.progress
			p.Runner = deployment.Runner{Kind: deployment.RunnerPod, Holder: deployment.DeployerPodName(rc.Name)}
			deployment.SetProgress(rc, p)
			got := promoteOn(t, dc, rc, tc.full, tc.refuse)
			req, ok := deployment.ReadRequest(got)
			switch {
			case tc.kind == "" && ok:
				t.Errorf("refused, yet wrote the request %+v", req)
			case tc.kind != "" && (!ok || req.Kind != tc.kind || req.Gate != tc.gate || req.ID == ""):
				t.Errorf("request %+v (written: %v), want %s of gate %q with an ID", req, ok, tc.kind, tc.gate)
			}
		})
	}
}

// promoteOn passes a promote request on to rc, checks that it is refused
// with words that say refuse ("" for none), and returns rc as written.
func promoteOn(t *testing.T, dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController, full bool, refuse string) *corev1.ReplicationController {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(rc).Build()
	r := &DeploymentConfigReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10)}
	ctx := context.Background()
	refusal, err := r.promoteRequested(ctx, dc, rc, full)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(refusal, refuse) || (refuse == "") != (refusal == "") {
		t.Errorf("refusal %q, want one that says %q", refusal, refuse)
	}
	got := &corev1.ReplicationController{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(rc), got); err != nil {
		t.Fatal(err)
	}
	return got
}
