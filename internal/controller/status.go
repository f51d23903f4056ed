package controller

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// computeStatus returns the status a DeploymentConfig should have given its
// deployments, oldest first. It keeps latestVersion and details, which only
// triggers and users change, and the conditions' timestamps where nothing
// changed. createErr is the error of a failed attempt to create the latest
// deployment in this sync, if any.
func computeStatus(dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController, createErr error, now metav1.Time) dcv1.DeploymentConfigStatus {
	status := dcv1.DeploymentConfigStatus{
		LatestVersion:      dc.Status.LatestVersion,
		ObservedGeneration: max(dc.Status.ObservedGeneration, dc.Generation),
		Selector:           dc.ScaleSelector(),
		Details:            dc.Status.Details,
		Conditions:         append([]dcv1.DeploymentCondition(nil), dc.Status.Conditions...),
	}
	var latest *corev1.ReplicationController
	for _, rc := range rcs {
		status.Replicas += rc.Status.Replicas
		status.AvailableReplicas += rc.Status.AvailableReplicas
		status.ReadyReplicas += rc.Status.ReadyReplicas
		if deployment.Version(rc) == dc.Status.LatestVersion {
			latest = rc
		}
	}
	if latest != nil {
		status.UpdatedReplicas = latest.Status.Replicas
	}
	status.UnavailableReplicas = max(0, status.Replicas-status.AvailableReplicas)

	setCondition(&status, availableCondition(dc, status.AvailableReplicas), now)
	if c := progressingCondition(dc, latest, createErr); c != nil {
		setCondition(&status, *c, now)
	}
	for _, c := range readiness(dc, &status, latest, createErr).conditions() {
		setCondition(&status, c, now)
	}
	return status
}

// availableCondition is True when at least replicas − maxUnavailable pods
// (maxUnavailable only counts for Rolling) are available, and at least one.
func availableCondition(dc *dcv1.DeploymentConfig, available int32) dcv1.DeploymentCondition {
	minimum := dc.Spec.Replicas - maxUnavailable(dc)
	if available > 0 && available >= minimum {
		return dcv1.DeploymentCondition{Type: dcv1.DeploymentAvailable, Status: corev1.ConditionTrue,
			Reason: dcv1.MinimumReplicasAvailableReason, Message: "Deployment config has minimum availability."}
	}
	return dcv1.DeploymentCondition{Type: dcv1.DeploymentAvailable, Status: corev1.ConditionFalse,
		Reason: dcv1.MinimumReplicasUnavailableReason, Message: "Deployment config does not have minimum availability."}
}

