package e2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// A Recreate rollout over an older version runs its pre, mid and post hooks
// in order around the scaling, with each hook's output in the deployer's
// log, and ends with the new version at full size and the old one at 0.
func TestRecreateRunsPreMidAndPostHooksInOrder(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	hook := func(name string) *dcv1.LifecycleHook {
		return shellHook(dcv1.LifecycleHookFailurePolicyAbort, `echo "`+name+` hook of $DC_DEPLOYMENT_NAME in $DC_DEPLOYMENT_NAMESPACE"`)
	}
	createDC(t, ns, newDC("web", 2, recreate(hook("pre"), hook("mid"), hook("post"))))
	requireComplete(t, ns, "web", 1)

	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { setEnv(dc, "VERSION", "2") })
	requireComplete(t, ns, "web", 2)

	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> pre: Running hook pod ...",
		"pre hook of web-2 in "+ns,
		"--> pre: Success",
		"--> Scaling web-1 down to zero",
		"--> mid: Running hook pod ...",
		"mid hook of web-2 in "+ns,
		"--> mid: Success",
		"--> Scaling web-2 to 1",
		"--> Scaling web-2 to 2",
		"--> post: Running hook pod ...",
		"post hook of web-2 in "+ns,
		"--> post: Success",
		"--> Success",
	)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 2})
	for _, hookType := range []string{"pre", "mid", "post"} {
		pod := getPod(t, ns, deployment.HookPodName("web-2", hookType))
		if pod.Status.Phase != corev1.PodSucceeded {
			t.Errorf("hook pod %s is %s, want Succeeded", pod.Name, pod.Status.Phase)
		}
	}
	// The replicas settle before the post hook ends, and the conditions
	// follow the deployment's phase in a later sync: wait for both.
	dc := waitDC(t, ns, "web", "2 available replicas of rollout #2, and its conditions", func(dc *dcv1.DeploymentConfig) bool {
		return settled(2)(dc) && dc.Status.LatestVersion == 2 &&
			hasCondition(dc, dcv1.DeploymentProgressing, corev1.ConditionTrue, dcv1.NewReplicationControllerAvailableReason)
	})
	if dc.Status.LatestVersion != 2 ||
		!hasCondition(dc, dcv1.DeploymentAvailable, corev1.ConditionTrue, dcv1.MinimumReplicasAvailableReason) ||
		!hasCondition(dc, dcv1.DeploymentProgressing, corev1.ConditionTrue, dcv1.NewReplicationControllerAvailableReason) {
		t.Errorf("status %+v; want latest version 2, Available, Progressing with %s", dc.Status, dcv1.NewReplicationControllerAvailableReason)
	}
}

