package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// A Rolling rollout of 4 replicas over an older version alternates scaling
// the new version up and the old one down, and at no moment runs more than
// desired+maxSurge pods or has fewer than desired−maxUnavailable available.
func TestRollingRolloutKeepsWithinSurgeAndAvailability(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                     string
		maxSurge, maxUnavailable intstr.IntOrString
		// maxLive and minAvailable are desired+maxSurge and
		// desired−maxUnavailable: 25% of 4 is 1.
		maxLive, minAvailable int
		// wantInOrder are lines of the deployer's log, in order.
		wantInOrder []string
	}{{
		name:     "surge 1, unavailable 0",
		maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(0),
		maxLive: 5, minAvailable: 4,
		// With no pod to spare, each step waits for the previous one.
		wantInOrder: []string{
			"--> Scaling up web-2 from 0 to 4, scaling down web-1 from 4 to 0 (keep 4 pods available, don't exceed 5 pods)",
			"Scaling web-2 up to 1", "Scaling web-1 down to 3",
			"Scaling web-2 up to 2", "Scaling web-1 down to 2",
			"Scaling web-2 up to 3", "Scaling web-1 down to 1",
			"Scaling web-2 up to 4", "Scaling web-1 down to 0",
			"--> Success",
		},
	}, {
		name:     "25% and 25%",
		maxSurge: intstr.FromString("25%"), maxUnavailable: intstr.FromString("25%"),
		maxLive: 5, minAvailable: 3,
		// How far each step goes depends on how soon pods are available.
		wantInOrder: []string{
			"--> Scaling up web-2 from 0 to 4, scaling down web-1 from 4 to 0 (keep 3 pods available, don't exceed 5 pods)",
			"Scaling web-2 up to 1", "Scaling web-2 up to 4", "--> Success",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := dcNamespace(t)
			createDC(t, ns, newDC("web", 4, rolling(tc.maxSurge, tc.maxUnavailable)))
			requireComplete(t, ns, "web", 1)
			waitScaled(t, ns, map[string]int32{"web-1": 4})

			pods := watchDCPods(t, ns, "web")
			updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { setEnv(dc, "VERSION", "2") })
			requireComplete(t, ns, "web", 2)
			waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 4})
			maxLive, minAvailable := pods.Stop(t)

			log := deployerLog(t, ns, "web")
			assertInOrder(t, log, tc.wantInOrder...)
			if !strings.Contains(log, "Scaling web-1 down to 0") {
				t.Errorf("web-1 was not scaled down to 0:\n%s", log)
			}
			if maxLive > tc.maxLive || minAvailable < tc.minAvailable {
				t.Errorf("during the rollout %d pods ran at most and %d were available at least; want at most %d and at least %d",
					maxLive, minAvailable, tc.maxLive, tc.minAvailable)
			}
			waitDC(t, ns, "web", "4 available replicas of rollout #2", settled(4))
		})
	}
}

// A Custom strategy's command runs in the deployer pod and drives the
// rollout with dc-deploy: half of it, its own step, then the rest.
func TestCustomStrategyRollsOutInSteps(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	strategy := rolling(intstr.FromInt32(1), intstr.FromInt32(0))
	strategy.Type = dcv1.DeploymentStrategyTypeCustom
	strategy.CustomParams = &dcv1.CustomDeploymentStrategyParams{
		Command: []string{"/bin/sh", "-c", `dc-deploy --until=50% && echo "checking the canaries of $DC_DEPLOYMENT_NAME" && dc-deploy`},
	}
	createDC(t, ns, newDC("web", 4, strategy))
	requireComplete(t, ns, "web", 1)
	assertInOrder(t, deployerLog(t, ns, "web"), "--> Reached 50%", "checking the canaries of web-1", "--> Success")

	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { setEnv(dc, "VERSION", "2") })
	requireComplete(t, ns, "web", 2)
	// The first dc-deploy stops once web-2 has half the replicas; the
	// second goes on from there.
	assertInOrder(t, deployerLog(t, ns, "web"),
		"Scaling web-2 up to 2",
		"--> Reached 50%",
		"checking the canaries of web-2",
		"Scaling web-2 up to 4",
		"Scaling web-1 down to 0",
		"--> Success",
	)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 4})
}

