package controller

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// The kstatus conditions. Tools that judge a rollout from an object's status
// (kubectl wait, Helm's watcher, Flux, Argo CD through health.lua) follow
// sigs.k8s.io/cli-utils/pkg/kstatus: observedGeneration behind generation or
// Reconciling True is InProgress, Stalled True is Failed, Ready True is
// Current. observedGeneration catches up in the same status write that
// fires the spec's triggers, so once it equals generation these conditions
// speak of the rollout of that spec. docs/gitops.md has the table.

// readyState is what the kstatus conditions say: which one is True, why.
type readyState struct {
	condition dcv1.DeploymentConditionType // Ready, Reconciling or Stalled
	reason    string
	message   string
}

// conditions returns Ready, Reconciling and Stalled: the state's own
// condition True, the two others False, all with the state's reason and
// message.
func (s readyState) conditions() []dcv1.DeploymentCondition {
	types := []dcv1.DeploymentConditionType{dcv1.DeploymentReady, dcv1.DeploymentReconciling, dcv1.DeploymentStalled}
	out := make([]dcv1.DeploymentCondition, 0, len(types))
	for _, t := range types {
		status := corev1.ConditionFalse
		if t == s.condition {
			status = corev1.ConditionTrue
		}
		out = append(out, dcv1.DeploymentCondition{Type: t, Status: status, Reason: s.reason, Message: s.message})
	}
	return out
}

func reconciling(reason, format string, args ...any) readyState {
	return readyState{dcv1.DeploymentReconciling, reason, fmt.Sprintf(format, args...)}
}

// readiness judges the DeploymentConfig after its triggers were fired in this
// sync: status is the status being written (counts already summed), latest
// the deployment of status.latestVersion (nil when not created yet).
func readiness(dc *dcv1.DeploymentConfig, status *dcv1.DeploymentConfigStatus, latest *corev1.ReplicationController, createErr error) readyState {
	version := status.LatestVersion
	queued := (*QueuedError)(nil)
	switch {
	case dc.Spec.Paused:
		return reconciling(dcv1.PausedReason, "Deployment config is paused: nothing rolls out until 'kubectl dc rollout resume %s'", dc.Name)
	case !imagesResolved(dc):
		return reconciling(dcv1.WaitingForImageReason, "Waiting for the image trigger to resolve %s", strings.Join(unresolvedImages(dc), ", "))
	case version == 0 && hasEmptyImage(dc.Spec.Template):
		return reconciling(dcv1.WaitingForImageReason, "Waiting for an image: a container of the template has none")
	case version == 0:
		return readyState{dcv1.DeploymentReady, dcv1.ManualRolloutReason,
			fmt.Sprintf("No trigger starts a rollout: start one with 'kubectl dc rollout latest %s'", dc.Name)}
	case latest == nil && isInvalidAnalysis(createErr):
		// Nothing but a change of the spec starts this rollout: retrying
		// the same analysis fails the same way.
		return readyState{dcv1.DeploymentStalled, dcv1.InvalidAnalysisReason,
			fmt.Sprintf("Rollout #%d cannot start until the spec is fixed: %v", version, createErr)}
	case latest == nil && isPinUnavailable(createErr):
		// As for an invalid analysis: only a change of the pin helps.
		return readyState{dcv1.DeploymentStalled, dcv1.ConfigSnapshotPinUnavailableReason,
			fmt.Sprintf("Rollout #%d cannot start: %v", version, createErr)}
	case latest == nil && isInvalidHeaderRoute(createErr):
		return readyState{dcv1.DeploymentStalled, dcv1.InvalidHeaderRouteReason,
			fmt.Sprintf("Rollout #%d cannot start until the spec is fixed: %v", version, createErr)}
	case latest == nil && errors.As(createErr, &queued):
		// Waiting its turn: the reason says for what (the limits, a
		// policy's line, window, wave or breaker), the message until when.
		return reconciling(queued.ConditionReason(), "%s", queued.Error())
	case latest == nil && createErr != nil:
		return reconciling(dcv1.RolloutPendingReason, "Rollout #%d cannot be created yet: %v", version, createErr)
	case latest == nil:
		return reconciling(dcv1.RolloutPendingReason, "Rollout #%d is waiting for its replication controller to be created", version)
	}
	return deploymentReadiness(dc, status, latest)
}