// A failing hook with failurePolicy Abort fails the rollout and leaves the
// previous version at full size: untouched when the pre hook fails, scaled
// back up (the automatic fall-back) when the mid hook fails after the
// Recreate strategy has scaled it down. Both the deployer and the hook pod
// end Failed.
func TestAbortingHookFailsTheRolloutAndFallsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hookType string
		// minAvailable is the fewest pods of web-1 available during the
		// failed rollout: the pre hook runs before web-1 is scaled down,
		// the mid hook after.
		minAvailable int
	}{
		{hookType: "pre", minAvailable: 2},
		{hookType: "mid", minAvailable: 0},
	} {
		t.Run(tc.hookType, func(t *testing.T) {
			t.Parallel()
			ns := dcNamespace(t)
			createDC(t, ns, newDC("web", 2, recreate(nil, nil, nil)))
			requireComplete(t, ns, "web", 1)

			pods := watchDCPods(t, ns, "web")
			failing := shellHook(dcv1.LifecycleHookFailurePolicyAbort, `echo "migration failed" >&2; exit 3`)
			updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
				params := dc.Spec.Strategy.RecreateParams
				if tc.hookType == "pre" {
					params.Pre = failing
				} else {
					params.Mid = failing
				}
				setEnv(dc, "VERSION", "2")
			})
			rc := requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)

			log := deployerLog(t, ns, "web")
			assertInOrder(t, log, "--> "+tc.hookType+": Running hook pod ...", "migration failed", "--> "+tc.hookType+": Failed")
			if strings.Contains(log, "--> Success") || strings.Contains(log, "--> Scaling web-2") {
				t.Errorf("the deployer went on after the %s hook failed:\n%s", tc.hookType, log)
			}
			if reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; !strings.HasPrefix(reason, "deployer pod failed") {
				t.Errorf("status reason of web-2 %q, want the deployer pod's failure", reason)
			}
			for _, name := range []string{deployment.DeployerPodName("web-2"), deployment.HookPodName("web-2", tc.hookType)} {
				if pod := getPod(t, ns, name); pod.Status.Phase != corev1.PodFailed {
					t.Errorf("pod %s is %s, want Failed", name, pod.Status.Phase)
				}
			}
			waitScaled(t, ns, map[string]int32{"web-1": 2, "web-2": 0})
			if _, minAvailable := pods.Stop(t); minAvailable != tc.minAvailable {
				t.Errorf("at worst %d pods were available during the rollout, want %d", minAvailable, tc.minAvailable)
			}
			// web-1's pods are the DeploymentConfig's; none is of the
			// latest version.
			waitDC(t, ns, "web", "the failure in its conditions, web-1's pods in its counts", func(dc *dcv1.DeploymentConfig) bool {
				s := dc.Status
				return s.Replicas == 2 && s.AvailableReplicas == 2 && s.UpdatedReplicas == 0 &&
					hasCondition(dc, dcv1.DeploymentAvailable, corev1.ConditionTrue, dcv1.MinimumReplicasAvailableReason) &&
					hasCondition(dc, dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.ProgressDeadlineExceededReason)
			})
		})
	}
}

// A hook with failurePolicy Retry is restarted until it succeeds; the
// deployer logs each retry, and the rollout completes.
func TestRetryHookRestartsUntilItSucceeds(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	// The hook counts its attempts in its HOME, which the local pod runtime
	// keeps across restarts of the container, and fails the first two. ($$(
	// is the shell's $(: a container command's $(VAR) is the kubelet's.)
	script := `n=$$(( $$(cat "$HOME/attempts" 2>/dev/null || echo 0) + 1 )); echo $n > "$HOME/attempts"; echo "attempt $n"; [ $n -ge 3 ]`
	createDC(t, ns, newDC("web", 1, recreate(shellHook(dcv1.LifecycleHookFailurePolicyRetry, script), nil, nil)))
	requireComplete(t, ns, "web", 1)

	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> pre: Running hook pod ...",
		"--> pre: Retrying hook pod (retry #1)",
		"--> pre: Retrying hook pod (retry #2)",
		"attempt 3",
		"--> pre: Success",
		"--> Success",
	)
	hook := getPod(t, ns, deployment.HookPodName("web-1", "pre"))
	if hook.Spec.RestartPolicy != corev1.RestartPolicyOnFailure || hook.Status.Phase != corev1.PodSucceeded ||
		len(hook.Status.ContainerStatuses) != 1 || hook.Status.ContainerStatuses[0].RestartCount != 2 {
		t.Errorf("hook pod: restartPolicy %s, phase %s, containers %+v; want OnFailure, Succeeded after 2 restarts",
			hook.Spec.RestartPolicy, hook.Status.Phase, hook.Status.ContainerStatuses)
	}
	waitScaled(t, ns, map[string]int32{"web-1": 1})
}

// A failing hook with failurePolicy Ignore only warns: the rollout goes on
// and completes.
func TestIgnoredHookFailureLetsTheRolloutGoOn(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, newDC("web", 2, recreate(nil, nil, shellHook(dcv1.LifecycleHookFailurePolicyIgnore, `echo "cache warm-up failed"; exit 1`))))
	requireComplete(t, ns, "web", 1)

	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Scaling web-1 to 2",
		"--> post: Running hook pod ...",
		"cache warm-up failed",
		"--> post: Failed",
		"--> post: Warning: the hook failed and its failurePolicy is Ignore, so the rollout goes on",
		"--> Success",
	)
	if pod := getPod(t, ns, deployment.HookPodName("web-1", "post")); pod.Status.Phase != corev1.PodFailed {
		t.Errorf("hook pod is %s, want Failed", pod.Status.Phase)
	}
	waitScaled(t, ns, map[string]int32{"web-1": 2})
}