// When the new version's pods never become available (they ask for more
// CPU than any node has, so they stay Pending), the rollout fails after the
// strategy's timeoutSeconds with the reason in the deployer's log, and the
// previous version is back at full size.
func TestUnavailablePodsFailTheRolloutAtTheTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		strategy dcv1.DeploymentStrategy
		// timeout sets the strategy's timeoutSeconds.
		timeout func(*dcv1.DeploymentStrategy, int64)
		// wantError is the deployer's last word; NS stands for the namespace.
		wantError string
	}{{
		name:     "Recreate",
		strategy: recreate(nil, nil, nil),
		timeout:  func(s *dcv1.DeploymentStrategy, n int64) { s.RecreateParams.TimeoutSeconds = &n },
		// Recreate waits for its first pod to be available.
		wantError: "error: pods for rc 'NS/web-2' took longer than 20 seconds to become available",
	}, {
		name:     "Rolling",
		strategy: rolling(intstr.FromInt32(1), intstr.FromInt32(0)),
		timeout:  func(s *dcv1.DeploymentStrategy, n int64) { s.RollingParams.TimeoutSeconds = &n },
		// Rolling cannot scale web-1 down before web-2 has an available pod.
		wantError: "error: timed out waiting for any update progress to be made",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := dcNamespace(t)
			createDC(t, ns, newDC("web", 2, tc.strategy))
			requireComplete(t, ns, "web", 1)

			updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
				// Long enough for the scale-down before it on a loaded
				// machine: only the new pods' availability may time out.
				tc.timeout(&dc.Spec.Strategy, 20)
				dc.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100k"),
				}
			})
			rc := requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)

			want := strings.ReplaceAll(tc.wantError, "NS", ns)
			if log := deployerLog(t, ns, "web"); !strings.Contains(log, want) {
				t.Errorf("deployer log lacks %q:\n%s", want, log)
			}
			if reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; !strings.HasPrefix(reason, "deployer pod failed") {
				t.Errorf("status reason of web-2 %q, want the deployer pod's failure", reason)
			}
			waitScaled(t, ns, map[string]int32{"web-1": 2, "web-2": 0})
			waitDC(t, ns, "web", "the failure in its conditions, web-1's pods in its counts", func(dc *dcv1.DeploymentConfig) bool {
				s := dc.Status
				return s.Replicas == 2 && s.AvailableReplicas == 2 && s.UpdatedReplicas == 0 &&
					hasCondition(dc, dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.ProgressDeadlineExceededReason)
			})
		})
	}
}

// minReadySeconds holds a rollout until its pods have been ready that long:
// the deployer ends no sooner than 10 s after the pod became ready.
func TestMinReadySecondsHoldsTheRollout(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	dc := newDC("web", 1, recreate(nil, nil, nil))
	dc.Spec.MinReadySeconds = 10
	createDC(t, ns, dc)
	requireComplete(t, ns, "web", 1)

	pods, err := podsOf(t.Context(), ns, "web-1")
	if err != nil || len(pods) != 1 {
		t.Fatalf("web-1 has pods %v (%v), want 1", pods, err)
	}
	var ready time.Time
	for _, c := range pods[0].Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready = c.LastTransitionTime.Time
		}
	}
	done := containerTerminated(getPod(t, ns, deployment.DeployerPodName("web-1")))
	if ready.IsZero() || done == nil {
		t.Fatalf("pod ready at %v, deployer ended %+v; want both", ready, done)
	}
	// Both times are whole seconds, rounded down: 10 s can show as 9.
	if held := done.FinishedAt.Sub(ready); held < 9*time.Second {
		t.Errorf("the deployer ended %s after the pod became ready, want at least minReadySeconds (10s)", held)
	}
	waitDC(t, ns, "web", "1 available replica", settled(1))
}

// A test DeploymentConfig runs its rollout with its replicas, then keeps 0;
// scaling it does not bring pods back.
func TestTestDeploymentConfigEndsAtZero(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	dc := newDC("web", 2, recreate(nil, nil, nil))
	dc.Spec.Test = true
	pods := watchDCPods(t, ns, "web")
	createDC(t, ns, dc)
	requireComplete(t, ns, "web", 1)
	waitScaled(t, ns, map[string]int32{"web-1": 0})
	if maxLive, _ := pods.Stop(t); maxLive != 2 {
		t.Errorf("the test rollout ran at most %d pods, want its 2 replicas", maxLive)
	}
	assertInOrder(t, deployerLog(t, ns, "web"), "--> Scaling web-1 to 2", "--> Success")

	kubectl(t, "scale", "dc", "web", "-n", ns, "--replicas=3")
	waitDC(t, ns, "web", "the new scale seen", func(dc *dcv1.DeploymentConfig) bool {
		return dc.Spec.Replicas == 3 && dc.Status.ObservedGeneration >= dc.Generation
	})
	if rc := getRC(t, ns, "web-1"); deployment.Replicas(rc) != 0 {
		t.Errorf("scaling the test DC scaled web-1 to %d", deployment.Replicas(rc))
	}
	assertMatches(t, "kubectl dc status", mustDC(t, ns, "status"),
		`^dc/web deploys registry.k8s.io/pause:3.10 \(test\)\n  test deployment #1 deployed .+ ago$`)
}

// A config change while a rollout runs cancels it; the new rollout starts
// once the old deployer has stopped, and completes.
func TestConfigChangeSupersedesARunningRollout(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	// Rollout #1 never gets past its pre hook.
	pre := shellHook(dcv1.LifecycleHookFailurePolicyAbort, `[ "$DC_DEPLOYMENT_NAME" != web-1 ] || exec sleep 300`)
	createDC(t, ns, newDC("web", 1, recreate(pre, nil, nil)))
	waitPodRunning(t, ns, deployment.HookPodName("web-1", "pre"))

	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { setEnv(dc, "VERSION", "2") })
	requireComplete(t, ns, "web", 2)
	rc := getRC(t, ns, "web-1")
	if deployment.Phase(rc) != dcv1.DeploymentPhaseFailed || !deployment.IsCancelled(rc) ||
		rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] != dcv1.DeploymentCancelledNewerDeploymentExists {
		t.Errorf("web-1 annotations %v, want Failed, cancelled because a newer deployment was found running", rc.Annotations)
	}
	waitPodGone(t, ns, deployment.HookPodName("web-1", "pre"))
	waitPodGone(t, ns, deployment.DeployerPodName("web-1"))
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 1})
}
