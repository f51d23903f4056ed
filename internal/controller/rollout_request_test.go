package controller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// TestRetryRequestStartsTheStepsAgain: a retry asked on the
// DeploymentConfig clears every record of how far the failed rollout went,
// as `kubectl dc rollout retry` does. Left on the RC, the step made the new
// deployer resume a canary at its pause with no canary pods.
func TestRetryRequestStartsTheStepsAgain(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	dc := withVersion(testDC(nil), 2)
	failed := rcOf(t, dc, 2, dcv1.DeploymentPhaseFailed, 0)
	for k, v := range map[string]string{
		dcv1.DeploymentCancelledAnnotation:       "true",
		dcv1.DeploymentStatusReasonAnnotation:    dcv1.DeploymentCancelledByUser,
		dcv1.DeploymentStepAnnotation:            "2",
		dcv1.DeploymentStepsAnnotation:           "2",
		dcv1.DeploymentWeightAnnotation:          "40",
		dcv1.DeploymentPausedSinceAnnotation:     "2026-03-01T11:00:00Z",
		dcv1.DeploymentPauseReasonAnnotation:     string(dcv1.PauseReasonPause),
		dcv1.PromoteRequestAnnotation:            dcv1.PromoteFull,
		dcv1.DeploymentSwitchedAnnotation:        dcv1.SwitchedTrial,
		dcv1.AnalysisAnnotationPrefix + "step-2": "Inconclusive: no data",
	} {
		failed.Annotations[k] = v
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(failed).Build()
	r := &DeploymentConfigReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10)}
	ctx := context.Background()
	refusal, err := r.retryRequested(ctx, dc, failed)
	if err != nil || refusal != "" {
		t.Fatalf("retryRequested = %q, %v", refusal, err)
	}
	got := &corev1.ReplicationController{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: failed.Namespace, Name: failed.Name}, got); err != nil {
		t.Fatal(err)
	}
	if deployment.Phase(got) != dcv1.DeploymentPhaseNew || deployment.IsCancelled(got) {
		t.Errorf("annotations = %v, want phase New and no cancel", got.Annotations)
	}
	for k, v := range got.Annotations {
		if deployment.IsProgressAnnotation(k) {
			t.Errorf("annotation %s=%q survived the retry", k, v)
		}
	}
}
