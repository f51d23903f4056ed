package integration

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	recordProgress(t, ns, "web-2", func(p *deployment.Progress) {
		p.Stage, p.Step, p.Steps = deployment.StageSteps, 1, 2
	})
	gitOpsPatch(t, gitops, "web", requestPatch("promote"))
	waitRequestDone(t, ns, "web")
	waitEventMessage(t, ns, "web", "RolloutRequestRefused", "not paused")

	// Paused at step 2: promote ends that pause.
	pauseAt(t, ns, "web-2", 2, dcv1.PauseReasonPause, 0)
	waitCondition(t, ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.AwaitingPromotionReason)
	gitOpsPatch(t, gitops, "web", requestPatch("promote"))
	waitRC(t, ns, "web-2", "promote request for step 2", requested(deployment.RequestPromote, deployment.StepGate(2)))
	waitRequestDone(t, ns, "web")
	waitEvent(t, ns, "web", "DeploymentPromoted")
	// The pause is over for the controller before the deployer moves on.
	waitCondition(t, ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.RolloutInProgressReason)

	// promote-full skips every remaining step.
	gitOpsPatch(t, gitops, "web", requestPatch("promote-full"))
	waitRC(t, ns, "web-2", "promote request full", requested(deployment.RequestPromoteFull, ""))
	waitRequestDone(t, ns, "web")

	// abort is a cancel.
	gitOpsPatch(t, gitops, "web", requestPatch("cancel"))
	waitRC(t, ns, "web-2", "cancelled", func(rc *corev1.ReplicationController) bool {
		return deployment.IsCancelled(rc)
	})
	waitRequestDone(t, ns, "web")
}

// TestPromoteRequestBlueGreen: a blue-green rollout waiting to switch is
// AwaitingPromotion, and Argo CD's promote switches it: the controller
// writes what the command writes, a promote that ends the wait for
// promotion and skips nothing else.
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
	recordProgress(t, ns, "web-1", func(p *deployment.Progress) {
		p.Stage = deployment.StageBeforeSwitch
		p.Wait = &deployment.Wait{Gate: deployment.GatePromotion, Reason: dcv1.PauseReasonPromotion, Since: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	})
	waitCondition(t, ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.AwaitingPromotionReason)
	gitOpsPatch(t, gitops, "web", requestPatch("promote"))
	waitRC(t, ns, "web-1", "promote request", requested(deployment.RequestPromote, deployment.GatePromotion))
	waitRequestDone(t, ns, "web")
	waitCondition(t, ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.RolloutInProgressReason)
}

// requested reports whether a deployment has a request of kind for gate
// that its runner has not acted on yet.
func requested(kind deployment.RequestKind, gate string) func(*corev1.ReplicationController) bool {
	return func(rc *corev1.ReplicationController) bool {
		req, ok := deployment.ReadRequest(rc)
		return ok && req.ID != "" && req.Kind == kind && req.Gate == gate && !deployment.ProgressOf(rc).HasConsumed(req.ID)
	}
}
