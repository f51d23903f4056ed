package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Event reasons of rollout requests (dcv1.RolloutRequestAnnotation).
const (
	EventRolloutRequestRefused = "RolloutRequestRefused"
	EventDeploymentRetried     = "DeploymentRetried"
)

// Values of dcv1.RolloutRequestAnnotation.
const (
	rolloutRequestCancel = "cancel"
	rolloutRequestRetry  = "retry"
)

// handleRolloutRequest acts on a cancel or retry request as `kubectl dc
// rollout cancel/retry` do, or refuses it with an event saying why (in the
// command's words), then removes the request. A retry waits, requeued, for
// the old deployer and hook pods to be gone before the deployment goes back
// to New, so that the new deployer pod, of the same name, is never taken
// for the old one.
func (r *DeploymentConfigReconciler) handleRolloutRequest(ctx context.Context, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController, request string) (reconcile.Result, error) {
	refusal, err := r.actOnRequest(ctx, dc, rcs, request)
	if errors.Is(err, errWaitingForPods) {
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if refusal != "" {
		r.Recorder.Eventf(dc, nil, corev1.EventTypeWarning, EventRolloutRequestRefused, "Refuse",
			"%s=%s refused: %s", dcv1.RolloutRequestAnnotation, request, refusal)
	}
	return reconcile.Result{}, r.clearRolloutRequest(ctx, dc)
}

// errWaitingForPods says a retry waits for the old deployer pods to go.
var errWaitingForPods = errors.New("waiting for the deployer pods of the failed deployment to go")

// actOnRequest performs the request and returns why it was refused, if it
// was.
func (r *DeploymentConfigReconciler) actOnRequest(ctx context.Context, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController, request string) (string, error) {
	switch request {
	case rolloutRequestCancel:
		if dc.Spec.Paused {
			return "unable to cancel paused deployment: resume it first", nil
		}
		return r.cancelRequested(ctx, dc, rcs)
	case rolloutRequestRetry:
		if dc.Spec.Paused {
			return "unable to retry paused deployment: resume it first", nil
		}
		return r.retryRequested(ctx, dc, findVersion(rcs, dc.Status.LatestVersion))
	case rolloutRequestPromote, rolloutRequestPromoteFull:
		return r.promoteRequested(ctx, dc, findVersion(rcs, dc.Status.LatestVersion), request == rolloutRequestPromoteFull)
	}
	return fmt.Sprintf("expected %s, %s, %s or %s", rolloutRequestCancel, rolloutRequestRetry, rolloutRequestPromote, rolloutRequestPromoteFull), nil
}

// cancelRequested cancels every deployment still running.
func (r *DeploymentConfigReconciler) cancelRequested(ctx context.Context, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) (string, error) {
	cancelled := 0
	for _, rc := range rcs {
		if deployment.IsTerminal(deployment.Phase(rc)) {
			continue
		}
		cancelled++
		if deployment.IsCancelled(rc) {
			continue
		}
		if err := cancelDeployment(ctx, r.Client, rc, dcv1.DeploymentCancelledByUser); err != nil {
			return "", fmt.Errorf("cancel %s: %w", rc.Name, err)
		}
		r.Recorder.Eventf(dc, rc, corev1.EventTypeNormal, EventDeploymentCancelled, "Cancel",
			"Cancelled deployment %q at the request of %s", rc.Name, dcv1.RolloutRequestAnnotation)
	}
	if cancelled == 0 {
		return "no rollout is in progress", nil
	}
	return "", nil
}

// retryRequested runs a failed latest deployment again, from its first
// step.
func (r *DeploymentConfigReconciler) retryRequested(ctx context.Context, dc *dcv1.DeploymentConfig, latest *corev1.ReplicationController) (string, error) {
	if latest == nil {
		return fmt.Sprintf("deploymentconfig %q has no rollout to retry", dc.Name), nil
	}
	if phase := deployment.Phase(latest); phase != dcv1.DeploymentPhaseFailed {
		return fmt.Sprintf("rollout #%d is %s; only failed deployments can be retried", dc.Status.LatestVersion, phase), nil
	}
	gone, err := r.deleteDeployerPods(ctx, latest)
	if err != nil {
		return "", err
	}
	if !gone {
		return "", errWaitingForPods
	}
	// The strategy starts again: a step left on the RC would resume a
	// canary at its pause with no canary pods (see deployment.RetryPatch).
	patch, err := deployment.RetryPatch(latest)
	if err != nil {
		return "", err
	}
	if err := r.Client.Patch(ctx, latest.DeepCopy(), client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsConflict(err) {
			return "", errWaitingForPods
		}
		return "", fmt.Errorf("retry replicationcontroller %s/%s: %w", latest.Namespace, latest.Name, err)
	}
	r.Recorder.Eventf(dc, latest, corev1.EventTypeNormal, EventDeploymentRetried, "Retry",
		"Retrying rollout #%d at the request of %s", deployment.Version(latest), dcv1.RolloutRequestAnnotation)
	return "", nil
}

// deleteDeployerPods deletes the deployment's deployer and hook pods, asking
// the API server (finished pods are not cached); it reports whether none is
// left.
func (r *DeploymentConfigReconciler) deleteDeployerPods(ctx context.Context, rc *corev1.ReplicationController) (bool, error) {
	pods := &metav1.PartialObjectMetadataList{}
	pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := r.APIReader.List(ctx, pods, client.InNamespace(rc.Namespace), client.MatchingLabels{dcv1.DeployerPodForDeploymentLabel: rc.Name}); err != nil {
		return false, fmt.Errorf("list deployer pods of %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil {
			continue
		}
		if err := r.Client.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		log.FromContext(ctx).Info("deleted the pod of a deployment to retry", "pod", pod.Name)
	}
	return len(pods.Items) == 0, nil
}

// clearRolloutRequest removes the request annotation, on the condition that
// the DeploymentConfig is the version read (a newer request is not lost).
func (r *DeploymentConfigReconciler) clearRolloutRequest(ctx context.Context, dc *dcv1.DeploymentConfig) error {
	patch := client.MergeFromWithOptions(dc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	delete(dc.Annotations, dcv1.RolloutRequestAnnotation)
	if err := r.Client.Patch(ctx, dc, patch); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("remove %s from %s/%s: %w", dcv1.RolloutRequestAnnotation, dc.Namespace, dc.Name, err)
	}
	return nil
}
