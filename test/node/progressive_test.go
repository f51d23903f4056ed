package node

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// A blue-green rollout of real containers: the new version comes up beside
// the old one behind the preview Service while the active Service keeps
// serving the old one, and promote switches the active Service over.
func TestBlueGreenPromotedByHandServesThroughItsServices(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	services(t, ns, "web", "web-preview")
	dc := appDC(ns, "web", rollout.Options{Replicas: 2})
	dc.Spec.Strategy = dcv1.DeploymentStrategy{
		Type:            dcv1.DeploymentStrategyTypeBlueGreen,
		BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: "web", PreviewService: "web-preview"},
	}
	create(t, dc)
	requireComplete(t, ns, "web", 1)
	assertServes(t, waitEndpoints(t, ns, "web", "web-1", 2), "1")

	setVersion(t, ns, "web", "2")
	waitPaused(t, ns, "web-2", 0)
	assertServes(t, waitEndpoints(t, ns, "web-preview", "web-2", 2), "2")
	assertServes(t, waitEndpoints(t, ns, "web", "web-1", 2), "1")

	mustKubectlDC(t, ns, "rollout", "promote", "web")
	requireComplete(t, ns, "web", 2)
	assertServes(t, waitEndpoints(t, ns, "web", "web-2", 2), "2")
	waitRunning(t, ns, map[string]int{"web-1": 0, "web-2": 2})
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Service web-preview now selects web-2",
		"--> Waiting for 'kubectl dc rollout promote web' to switch service web to web-2",
		"    Promoted",
		"--> Service web now selects web-2",
		"--> Success")
}

// A canary at 50% of two replicas runs one real pod of each version until
// promote, then only pods of the new version.
func TestCanaryAtHalfServesBothVersionsUntilPromoted(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	dc := appDC(ns, "web", rollout.Options{Replicas: 2, MaxSurge: "1", MaxUnavailable: "0"})
	weight := int32(50)
	dc.Spec.Strategy.RollingParams.Steps = []dcv1.RollingStep{{SetWeight: &weight}, {Pause: &dcv1.RolloutPause{}}}
	create(t, dc)
	requireComplete(t, ns, "web", 1)

	setVersion(t, ns, "web", "2")
	waitPaused(t, ns, "web-2", 2)
	waitRunning(t, ns, map[string]int{"web-1": 1, "web-2": 1})
	assertPodsServe(t, ns, "web-1", "1")
	assertPodsServe(t, ns, "web-2", "2")

	mustKubectlDC(t, ns, "rollout", "promote", "web")
	requireComplete(t, ns, "web", 2)
	waitRunning(t, ns, map[string]int{"web-1": 0, "web-2": 2})
	assertPodsServe(t, ns, "web-2", "2")
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Step 1 of 2: setWeight 50%: scaling web-2 to 1 and web-1 to 1",
		"--> Step 2 of 2: paused until 'kubectl dc rollout promote web'",
		"    Promoted",
		"--> Success")
}

// services creates Services on the sample application's port selecting
// app=web, until the deployer points them at a deployment.
func services(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(appPort), Protocol: corev1.ProtocolTCP}},
			},
		}
		if _, err := suite.clientset.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating service %s: %v", name, err)
		}
	}
}

// mustKubectlDC runs kubectl-dc and fails the test if it fails.
func mustKubectlDC(t *testing.T, ns string, args ...string) {
	t.Helper()
	if _, stderr, err := suite.dcs.KubectlDC(context.Background(), ns, args...); err != nil {
		t.Fatalf("kubectl dc %s: %v: %s", strings.Join(args, " "), err, stderr)
	}
}

// waitPaused waits until rollout rc records that it waits in a pause: at
// step k (1-based), or with k 0 for a blue-green rollout waiting for
// promote.
func waitPaused(t *testing.T, ns, rc string, k int) {
	t.Helper()
	var last deployment.Progress
	err := rollout.Poll(context.Background(), rolloutTimeout, func(ctx context.Context) (bool, error) {
		got, err := suite.clientset.CoreV1().ReplicationControllers(ns).Get(ctx, rc, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = deployment.ProgressOf(got)
		return rollout.PausedAt(got, k), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s to pause at step %d: %v; progress %+v\n%s", rc, k, err, last, deployerLog(t, ns, "web"))
	}
}

// waitRunning waits until each deployment has exactly its number of
// running pods.
func waitRunning(t *testing.T, ns string, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	err := rollout.Poll(context.Background(), rolloutTimeout, func(context.Context) (bool, error) {
		done := true
		for rc, n := range want {
			got[rc] = len(podsOf(t, ns, rc))
			done = done && got[rc] == n
		}
		return done, nil
	})
	if err != nil {
		t.Fatalf("waiting for running pods %v: %v; last seen %v", want, err, got)
	}
}

// waitEndpoints waits until the EndpointSlices of a Service list exactly
// the n ready pods of deployment rc, and returns their addresses.
func waitEndpoints(t *testing.T, ns, service, rc string, n int) []string {
	t.Helper()
	var seen map[string]string
	err := rollout.Poll(context.Background(), rolloutTimeout, func(ctx context.Context) (bool, error) {
		var want []string
		for _, pod := range podsOf(t, ns, rc) {
			if podReady(pod) {
				want = append(want, pod.Name)
			}
		}
		var err error
		if seen, err = endpoints(ctx, ns, service); err != nil {
			return false, err
		}
		names := make([]string, 0, len(seen))
		for name := range seen {
			names = append(names, name)
		}
		slices.Sort(want)
		slices.Sort(names)
		return len(want) == n && slices.Equal(names, want), nil
	})
	if err != nil {
		t.Fatalf("waiting for service %s to have the %d ready pods of %s as endpoints: %v; last seen %v", service, n, rc, err, seen)
	}
	addrs := make([]string, 0, len(seen))
	for _, addr := range seen {
		addrs = append(addrs, addr)
	}
	return addrs
}

func podReady(pod corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// endpoints maps the pods of a Service's ready endpoints to their
// addresses.
func endpoints(ctx context.Context, ns, service string) (map[string]string, error) {
	list, err := suite.clientset.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	if err != nil {
		return nil, fmt.Errorf("listing endpoint slices of service %s: %w", service, err)
	}
	pods := map[string]string{}
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.TargetRef != nil && e.TargetRef.Kind == "Pod" && len(e.Addresses) > 0 && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
				pods[e.TargetRef.Name] = e.Addresses[0]
			}
		}
	}
	return pods, nil
}

// assertServes checks that the sample application at each of addrs answers
// with version. The real node runs no kube-proxy, so a Service's ClusterIP
// leads nowhere: the test dials the addresses its EndpointSlices list,
// which is where a proxy would send the traffic.
func assertServes(t *testing.T, addrs []string, version string) {
	t.Helper()
	for _, addr := range addrs {
		if code, body := getAddr(t, addr, "/"); code != http.StatusOK || !strings.Contains(body, "version "+version) {
			t.Errorf("endpoint %s answered %d %q, want 200 and version %s", addr, code, body, version)
		}
	}
}

// assertPodsServe checks that each running pod of deployment rc answers
// with version.
func assertPodsServe(t *testing.T, ns, rc, version string) {
	t.Helper()
	for _, pod := range podsOf(t, ns, rc) {
		if code, body := get(t, pod, "/"); code != http.StatusOK || !strings.Contains(body, "version "+version) {
			t.Errorf("pod %s answered %d %q, want 200 and version %s", pod.Name, code, body, version)
		}
	}
}
