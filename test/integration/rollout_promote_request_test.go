package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// TestPromoteRequestsFromAGitOpsTool: Argo CD's promote, promote-full and
// abort actions (integrations/argocd) patch only the DeploymentConfig; the
// controller passes promote and promote-full on to the deployer as
// `kubectl dc rollout promote [--full]` does, by the promote request on
// the rollout's RC, refuses with an event what the command refuses, and
// abort cancels.
func TestPromoteRequestsFromAGitOpsTool(t *testing.T) {
	ns := newNamespace(t)
	gitops := gitOpsClient(t, ns)
	mustCreate(t, canaryDC(ns, "web"))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)

	// Nothing runs: refused.
	gitOpsPatch(t, gitops, "web", requestPatch("promote"))
	waitRequestDone(t, ns, "web")
	waitEventMessage(t, ns, "web", "RolloutRequestRefused", "is in progress")

	changeImage(t, ns, "web", "registry.example.com/web:2")
	waitPhase(t, ns, "web-2", dcv1.DeploymentPhasePending)
	setPodPhase(t, ns, "web-2-deploy", corev1.PodRunning)
	waitPhase(t, ns, "web-2", dcv1.DeploymentPhaseRunning)

	// At a step, not paused: promote is refused, as the command refuses it.
	patchRC(t, ns, "web-2", func(rc *corev1.ReplicationController) {
		rc.Annotations[dcv1.DeploymentStepAnnotation] = "1"
		rc.Annotations[dcv1.DeploymentStepsAnnotation] = "2"
	})
	gitOpsPatch(t, gitops, "web", requestPatch("promote"))
	waitRequestDone(t, ns, "web")
	waitEventMessage(t, ns, "web", "RolloutRequestRefused", "not paused")

	// Paused at step 2: promote ends that pause.
	pauseAt(t, ns, "web-2", 2, dcv1.PauseReasonPause, "")
	waitCondition(t, ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.AwaitingPromotionReason)
	gitOpsPatch(t, gitops, "web", requestPatch("promote"))
	waitRC(t, ns, "web-2", "promote request for step 2", func(rc *corev1.ReplicationController) bool {
		return rc.Annotations[dcv1.PromoteRequestAnnotation] == "2"
	})
	waitRequestDone(t, ns, "web")
	waitEvent(t, ns, "web", "DeploymentPromoted")
	// The pause is over for the controller before the deployer moves on.
	waitCondition(t, ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.RolloutInProgressReason)

	// promote-full skips every remaining step.
	gitOpsPatch(t, gitops, "web", requestPatch("promote-full"))
	waitRC(t, ns, "web-2", "promote request full", func(rc *corev1.ReplicationController) bool {
		return rc.Annotations[dcv1.PromoteRequestAnnotation] == dcv1.PromoteFull
	})
	waitRequestDone(t, ns, "web")

	// abort is a cancel.
	gitOpsPatch(t, gitops, "web", requestPatch("cancel"))
	waitRC(t, ns, "web-2", "cancelled", func(rc *corev1.ReplicationController) bool {
		return deployment.IsCancelled(rc)
	})
	waitRequestDone(t, ns, "web")
}

// TestPromoteRequestBlueGreen: a blue-green rollout waiting to switch is
// AwaitingPromotion, and Argo CD's promote switches it (any promote
// request does; the controller writes what the command writes).
func TestPromoteRequestBlueGreen(t *testing.T) {
	ns := newNamespace(t)
	gitops := gitOpsClient(t, ns)
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen,
			BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: "web"}}
	}))
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhasePending)
	setPodPhase(t, ns, "web-1-deploy", corev1.PodRunning)
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhaseRunning)
	patchRC(t, ns, "web-1", func(rc *corev1.ReplicationController) {
		rc.Annotations[dcv1.DeploymentPausedSinceAnnotation] = "2026-01-01T00:00:00Z"
		rc.Annotations[dcv1.DeploymentPauseReasonAnnotation] = string(dcv1.PauseReasonPromotion)
	})
	waitCondition(t, ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.AwaitingPromotionReason)
	gitOpsPatch(t, gitops, "web", requestPatch("promote"))
	waitRC(t, ns, "web-1", "promote request", func(rc *corev1.ReplicationController) bool {
		return rc.Annotations[dcv1.PromoteRequestAnnotation] == dcv1.PromoteFull
	})
	waitRequestDone(t, ns, "web")
	waitCondition(t, ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.RolloutInProgressReason)
}
