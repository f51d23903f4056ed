package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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

// promoteRequested passes a promote request on to the runner of the
// latest rollout: it writes the request `kubectl dc rollout promote`
// writes (deployment.Promotion) on the rollout's ReplicationController, which a client that may only patch the DeploymentConfig
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
	req, what, err := deployment.Promotion(latest, &encoded.Spec.Strategy, full)
	if err != nil {
		return err.Error(), nil
	}
	patch, err := deployment.RequestPatch(req)
	if err != nil {
		return "", err
	}
	if err := r.Client.Patch(ctx, latest.DeepCopy(), client.RawPatch(types.MergePatchType, patch)); err != nil {
		return "", fmt.Errorf("promote replicationcontroller %s/%s: %w", latest.Namespace, latest.Name, err)
	}
	r.Recorder.Eventf(dc, latest, corev1.EventTypeNormal, EventDeploymentPromoted, "Promote",
		"Promoting rollout #%d (%s) at the request of %s", deployment.Version(latest), what, dcv1.RolloutRequestAnnotation)
	return "", nil
}
