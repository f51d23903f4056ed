package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// EventDeploymentPromoted is the event of a promote request the controller
// passed on to the deployer.
const EventDeploymentPromoted = "DeploymentPromoted"

// Values of dcv1.RolloutRequestAnnotation that promote, as `kubectl dc
// rollout promote [--full]` does.
const (
	rolloutRequestPromote     = "promote"
	rolloutRequestPromoteFull = "promote-full"
)

// promoteRequested passes a promote request on to the deployer of the
// latest rollout: it writes dcv1.PromoteRequestAnnotation on the
// rollout's ReplicationController with the value `kubectl dc rollout
// promote` writes, which a client that may only patch the DeploymentConfig
// (Argo CD's promote and promote-full actions) cannot. It returns why it
// refused, in the command's words.
func (r *DeploymentConfigReconciler) promoteRequested(ctx context.Context, dc *dcv1.DeploymentConfig, latest *corev1.ReplicationController, full bool) (string, error) {
	if latest == nil {
		return fmt.Sprintf("no rollout of deploymentconfig %q is in progress", dc.Name), nil
	}
	if deployment.IsTerminal(deployment.Phase(latest)) || deployment.IsCancelled(latest) {
		return fmt.Sprintf("no rollout of deploymentconfig %q is in progress (latest rollout #%d is %s)",
			dc.Name, deployment.Version(latest), deployment.Phase(latest)), nil
	}
	encoded, err := encodedConfig(ctx, r.APIReader, latest)
	if err != nil {
		return "", err
	}
	value, refusal := promoteValue(&encoded.Spec.Strategy, latest, full)
	if refusal != "" {
		return refusal, nil
	}
	rc := latest.DeepCopy()
	patch := client.MergeFrom(rc.DeepCopy())
	rc.Annotations[dcv1.PromoteRequestAnnotation] = value
	if err := r.Client.Patch(ctx, rc, patch); err != nil {
		return "", fmt.Errorf("promote replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	r.Recorder.Eventf(dc, rc, corev1.EventTypeNormal, EventDeploymentPromoted, "Promote",
		"Promoting rollout #%d (%s=%s) at the request of %s", deployment.Version(rc), dcv1.PromoteRequestAnnotation, value, dcv1.RolloutRequestAnnotation)
	return "", nil
}

// promoteValue is the promote request for a running deployment of the
// strategy, or why there is none: with BlueGreen any value switches (the
// command writes "full"); with canary steps, "full" skips every remaining
// step, and a rollout paused at step k (a pause or an Inconclusive
// analysis) goes on with "k".
func promoteValue(s *dcv1.DeploymentStrategy, rc *corev1.ReplicationController, full bool) (value, refusal string) {
	version := deployment.Version(rc)
	switch {
	case s.Type == dcv1.DeploymentStrategyTypeBlueGreen && s.BlueGreenParams != nil:
		return dcv1.PromoteFull, ""
	case s.RollingParams == nil || len(s.RollingParams.Steps) == 0:
		return "", fmt.Sprintf("rollout #%d has nothing to promote: its strategy has no steps and is not BlueGreen", version)
	case full:
		return dcv1.PromoteFull, ""
	}
	step, total := rc.Annotations[dcv1.DeploymentStepAnnotation], rc.Annotations[dcv1.DeploymentStepsAnnotation]
	if step == "" {
		return "", fmt.Sprintf("rollout #%d is not at a step yet or past the last one; nothing to promote", version)
	}
	if rc.Annotations[dcv1.DeploymentPausedSinceAnnotation] == "" && rc.Annotations[dcv1.DeploymentPauseReasonAnnotation] == "" {
		return "", fmt.Sprintf("rollout #%d is at step %s of %s and not paused; use promote-full to skip the remaining steps", version, step, total)
	}
	return step, ""
}
