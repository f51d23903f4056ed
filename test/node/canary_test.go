package node

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// podCount watches the pods of a DeploymentConfig and the replicas its
// deployments ask for, and keeps the most of each seen at once.
type podCount struct {
	mu                sync.Mutex
	live              map[string]bool
	asked             map[string]int32
	maxLive, maxAsked int
}

// watchPodCount starts counting the live pods (not terminating, not
// finished) labelled app=name and the replicas of its RCs.
func watchPodCount(t *testing.T, ns, name string) *podCount {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pc := &podCount{live: map[string]bool{}, asked: map[string]int32{}}
	selector := labels.SelectorFromSet(labels.Set{"app": name}).String()
	pods, err := suite.clientset.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		cancel()
		t.Fatalf("watching the pods of %s: %v", name, err)
	}
	rcs, err := suite.clientset.CoreV1().ReplicationControllers(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		pods.Stop()
		t.Fatalf("watching the replication controllers: %v", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for ev := range pods.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				pc.pod(pod, string(ev.Type) == "DELETED")
			}
		}
	})
	wg.Go(func() {
		for ev := range rcs.ResultChan() {
			if rc, ok := ev.Object.(*corev1.ReplicationController); ok && rc.Annotations[dcv1.DeploymentConfigAnnotation] == name {
				pc.rc(rc)
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		pods.Stop()
		rcs.Stop()
		wg.Wait()
	})
	return pc
}

func (pc *podCount) pod(pod *corev1.Pod, deleted bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	finished := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	pc.live[pod.Name] = !deleted && !finished && pod.DeletionTimestamp == nil
	n := 0
	for _, live := range pc.live {
		if live {
			n++
		}
	}
	pc.maxLive = max(pc.maxLive, n)
}

func (pc *podCount) rc(rc *corev1.ReplicationController) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if rc.Spec.Replicas != nil {
		pc.asked[rc.Name] = *rc.Spec.Replicas
	}
	var n int32
	for _, r := range pc.asked {
		n += r
	}
	pc.maxAsked = max(pc.maxAsked, int(n))
}

// atMost checks that neither the live pods nor the replicas asked for ever
// went over limit.
func (pc *podCount) atMost(t *testing.T, limit int) {
	t.Helper()
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.maxLive > limit || pc.maxAsked > limit {
		t.Errorf("at most %d live pods and %d replicas asked for at once, want at most %d", pc.maxLive, pc.maxAsked, limit)
	}
}

// The maxSurge sequence on real containers: 4 replicas, maxSurge 0,
// setWeight 30, pause. The deployments never ask for more than 4 pods nor
// run more, and at the pause a Service selecting the DeploymentConfig's
// pods lists both versions in its EndpointSlices, which answer as both
// versions.
func TestCanaryWithoutSurgeNeverExceedsItsReplicas(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	services(t, ns, "web")
	dc := appDC(ns, "web", rollout.Options{Replicas: 4, MaxSurge: "0", MaxUnavailable: "1"})
	weight := int32(30)
	dc.Spec.Strategy.RollingParams.Steps = []dcv1.RollingStep{{SetWeight: &weight}, {Pause: &dcv1.RolloutPause{}}}
	create(t, dc)
	requireComplete(t, ns, "web", 1)
	waitRunning(t, ns, map[string]int{"web-1": 4})
	count := watchPodCount(t, ns, "web")

	setVersion(t, ns, "web", "2")
	waitPaused(t, ns, "web-2", 2)
	waitRunning(t, ns, map[string]int{"web-1": 3, "web-2": 1})
	served := map[string]int{}
	for pod, addr := range waitServiceEndpoints(t, ns, "web", 4) {
		code, body := getAddr(t, addr, "/")
		switch {
		case code != http.StatusOK:
			t.Errorf("endpoint %s (%s) answered %d %q", addr, pod, code, body)
		case strings.HasPrefix(pod, "web-1-") && strings.Contains(body, "version 1"):
			served["1"]++
		case strings.HasPrefix(pod, "web-2-") && strings.Contains(body, "version 2"):
			served["2"]++
		default:
			t.Errorf("endpoint %s (%s) answered %q", addr, pod, body)
		}
	}
	if served["1"] != 3 || served["2"] != 1 {
		t.Errorf("the Service's endpoints answered as versions %v, want 3 of version 1 and 1 of version 2", served)
	}

	mustKubectlDC(t, ns, "rollout", "promote", "web")
	requireComplete(t, ns, "web", 2)
	waitRunning(t, ns, map[string]int{"web-1": 0, "web-2": 4})
	count.atMost(t, 4)
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Step 1 of 2: setWeight 30%: scaling web-2 to 1 and web-1 to 3 (keep 3 pods available, don't exceed 4 pods)",
		"--> Step 2 of 2: paused until 'kubectl dc rollout promote web'",
		"    Promoted",
		"--> Success")
}

// waitServiceEndpoints waits until the EndpointSlices of a Service list n
// ready pods, and returns them with their addresses.
func waitServiceEndpoints(t *testing.T, ns, service string, n int) map[string]string {
	t.Helper()
	var seen map[string]string
	err := rollout.Poll(context.Background(), rolloutTimeout, func(ctx context.Context) (bool, error) {
		var err error
		seen, err = endpoints(ctx, ns, service)
		return len(seen) == n, err
	})
	if err != nil {
		t.Fatalf("waiting for service %s to have %d ready endpoints: %v; last seen %v", service, n, err, seen)
	}
	return seen
}

// The retry sequence on real containers: a canary cancelled at its
// pause and retried starts its steps again, so the retried rollout pauses
// with its canary pods running and serving. Before, the retried deployer
// went straight to the recorded pause with the new deployment at the 0
// replicas the fall-back had left it at.
func TestCanaryRetriedAtPauseServesItsCanaryAgain(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	dc := appDC(ns, "web", rollout.Options{Replicas: 5, MaxSurge: "1", MaxUnavailable: "0"})
	weight := int32(40)
	dc.Spec.Strategy.RollingParams.Steps = []dcv1.RollingStep{{SetWeight: &weight}, {Pause: &dcv1.RolloutPause{}}}
	create(t, dc)
	requireComplete(t, ns, "web", 1)

	setVersion(t, ns, "web", "2")
	waitPaused(t, ns, "web-2", 2)
	waitRunning(t, ns, map[string]int{"web-1": 3, "web-2": 2})
	mustKubectlDC(t, ns, "rollout", "cancel", "web")
	if rc := waitDone(t, ns, "web", 2); deployment.Phase(rc) != dcv1.DeploymentPhaseFailed {
		t.Fatalf("rollout #2 is %s after the cancel, want Failed", deployment.Phase(rc))
	}
	waitRunning(t, ns, map[string]int{"web-1": 5, "web-2": 0})

	mustKubectlDC(t, ns, "rollout", "retry", "web")
	waitPaused(t, ns, "web-2", 2)
	waitRunning(t, ns, map[string]int{"web-1": 3, "web-2": 2})
	assertPodsServe(t, ns, "web-2", "2")
	mustKubectlDC(t, ns, "rollout", "promote", "web")
	requireComplete(t, ns, "web", 2)
	waitRunning(t, ns, map[string]int{"web-1": 0, "web-2": 5})
}
