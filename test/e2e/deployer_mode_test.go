package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// The suite's dc-controller runs in its default mode, pod; the annotation
// asks it to run a DeploymentConfig's rollouts in itself. These
// tests repeat, in that mode, sequences the pod-mode tests prove, and check
// what a user sees is the same: phases, scales, the log, the conditions.

// inController marks dc for in-controller rollouts.
func inController(dc *dcv1.DeploymentConfig) *dcv1.DeploymentConfig {
	if dc.Annotations == nil {
		dc.Annotations = map[string]string{}
	}
	dc.Annotations[dcv1.DeployerModeAnnotation] = dcv1.DeployerModeControllerWhenPossible
	return dc
}

// requireRanInController checks that the controller ran the deployment's
// rollout: the RC says so, and no deployer pod was ever made for it
// (a finished deployer pod is kept, so one made would still be there).
func requireRanInController(t *testing.T, ns, rcName string) {
	t.Helper()
	rc := getRC(t, ns, rcName)
	if got := deployment.ProgressOf(rc).Runner; got.Kind != deployment.RunnerController {
		t.Errorf("%s: runner %+v, want %q", rcName, got, deployment.RunnerController)
	}
	pod, err := clientset().CoreV1().Pods(ns).Get(context.Background(), deployment.DeployerPodName(rcName), metav1.GetOptions{})
	if err == nil {
		t.Errorf("%s: deployer pod %s exists (phase %s); the controller should have run the rollout", rcName, pod.Name, pod.Status.Phase)
	} else if ignoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

func TestInControllerRollingRolloutKeepsWithinSurgeAndAvailability(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, inController(newDC("web", 4, rolling(intstr.FromInt32(1), intstr.FromInt32(0)))))
	requireComplete(t, ns, "web", 1)
	waitScaled(t, ns, map[string]int32{"web-1": 4})

	pods := watchDCPods(t, ns, "web")
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { setEnv(dc, "VERSION", "2") })
	requireComplete(t, ns, "web", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 4})
	maxLive, minAvailable := pods.Stop(t)

	requireRanInController(t, ns, "web-1")
	requireRanInController(t, ns, "web-2")
	// The lines the deployer pod prints (TestRollingRolloutKeepsWithinSurgeAndAvailability).
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Scaling up web-2 from 0 to 4, scaling down web-1 from 4 to 0 (keep 4 pods available, don't exceed 5 pods)",
		"Scaling web-2 up to 1", "Scaling web-1 down to 3",
		"Scaling web-2 up to 4", "Scaling web-1 down to 0",
		"--> Success")
	if maxLive > 5 || minAvailable < 4 {
		t.Errorf("during the rollout %d pods ran at most and %d were available at least; want at most 5 and at least 4", maxLive, minAvailable)
	}
	waitDC(t, ns, "web", "4 available replicas of rollout #2", settled(4))
}

// A canary cancelled at its pause and retried starts its steps again, and
// promote ends the pause: TestCanaryRetriedAtPauseStartsOver in the
// controller.
func TestInControllerCanaryCancelRetryPromote(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, inController(newDC("web", 5, canary(setWeight(40), pauseStep(0)))))
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	waitPausedAt(t, ns, "web-2", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 3, "web-2": 2})
	// A paused rollout's log is on the RC within seconds of its last line;
	// this one is followed to its end below.
	mustDC(t, ns, "rollout", "cancel", "web")
	rc := requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	if reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; reason != dcv1.DeploymentCancelledByUser {
		t.Errorf("status reason of the cancelled rollout %q, want %q", reason, dcv1.DeploymentCancelledByUser)
	}
	assertInOrder(t, rc.Annotations[dcv1.DeploymentLogAnnotation],
		"--> Step 1 of 2: setWeight 40%: scaling web-2 to 2 and web-1 to 3",
		"--> Step 2 of 2: paused until 'kubectl dc rollout promote web'")
	waitScaled(t, ns, map[string]int32{"web-1": 5, "web-2": 0})

	mustDC(t, ns, "rollout", "retry", "web")
	waitPausedAt(t, ns, "web-2", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 3, "web-2": 2})
	mustDC(t, ns, "rollout", "promote", "web")
	requireComplete(t, ns, "web", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 5})
	requireRanInController(t, ns, "web-2")
	log := deployerLog(t, ns, "web")
	assertInOrder(t, log,
		"--> Step 1 of 2: setWeight 40%: scaling web-2 to 2 and web-1 to 3",
		"--> Step 2 of 2: paused until 'kubectl dc rollout promote web'",
		"--> Success")
	if strings.Count(log, "--> Step 1 of 2") != 1 {
		t.Errorf("the retried rollout's log holds the cancelled attempt's lines too:\n%s", log)
	}
}

// A rollout whose pods never become available fails at its timeout and the
// previous version is scaled back (the fall-back), as with a pod; then undo
// rolls back to rollout #1's template in a new rollout, also in the
// controller.
func TestInControllerFailureFallsBackAndUndoRollsBack(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, inController(newDC("web", 2, rolling(intstr.FromInt32(1), intstr.FromInt32(0)))))
	requireComplete(t, ns, "web", 1)
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy.RollingParams.TimeoutSeconds = new(int64(20))
		dc.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100k")}
	})
	rc := requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	const want = "timed out waiting for any update progress to be made"
	if reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; reason != "deployer failed: "+want {
		t.Errorf("status reason of web-2 %q, want the deployer's error", reason)
	}
	if log := deployerLog(t, ns, "web"); !strings.Contains(log, "error: "+want) {
		t.Errorf("deployer log lacks %q:\n%s", "error: "+want, log)
	}
	waitScaled(t, ns, map[string]int32{"web-1": 2, "web-2": 0})
	waitDC(t, ns, "web", "the failure in its conditions, web-1's pods in its counts", func(dc *dcv1.DeploymentConfig) bool {
		s := dc.Status
		return s.Replicas == 2 && s.AvailableReplicas == 2 && s.UpdatedReplicas == 0 &&
			hasCondition(dc, dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.ProgressDeadlineExceededReason)
	})

	mustDC(t, ns, "rollout", "undo", "web", "--to-revision", "1")
	requireComplete(t, ns, "web", 3)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 0, "web-3": 2})
	requireRanInController(t, ns, "web-3")
	if got := getRC(t, ns, "web-3").Spec.Template.Spec.Containers[0].Resources.Requests; len(got) != 0 {
		t.Errorf("rollout #3 runs with requests %v, want rollout #1's template (none)", got)
	}
}

// A rollout that needs a pod gets one whatever the annotation asks.
func TestInControllerModeStillRunsHooksInPods(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, inController(newDC("web", 1, recreate(shellHook(dcv1.LifecycleHookFailurePolicyAbort, "echo pre-hook"), nil, nil))))
	requireComplete(t, ns, "web", 1)
	rc := getRC(t, ns, "web-1")
	if got := deployment.ProgressOf(rc).Runner; got.Kind != deployment.RunnerPod {
		t.Errorf("web-1 ran in the controller (runner %+v), but its execNewPod hook needs a deployer pod", got)
	}
	getPod(t, ns, deployment.DeployerPodName("web-1"))
	assertInOrder(t, deployerLog(t, ns, "web"), "pre-hook", "--> Success")
}