// deploymentReadiness judges an existing latest deployment.
func deploymentReadiness(dc *dcv1.DeploymentConfig, status *dcv1.DeploymentConfigStatus, latest *corev1.ReplicationController) readyState {
	version := deployment.Version(latest)
	switch phase := deployment.Phase(latest); phase {
	case dcv1.DeploymentPhaseComplete:
		return completeReadiness(dc, status, latest)
	case dcv1.DeploymentPhaseFailed:
		if deployment.IsCancelled(latest) {
			return readyState{dcv1.DeploymentStalled, dcv1.RolloutCancelledReason,
				fmt.Sprintf("Rollout #%d was cancelled: retry it with 'kubectl dc rollout retry %s' or start a new one", version, dc.Name)}
		}
		why := latest.Annotations[dcv1.DeploymentStatusReasonAnnotation]
		if why == "" {
			why = "the rollout failed"
		}
		return readyState{dcv1.DeploymentStalled, dcv1.RolloutFailedReason,
			fmt.Sprintf("Rollout #%d failed: %s; the last complete version serves until a new rollout", version, why)}
	default:
		if waiting, ok := awaitingPromotion(latest); ok {
			return reconciling(dcv1.AwaitingPromotionReason, "Rollout #%d is %s: promote it with 'kubectl dc rollout promote %s' or abort it with 'kubectl dc rollout cancel %s'",
				version, waiting, dc.Name, dc.Name)
		}
		return reconciling(dcv1.RolloutInProgressReason, "Rollout #%d is in progress (%s)", version, phase)
	}
}

// isInvalidAnalysis reports whether the deployment was not created because
// an analysis of the strategy is invalid.
func isInvalidAnalysis(err error) bool {
	invalid := (*InvalidAnalysisError)(nil)
	return errors.As(err, &invalid)
}

// isInvalidHeaderRoute reports whether the deployment was not created
// because a header route of the strategy is invalid.
func isInvalidHeaderRoute(err error) bool {
	invalid := (*InvalidHeaderRouteError)(nil)
	return errors.As(err, &invalid)
}

// isPinUnavailable reports whether the deployment was not created because
// its pinned snapshots are gone.
func isPinUnavailable(err error) bool {
	pin := (*PinUnavailableError)(nil)
	return errors.As(err, &pin)
}

// awaitingPromotion says, in words, what a running deployment waits for
// when only a person ends the wait (see deployment.AwaitingPerson).
func awaitingPromotion(rc *corev1.ReplicationController) (string, bool) {
	w, ok := deployment.AwaitingPerson(rc)
	if !ok {
		return "", false
	}
	p := deployment.ProgressOf(rc)
	at := "paused"
	if p.Stage == deployment.StageSteps {
		at = fmt.Sprintf("paused at step %d of %d", p.Step, p.Steps)
	}
	switch {
	case w.Reason == dcv1.PauseReasonInconclusive:
		return at + ": an analysis was Inconclusive", true
	case w.Reason == dcv1.PauseReasonPromotion || p.Stage != deployment.StageSteps:
		return "waiting for promotion to the active Service", true
	}
	return at, true
}

// completeReadiness is Ready once the pods are what the spec asks for: the
// latest deployment has spec.replicas available pods (none for a test
// DeploymentConfig) and no other pods are left, as a Deployment's kstatus
// counts them.
func completeReadiness(dc *dcv1.DeploymentConfig, status *dcv1.DeploymentConfigStatus, latest *corev1.ReplicationController) readyState {
	version := deployment.Version(latest)
	want := dc.Spec.Replicas
	if dc.Spec.Test {
		want = 0
	}
	if deployment.Replicas(latest) != want || latest.Status.Replicas != want ||
		latest.Status.AvailableReplicas < want || status.Replicas != want {
		return reconciling(dcv1.ReplicasNotReadyReason, "Rollout #%d is complete; waiting for its pods: %d of %d updated, %d available, %d in all",
			version, status.UpdatedReplicas, want, status.AvailableReplicas, status.Replicas)
	}
	message := fmt.Sprintf("Rollout #%d is complete", version)
	if dc.Spec.Test {
		message += "; a test deployment keeps no pods"
	}
	if !templateMatches(dc, latest) {
		// Only without a ConfigChange trigger: with one, the change would
		// have fired in this sync.
		message += fmt.Sprintf("; the template changed since and no trigger rolls it out: 'kubectl dc rollout latest %s' does", dc.Name)
	}
	return readyState{dcv1.DeploymentReady, dcv1.RolloutCompleteReason, message}
}

// unresolvedImages names the images of the automatic ImageChange triggers
// that have not resolved one yet.
func unresolvedImages(dc *dcv1.DeploymentConfig) []string {
	var out []string
	for _, t := range dc.Spec.Triggers {
		p := t.ImageChangeParams
		if t.Type == dcv1.DeploymentTriggerOnImageChange && p != nil && p.Automatic && p.LastTriggeredImage == "" {
			out = append(out, p.From.Name)
		}
	}
	return out
}
