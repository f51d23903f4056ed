package controller

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// TestProgressingMessagesMatchOpenShift: the Progressing condition says
// what OpenShift's says in the same state (docs/openshift-differences.md
// lists where the reason or message still differs, and why).
func TestProgressingMessagesMatchOpenShift(t *testing.T) {
	dc := withVersion(testDC(nil), 2)
	cancelled := rcOf(t, dc, 2, dcv1.DeploymentPhaseFailed, 0)
	cancelled.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
	cases := []struct {
		name      string
		latest    *corev1.ReplicationController
		createErr error
		status    corev1.ConditionStatus
		reason    string
		message   string
	}{
		{"just created", rcOf(t, dc, 2, dcv1.DeploymentPhaseNew, 0), nil, corev1.ConditionTrue,
			dcv1.NewReplicationControllerCreatedReason, `Created new replication controller "web-2" for version 2`},
		{"pending", rcOf(t, dc, 2, dcv1.DeploymentPhasePending, 0), nil, corev1.ConditionUnknown,
			dcv1.ReplicationControllerUpdatedReason, `replication controller "web-2" is waiting for pod "web-2-deploy" to run`},
		{"running", rcOf(t, dc, 2, dcv1.DeploymentPhaseRunning, 0), nil, corev1.ConditionTrue,
			dcv1.ReplicationControllerUpdatedReason, `replication controller "web-2" is progressing`},
		{"complete", rcOf(t, dc, 2, dcv1.DeploymentPhaseComplete, 4), nil, corev1.ConditionTrue,
			dcv1.NewReplicationControllerAvailableReason, `replication controller "web-2" successfully rolled out`},
		{"cancelled", cancelled, nil, corev1.ConditionFalse,
			dcv1.RolloutCancelledReason, `rollout of replication controller "web-2" was cancelled`},
		{"create failed: the error is the message", nil, errors.New(`replicationcontrollers "web-2" is forbidden: exceeded quota`),
			corev1.ConditionFalse, dcv1.ReplicationControllerCreateErrorReason, `replicationcontrollers "web-2" is forbidden: exceeded quota`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := progressingCondition(dc, tc.latest, tc.createErr)
			if c == nil {
				t.Fatal("no condition")
			}
			if c.Status != tc.status || c.Reason != tc.reason || c.Message != tc.message {
				t.Errorf("got %s %s %q, want %s %s %q", c.Status, c.Reason, c.Message, tc.status, tc.reason, tc.message)
			}
		})
	}
}

// TestStatusCountsWaitForTheRolloutToSettle: while the latest rollout
// moves, a change of replica counts alone is not written; it is once the
// rollout waits or ends, and any other change is written at once.
func TestStatusCountsWaitForTheRolloutToSettle(t *testing.T) {
	dc := withVersion(testDC(nil), 2)
	waiting := rcOf(t, dc, 2, dcv1.DeploymentPhaseRunning, 1)
	p := deployment.NewProgress(waiting.Name)
	p.Wait = &deployment.Wait{Gate: deployment.StepGate(1), Reason: dcv1.PauseReasonPause}
	deployment.SetProgress(waiting, p)
	before := dcv1.DeploymentConfigStatus{LatestVersion: 2, Replicas: 4, UpdatedReplicas: 0, AvailableReplicas: 4}
	counts := before
	counts.Replicas, counts.UpdatedReplicas = 5, 1
	condition := before
	condition.Conditions = []dcv1.DeploymentCondition{{Type: dcv1.DeploymentAvailable, Status: corev1.ConditionFalse}}
	cases := []struct {
		name   string
		latest *corev1.ReplicationController
		after  dcv1.DeploymentConfigStatus
		write  bool
	}{
		{"counts while the rollout moves", rcOf(t, dc, 2, dcv1.DeploymentPhaseRunning, 1), counts, false},
		{"counts while its deployer pod is pending", rcOf(t, dc, 2, dcv1.DeploymentPhasePending, 0), counts, false},
		{"a condition while the rollout moves", rcOf(t, dc, 2, dcv1.DeploymentPhaseRunning, 1), condition, true},
		{"counts while the rollout waits", waiting, counts, true},
		{"counts once the rollout is complete", rcOf(t, dc, 2, dcv1.DeploymentPhaseComplete, 4), counts, true},
		{"counts once the rollout failed", rcOf(t, dc, 2, dcv1.DeploymentPhaseFailed, 0), counts, true},
		{"counts with no deployment of the latest version", nil, counts, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var rcs []*corev1.ReplicationController
			if tc.latest != nil {
				rcs = append(rcs, tc.latest)
			}
			skipped := countsOnly(&before, &tc.after) && rolloutMoving(dc, rcs)
			if skipped == tc.write {
				t.Errorf("written: %t, want %t", !skipped, tc.write)
			}
		})
	}
}
