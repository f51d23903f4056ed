package controller

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// TestRetryRequestStartsTheStepsAgain: a retry asked on the
// DeploymentConfig resets the record of how far the failed rollout went,
// as `kubectl dc rollout retry` does: no step, wait, switch on trial or
// analysis is left, no request is left to act on, and no analysis outcome
// or log of the failed attempt stays. Left on the RC, the step made the new
// deployer resume a canary at its pause with no canary pods.
func TestRetryRequestStartsTheStepsAgain(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	dc := withVersion(testDC(nil), 2)
	failed := rcOf(t, dc, 2, dcv1.DeploymentPhaseFailed, 0)
	failed.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
	failed.Annotations[dcv1.DeploymentStatusReasonAnnotation] = dcv1.DeploymentCancelledByUser
	since := metav1.NewTime(time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC))
	deployment.SetProgress(failed, deployment.Progress{
		Seq: 5, Stage: deployment.StageSteps, Step: 2, Steps: 2, Weight: ptr(int32(40)), Switch: deployment.SwitchTrial,
		Wait:     &deployment.Wait{Gate: deployment.StepGate(2), Reason: dcv1.PauseReasonPause, Since: since},
		Analysis: &deployment.RunningAnalysis{Label: deployment.StepGate(2), Since: since},
		Runner:   deployment.Runner{Kind: deployment.RunnerController, Holder: "dc-controller", Since: &since},
		Log:      deployment.LogInAnnotation,
	})
	failed.Annotations[dcv1.PromoteRequestAnnotation] = deployment.Request{ID: "not-acted-on", Kind: deployment.RequestPromoteFull}.Encode()
	failed.Annotations[deployment.AnalysisKey(deployment.StepGate(2))] = "Inconclusive: no data"
	failed.Annotations[dcv1.DeploymentLogAnnotation] = "--> Waiting at step 2 of 2\n"
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
	p, err := deployment.ReadProgress(got)
	if err != nil {
		t.Fatal(err)
	}
	fresh := p
	fresh.Seq, fresh.Consumed = 0, nil
	if want := deployment.NewProgress(got.Name); !reflect.DeepEqual(fresh, want) {
		t.Errorf("progress after the retry = %+v, want %+v", fresh, want)
	}
	if req, ok := deployment.ReadRequest(got); ok && !p.HasConsumed(req.ID) {
		t.Errorf("promote request %+v survived the retry unanswered", req)
	}
	if outcomes := deployment.AnalysisOutcomes(got); len(outcomes) != 0 {
		t.Errorf("analysis outcomes %v survived the retry", outcomes)
	}
	if log := deployment.Log(got); log != "" {
		t.Errorf("log %q survived the retry", log)
	}
}
