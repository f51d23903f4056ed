package controller

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// recordDesiredReplicas passes a scale of the DeploymentConfig during a
// rollout on to its deployer: the deployer of a canary re-reads the
// desired-replicas annotation of its RC before each step (as Argo Rollouts
// recomputes its counts), so `kubectl scale dc` or an HPA is honoured at
// the next step rather than only once the rollout is over. Strategies that
// do not re-read it end at the old count, and the fall-back then scales
// the deployment to spec.replicas, as before.
func (r *DeploymentConfigReconciler) recordDesiredReplicas(ctx context.Context, dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) error {
	want := strconv.Itoa(int(dc.Spec.Replicas))
	if rc.Annotations[dcv1.DesiredReplicasAnnotation] == want {
		return nil
	}
	patch := client.MergeFromWithOptions(rc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if rc.Annotations == nil {
		rc.Annotations = map[string]string{}
	}
	rc.Annotations[dcv1.DesiredReplicasAnnotation] = want
	err := r.Client.Patch(ctx, rc, patch)
	if apierrors.IsConflict(err) {
		return fmt.Errorf("%w: replicationcontroller %s/%s changed since it was read", errCacheBehind, rc.Namespace, rc.Name)
	}
	if err := client.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("record %d desired replicas on replicationcontroller %s/%s: %w", dc.Spec.Replicas, rc.Namespace, rc.Name, err)
	}
	return nil
}
