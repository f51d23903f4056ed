package cli

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// stepState is what a canary runner, cancelled at its pause, leaves on its
// RC: the step it was at, the pause, a switch on trial, a promote request
// it did not act on yet, an analysis outcome and the log dc-controller
// kept of it.
func stepState(rc *corev1.ReplicationController) {
	deployment.SetProgress(rc, deployment.Progress{
		Seq: 7, Stage: deployment.StageSteps, Step: 2, Steps: 2, Weight: ptr.To[int32](40), Switch: deployment.SwitchTrial,
		Wait: &deployment.Wait{Gate: deployment.StepGate(2), Reason: dcv1.PauseReasonPause, Since: at(11, 0, 0),
			Duration: &metav1.Duration{Duration: 5 * time.Minute}},
		Analysis: &deployment.RunningAnalysis{Label: deployment.StepGate(2), Since: at(11, 1, 0)},
		Consumed: []string{"acted-on"},
		Runner:   deployment.Runner{Kind: deployment.RunnerController, Holder: "dc-controller", Since: ptr.To(at(10, 55, 0))},
		Log:      deployment.LogInAnnotation,
	})
	rc.Annotations[dcv1.PromoteRequestAnnotation] = deployment.Request{ID: "not-acted-on", Kind: deployment.RequestPromoteFull}.Encode()
	rc.Annotations[deployment.AnalysisKey(deployment.StepGate(1))] = "Inconclusive: metric \"errors\" was inconclusive"
	rc.Annotations[dcv1.DeploymentLogAnnotation] = "--> Waiting 5m0s at step 2 of 2\n"
}

// wantFreshStart checks that a deployment starts its strategy from the
// beginning when run again, with switch the switch it keeps: its record
// is new (to be run by its deployer pod, as every attempt starts), no
// request on it is left to act on, and nothing of the attempt before
// describes it.
func wantFreshStart(t *testing.T, rc *corev1.ReplicationController, keep deployment.Switch) {
	t.Helper()
	p, err := deployment.ReadProgress(rc)
	if err != nil {
		t.Fatal(err)
	}
	want := deployment.NewProgress(rc.Name)
	if keep != deployment.SwitchNone {
		want.Stage, want.Switch = deployment.StageSwitched, keep
	}
	got := p
	got.Seq, got.Consumed = 0, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("progress after the retry = %+v, want %+v", got, want)
	}
	if req, ok := deployment.ReadRequest(rc); ok && !p.HasConsumed(req.ID) {
		t.Errorf("promote request %+v survived the retry unanswered", req)
	}
	if outcomes := deployment.AnalysisOutcomes(rc); len(outcomes) != 0 {
		t.Errorf("analysis outcomes %v survived the retry", outcomes)
	}
	if log := deployment.Log(rc); log != "" {
		t.Errorf("log %q survived the retry", log)
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
	wantFreshStart(t, rc, deployment.SwitchNone)
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
		p := deployment.ProgressOf(rc)
		p.Stage, p.Switch = deployment.StageSwitched, deployment.SwitchFinal
		deployment.SetProgress(rc, p)
	}
	rc2 := newRC(t, dc, 2, dcv1.DeploymentPhaseFailed, 5*time.Minute, scaled(5, 5, 5, 5), cancelled, stepState, final)
	f := newFixture(t, []runtime.Object{dc, rc1, rc2}...)
	f.run("rollout", "retry", "web")
	rc := f.getRC("web-2")
	if !deployment.IsSwitchedFinal(rc) {
		t.Errorf("switch = %q, want %q", deployment.ProgressOf(rc).Switch, deployment.SwitchFinal)
	}
	wantFreshStart(t, rc, deployment.SwitchFinal)
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
	wantFreshStart(t, rc, deployment.SwitchNone)
	for _, annotations := range []map[string]string{rc.Spec.Template.Annotations, restored.Annotations, restored.Spec.Template.Annotations} {
		for k, v := range annotations {
			if isRolloutState(k) {
				t.Errorf("annotation %s=%q leaked into the restored template", k, v)
			}
		}
	}
}

// isRolloutState reports whether an annotation is state of one rollout:
// its progress record, a request on it, an analysis outcome, its log.
func isRolloutState(key string) bool {
	switch key {
	case dcv1.RolloutProgressAnnotation, dcv1.PromoteRequestAnnotation, dcv1.DeploymentLogAnnotation:
		return true
	}
	return strings.HasPrefix(key, dcv1.AnalysisAnnotationPrefix)
}