// maxUnavailable returns how many pods of the desired count may be
// unavailable: 0 except for Rolling, whose percentage rounds down.
func maxUnavailable(dc *dcv1.DeploymentConfig) int32 {
	p := dc.Spec.Strategy.RollingParams
	if dc.Spec.Strategy.Type != dcv1.DeploymentStrategyTypeRolling || p == nil || p.MaxUnavailable == nil {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(p.MaxUnavailable, int(dc.Spec.Replicas), false)
	if err != nil || n < 0 {
		return 0
	}
	return int32(min(n, int(dc.Spec.Replicas)))
}

// progressingCondition follows the latest deployment's phase. It returns nil
// when there is nothing to say yet (no deployment and no error).
func progressingCondition(dc *dcv1.DeploymentConfig, latest *corev1.ReplicationController, createErr error) *dcv1.DeploymentCondition {
	cond := func(status corev1.ConditionStatus, reason, message string) *dcv1.DeploymentCondition {
		return &dcv1.DeploymentCondition{Type: dcv1.DeploymentProgressing, Status: status, Reason: reason, Message: message}
	}
	if dc.Spec.Paused {
		return cond(corev1.ConditionUnknown, dcv1.PausedConfigReason, "Deployment config is paused")
	}
	if createErr != nil {
		// As OpenShift's, the message is the error, which names the RC (or,
		// for an analysis the API server could not check, the field).
		reason := dcv1.ReplicationControllerCreateErrorReason
		if invalid := (*InvalidAnalysisError)(nil); errors.As(createErr, &invalid) {
			reason = invalid.ConditionReason()
		}
		if missing := (*MissingConfigError)(nil); errors.As(createErr, &missing) {
			reason = missing.ConditionReason()
		}
		if pin := (*PinUnavailableError)(nil); errors.As(createErr, &pin) {
			reason = pin.ConditionReason()
		}
		if header := (*InvalidHeaderRouteError)(nil); errors.As(createErr, &header) {
			reason = header.ConditionReason()
		}
		if gateway := (*GatewayAPIError)(nil); errors.As(createErr, &gateway) {
			reason = gateway.ConditionReason()
		}
		if queued := (*QueuedError)(nil); errors.As(createErr, &queued) {
			// Waiting its turn is not a failure to progress.
			return cond(corev1.ConditionUnknown, queued.ConditionReason(), createErr.Error())
		}
		return cond(corev1.ConditionFalse, reason, createErr.Error())
	}
	if latest == nil {
		if wasPaused(dc) {
			return cond(corev1.ConditionUnknown, dcv1.ResumedConfigReason, "Deployment config is resumed")
		}
		return nil
	}
	name := latest.Name
	switch phase := deployment.Phase(latest); phase {
	case dcv1.DeploymentPhaseNew:
		// OpenShift's words; it sets them when it creates the RC.
		return cond(corev1.ConditionTrue, dcv1.NewReplicationControllerCreatedReason,
			fmt.Sprintf("Created new replication controller %q for version %d", name, deployment.Version(latest)))
	case dcv1.DeploymentPhasePending:
		// OpenShift's message; its reason is empty (see docs/openshift-differences.md).
		return cond(corev1.ConditionUnknown, dcv1.ReplicationControllerUpdatedReason,
			fmt.Sprintf("replication controller %q is waiting for pod %q to run", name, deployment.DeployerPodName(name)))
	case dcv1.DeploymentPhaseRunning:
		if waiting, ok := awaitingPromotion(latest); ok {
			// OpenShift's reason, and words a person can act on.
			return cond(corev1.ConditionTrue, dcv1.ReplicationControllerUpdatedReason,
				fmt.Sprintf("replication controller %q is %s: run 'kubectl dc rollout promote %s'", name, waiting, dc.Name))
		}
		return cond(corev1.ConditionTrue, dcv1.ReplicationControllerUpdatedReason, fmt.Sprintf("replication controller %q is progressing", name))
	case dcv1.DeploymentPhaseComplete:
		if wasPaused(dc) {
			return cond(corev1.ConditionUnknown, dcv1.ResumedConfigReason, "Deployment config is resumed")
		}
		return cond(corev1.ConditionTrue, dcv1.NewReplicationControllerAvailableReason, fmt.Sprintf("replication controller %q successfully rolled out", name))
	case dcv1.DeploymentPhaseFailed:
		if deployment.IsCancelled(latest) {
			return cond(corev1.ConditionFalse, dcv1.RolloutCancelledReason, fmt.Sprintf("rollout of replication controller %q was cancelled", name))
		}
		reason := latest.Annotations[dcv1.DeploymentStatusReasonAnnotation]
		if reason == "" {
			reason = "the rollout failed"
		}
		return cond(corev1.ConditionFalse, dcv1.ProgressDeadlineExceededReason, fmt.Sprintf("replication controller %q has failed progressing: %s", name, reason))
	default:
		return nil
	}
}

// wasPaused reports whether the last Progressing condition said paused, so
// that the first sync after a resume says resumed.
func wasPaused(dc *dcv1.DeploymentConfig) bool {
	c := findCondition(dc.Status.Conditions, dcv1.DeploymentProgressing)
	return c != nil && c.Reason == dcv1.PausedConfigReason
}

func findCondition(conds []dcv1.DeploymentCondition, t dcv1.DeploymentConditionType) *dcv1.DeploymentCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// setCondition adds or replaces a condition, moving lastTransitionTime only
// when the status changes and lastUpdateTime only when something changes.
func setCondition(status *dcv1.DeploymentConfigStatus, c dcv1.DeploymentCondition, now metav1.Time) {
	old := findCondition(status.Conditions, c.Type)
	if old == nil {
		c.LastTransitionTime, c.LastUpdateTime = now, now
		status.Conditions = append(status.Conditions, c)
		return
	}
	if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
		return
	}
	c.LastTransitionTime = old.LastTransitionTime
	if old.Status != c.Status {
		c.LastTransitionTime = now
	}
	c.LastUpdateTime = now
	*old = c
}

// countsOnly reports whether two statuses differ in their replica counts
// alone.
func countsOnly(a, b *dcv1.DeploymentConfigStatus) bool {
	x, y := *a, *b
	for _, s := range []*dcv1.DeploymentConfigStatus{&x, &y} {
		s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, s.ReadyReplicas, s.UnavailableReplicas = 0, 0, 0, 0, 0
	}
	return apiequality.Semantic.DeepEqual(&x, &y)
}

// rolloutMoving reports whether the latest deployment's rollout is under
// way and not waiting. Its replica counts then change with every step of
// the strategy, and the DeploymentConfig's status takes them when the
// rollout starts, waits or ends rather than at each step: a DeploymentConfig
// is a custom resource, whose writes cost the API server several times a
// ReplicationController's, and its deployments carry the live counts.
func rolloutMoving(dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) bool {
	for _, rc := range rcs {
		if deployment.Version(rc) != dc.Status.LatestVersion {
			continue
		}
		return !deployment.IsTerminal(deployment.Phase(rc)) && deployment.ProgressOf(rc).Wait == nil
	}
	return false
}
