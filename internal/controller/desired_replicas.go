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

// recordDesiredReplicas passes a scale of a canary's DeploymentConfig
// during its rollout on to the deployer: the deployer of a canary re-reads
// the desired-replicas annotation of its RC before each step (as Argo
// Rollouts recomputes its counts), so `kubectl scale dc` or an HPA is
// honoured at the next step rather than only once the rollout is over.
// The other strategies plan their rollout once, at the count the
// annotation had then, which it must go on saying; the fall-back scales
// their deployment to spec.replicas once it is complete, as OpenShift does.
func (r *DeploymentConfigReconciler) recordDesiredReplicas(ctx context.Context, dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) error {
	canary := dc.Spec.Strategy.Type == dcv1.DeploymentStrategyTypeRolling &&
		dc.Spec.Strategy.RollingParams != nil && len(dc.Spec.Strategy.RollingParams.Steps) > 0
	want := strconv.Itoa(int(dc.Spec.Replicas))
	if !canary || rc.Annotations[dcv1.DesiredReplicasAnnotation] == want {
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
