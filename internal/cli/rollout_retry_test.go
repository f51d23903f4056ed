package cli

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// stepState is what a canary deployer, cancelled at its pause, leaves on
// its RC: the step it was at, the pause, a promote request, and the
// records of an analysis and of a blue-green switch.
func stepState(rc *corev1.ReplicationController) {
	for k, v := range map[string]string{
		dcv1.DeploymentStepAnnotation:            "2",
		dcv1.DeploymentStepsAnnotation:           "2",
		dcv1.DeploymentWeightAnnotation:          "40",
		dcv1.DeploymentPausedSinceAnnotation:     "2026-03-01T11:00:00Z",
		dcv1.DeploymentPauseDurationAnnotation:   "5m0s",
		dcv1.DeploymentPauseReasonAnnotation:     string(dcv1.PauseReasonPause),
		dcv1.PromoteRequestAnnotation:            dcv1.PromoteFull,
		dcv1.DeploymentSwitchedAnnotation:        dcv1.SwitchedTrial,
		dcv1.AnalysisAnnotationPrefix + "step-1": "Inconclusive: metric \"errors\" was inconclusive",
	} {
		rc.Annotations[k] = v
	}
}

// TestRolloutRetryStartsTheStepsAgain checks that a retried canary does not
// resume where the cancelled one stopped: with its step left on the RC the
// new deployer went straight to the pause, with the new deployment at the 0
// replicas the fall-back left it at.
func TestRolloutRetryStartsTheStepsAgain(t *testing.T) {
	dc := newDC("web", 2)
	rc1 := newRC(t, dc, 1, dcv1.DeploymentPhaseComplete, 30*time.Minute, scaled(5, 5, 5, 5))
	rc2 := newRC(t, dc, 2, dcv1.DeploymentPhaseFailed, 5*time.Minute, scaled(0, 0, 0, 0), cancelled, stepState)
	f := newFixture(t, []runtime.Object{dc, rc1, rc2}...)
	out := f.run("rollout", "retry", "web").String()
	if !strings.Contains(out, "retrying rollout #2") {
		t.Fatalf("output:\n%s", out)
	}
	rc := f.getRC("web-2")
	if deployment.Phase(rc) != dcv1.DeploymentPhaseNew {
		t.Errorf("phase = %s, want New", deployment.Phase(rc))
	}
	for k, v := range rc.Annotations {
		if deployment.IsProgressAnnotation(k) {
			t.Errorf("annotation %s=%q survived the retry", k, v)
		}
	}
	if rc.Annotations[dcv1.DeploymentConfigAnnotation] != "web" || rc.Annotations[dcv1.EncodedDeploymentConfigAnnotation] == "" {
		t.Errorf("the retry removed the deployment's own annotations: %v", rc.Annotations)
	}
}

// TestRolloutRetryKeepsAFinalSwitch checks that a blue-green deployment
// switched to for good stays live through a retry: its deployer must not
// switch the active Service back.
func TestRolloutRetryKeepsAFinalSwitch(t *testing.T) {
	dc := newDC("web", 2)
	rc1 := newRC(t, dc, 1, dcv1.DeploymentPhaseComplete, 30*time.Minute, scaled(5, 5, 5, 5))
	final := func(rc *corev1.ReplicationController) {
		rc.Annotations[dcv1.DeploymentSwitchedAnnotation] = dcv1.SwitchedFinal
	}
	rc2 := newRC(t, dc, 2, dcv1.DeploymentPhaseFailed, 5*time.Minute, scaled(5, 5, 5, 5), cancelled, stepState, final)
	f := newFixture(t, []runtime.Object{dc, rc1, rc2}...)
	f.run("rollout", "retry", "web")
	rc := f.getRC("web-2")
	if got := rc.Annotations[dcv1.DeploymentSwitchedAnnotation]; got != dcv1.SwitchedFinal {
		t.Errorf("switched = %q, want %q", got, dcv1.SwitchedFinal)
	}
	if got := rc.Annotations[dcv1.DeploymentStepAnnotation]; got != "" {
		t.Errorf("step = %q survived the retry", got)
	}
}

// TestRolloutUndoLeaksNoStepState checks that the deployment undo starts
// is made from the restored template alone: the step records of the
// revision it goes back to (or of the failed latest) are not carried over.
func TestRolloutUndoLeaksNoStepState(t *testing.T) {
	dc := newDC("web", 2)
	rc1 := newRC(t, dc, 1, dcv1.DeploymentPhaseComplete, 30*time.Minute, scaled(5, 5, 5, 5), stepState)
	rc2 := newRC(t, dc, 2, dcv1.DeploymentPhaseFailed, 5*time.Minute, scaled(0, 0, 0, 0), cancelled, stepState)
	f := newFixture(t, []runtime.Object{dc, rc1, rc2}...)
	f.run("rollout", "undo", "web", "--to-revision", "1")
	restored := f.getDC("web")
	next := restored.DeepCopy()
	next.Status.LatestVersion = 3
	rc, err := deployment.New(next)
	if err != nil {
		t.Fatal(err)
	}
	for _, annotations := range []map[string]string{rc.Annotations, rc.Spec.Template.Annotations, restored.Annotations, restored.Spec.Template.Annotations} {
		for k, v := range annotations {
			if deployment.IsProgressAnnotation(k) {
				t.Errorf("annotation %s=%q leaked into the new deployment", k, v)
			}
		}
	}
}
