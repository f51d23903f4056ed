package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/dev/localprom"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

// The kwok playground has no data plane: these tests check the route
// objects the deployer and dc-controller write, and act as the Gateway
// that accepts a route. test/node sends real requests through Traefik.

var httpRoutes = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}

// installGatewayAPI installs the Gateway API's CRDs (hack/tools.sh
// gateway-api-crds) in the suite's cluster, once.
var installGatewayAPI = sync.OnceValue(func() error {
	return playground.InstallCRDs(context.Background(), suite.cluster.Config, filepath.Join(suite.binDir, "gateway-api-crds"), nil)
})

func routes(t *testing.T, ns string) dynamic.ResourceInterface {
	t.Helper()
	d, err := dynamic.NewForConfig(suite.cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return d.Resource(httpRoutes).Namespace(ns)
}

// routedNamespace is a namespace with the Gateway API, the Services
// web-stable and web-canary, and the HTTPRoute web sending / to
// web-stable beside a foreign rule, accepted (when accept) as a Gateway
// would.
func routedNamespace(t *testing.T, accept bool) string {
	t.Helper()
	if err := installGatewayAPI(); err != nil {
		t.Fatalf("install the Gateway API CRDs: %v", err)
	}
	ns := dcNamespace(t)
	for _, name := range []string{"web-stable", "web-canary"} {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
		}
		if _, err := clientset().CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	route := &unstructured.Unstructured{}
	manifest := `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"web"},"spec":{"parentRefs":[{"name":"gw"}],"rules":[` +
		`{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"backendRefs":[{"name":"web-stable","port":80}]},` +
		`{"name":"admin","matches":[{"path":{"type":"PathPrefix","value":"/admin"}}],"backendRefs":[{"name":"admin","port":80,"weight":3}]}]}}`
	if err := route.UnmarshalJSON([]byte(manifest)); err != nil {
		t.Fatal(err)
	}
	created, err := routes(t, ns).Create(t.Context(), route, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the route: %v", err)
	}
	if accept {
		status := map[string]any{"parents": []any{map[string]any{
			"parentRef":      map[string]any{"name": "gw"},
			"controllerName": "example.com/test-gateway",
			"conditions": []any{map[string]any{
				"type": "Accepted", "status": "True", "reason": "Accepted", "message": "accepted by the test",
				"lastTransitionTime": time.Now().UTC().Format(time.RFC3339), "observedGeneration": created.GetGeneration(),
			}},
		}}}
		if err := unstructured.SetNestedField(created.Object, status, "status"); err != nil {
			t.Fatal(err)
		}
		if _, err := routes(t, ns).UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("accept the route: %v", err)
		}
	}
	return ns
}

// routedCanary is web with 4 pods and a canary routed through web.
func routedCanary(steps ...dcv1.RollingStep) *dcv1.DeploymentConfig {
	dc := newDC("web", 4, canary(steps...))
	dc.Spec.Strategy.RollingParams.TrafficRouting = &dcv1.TrafficRouting{
		StableService: "web-stable",
		CanaryService: "web-canary",
		GatewayAPI:    &dcv1.GatewayAPIRouting{HTTPRoute: "web"},
		ManagedRoutes: []dcv1.ManagedRoute{{Name: "beta"}},
	}
	return dc
}

var betaHeader = dcv1.RollingStep{SetHeaderRoute: &dcv1.SetHeaderRoute{Name: "beta", Match: []dcv1.HeaderRoutingMatch{
	{HeaderName: "X-Beta", HeaderValue: dcv1.StringMatch{Exact: new("1")}},
}}}

// routeState summarizes the route: the managed rule's weights, the
// foreign rule's, and the header rules, e.g. "web-stable=90 web-canary=10
// admin=3 beta".
func routeState(ctx context.Context, r dynamic.ResourceInterface) (string, error) {
	route, err := r.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	var parts []string
	for _, item := range rules {
		rule := item.(map[string]any)
		if name, _ := rule["name"].(string); name != "" && name != "admin" {
			refs, _ := json.Marshal(rule["backendRefs"])
			parts = append(parts, name+string(refs))
			continue
		}
		for _, ref := range rule["backendRefs"].([]any) {
			b := ref.(map[string]any)
			parts = append(parts, fmt.Sprintf("%v=%v", b["name"], b["weight"]))
		}
	}
	return strings.Join(parts, " "), nil
}

// waitRoute waits until routeState is want.
func waitRoute(t *testing.T, ns, want string) {
	t.Helper()
	r := routes(t, ns)
	var last string
	err := poll(t, rolloutTimeout, func(ctx context.Context) (bool, error) {
		got, err := routeState(ctx, r)
		last = got
		return got == want, err
	})
	if err != nil {
		t.Fatalf("route web never became %q: last %q: %v", want, last, err)
	}
}

// waitSelects waits until the Service selects rc's pods only.
func waitSelects(t *testing.T, ns, service, rc string) {
	t.Helper()
	want := map[string]string{"app": "web", dcv1.DeploymentConfigSelectorLabel: "web", dcv1.DeploymentSelectorLabel: rc}
	var last map[string]string
	err := poll(t, rolloutTimeout, func(ctx context.Context) (bool, error) {
		svc, err := clientset().CoreV1().Services(ns).Get(ctx, service, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = svc.Spec.Selector
		return maps.Equal(last, want), nil
	})
	if err != nil {
		t.Fatalf("service %s never selected %s: last %v: %v", service, rc, last, err)
	}
}

const (
	restRoute   = "web-stable=100 web-canary=0 admin=3"
	headerRoute = `beta[{"group":"","kind":"Service","name":"web-canary","port":80,"weight":1}]`
)

// A routed canary, through its sequence: each setWeight sets the route's
// weights exactly (10% of 4 pods is no share of pods), the canary has the
// pods its weight needs while the stable deployment keeps all of its own;
// a cancel at a pause puts every request back on the stable deployment and
// the header route away; retry starts over; promote --full makes the new
// version the stable one.
func TestRoutedCanarySequence(t *testing.T) {
	t.Parallel()
	ns := routedNamespace(t, true)
	createDC(t, ns, routedCanary(betaHeader, setWeight(10), pauseStep(0), setWeight(60), pauseStep(0)))
	requireComplete(t, ns, "web", 1)
	waitRoute(t, ns, restRoute)
	waitSelects(t, ns, "web-stable", "web-1")
	waitSelects(t, ns, "web-canary", "web-1")

	rollNext(t, ns, 2)
	waitPausedAt(t, ns, "web-2", 3)
	waitRoute(t, ns, "web-stable=90 web-canary=10 admin=3 "+headerRoute)
	waitScaled(t, ns, map[string]int32{"web-1": 4, "web-2": 1})
	waitSelects(t, ns, "web-stable", "web-1")
	waitSelects(t, ns, "web-canary", "web-2")

	mustDC(t, ns, "rollout", "promote", "web")
	waitPausedAt(t, ns, "web-2", 5)
	waitRoute(t, ns, "web-stable=40 web-canary=60 admin=3 "+headerRoute)
	waitScaled(t, ns, map[string]int32{"web-1": 4, "web-2": 3})

	mustDC(t, ns, "rollout", "cancel", "web")
	requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	waitRoute(t, ns, restRoute)
	waitSelects(t, ns, "web-canary", "web-1")
	waitScaled(t, ns, map[string]int32{"web-1": 4, "web-2": 0})

	mustDC(t, ns, "rollout", "retry", "web")
	waitPausedAt(t, ns, "web-2", 3)
	waitRoute(t, ns, "web-stable=90 web-canary=10 admin=3 "+headerRoute)
	mustDC(t, ns, "rollout", "promote", "--full", "web")
	requireComplete(t, ns, "web", 2)
	waitRoute(t, ns, restRoute)
	waitSelects(t, ns, "web-stable", "web-2")
	waitSelects(t, ns, "web-canary", "web-2")
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 4})
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Routes send 100% canary: web-2 takes every request",
		"--> Service web-stable now selects web-2",
		"--> Routes back at 100% stable, which is now web-2",
		"--> Scaling web-1 down to zero")
}

// A background analysis measures the canary Service's own requests
// ({{.CanaryService}}); when it fails, the rollout ends and every request
// is back on the stable deployment.
func TestRoutedCanaryBackgroundAnalysisFails(t *testing.T) {
	t.Parallel()
	ns := routedNamespace(t, true)
	suite.exporter.SetTraffic(ns, "web-canary", 10, 5)
	waitRated(t, suite.prometheus.URL(), ns, "web-canary")
	dc := routedCanary(setWeight(20), pauseStep(0))
	a := errorRateAnalysis(2, time.Second)
	a.Count = nil
	a.Metrics[0].Prometheus.Query = strings.ReplaceAll(localprom.ErrorRateQuery, "{{.Deployment}}", "{{.CanaryService}}")
	createDC(t, ns, dc)
	requireComplete(t, ns, "web", 1)
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy.RollingParams.Analysis = a
		setEnv(dc, "VERSION", "2")
	})
	requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	waitRoute(t, ns, restRoute)
	waitSelects(t, ns, "web-canary", "web-1")
	waitScaled(t, ns, map[string]int32{"web-1": 4, "web-2": 0})
	if log := deployerLog(t, ns, "web"); !strings.Contains(log, `deployment="web-canary"`) && !strings.Contains(log, "error-rate") {
		t.Errorf("the deployer's log does not show the canary Service's measurement:\n%s", log)
	}
}

// A route no Gateway accepted stops the rollout before anything moves,
// with the reason in the DeploymentConfig's Progressing condition.
func TestRoutedCanaryRouteNotAccepted(t *testing.T) {
	t.Parallel()
	ns := routedNamespace(t, false)
	createDC(t, ns, routedCanary(setWeight(10), pauseStep(0)))
	requirePhase(t, ns, "web", 1, dcv1.DeploymentPhaseFailed)
	waitDC(t, ns, "web", "the route's refusal in the Progressing condition", func(dc *dcv1.DeploymentConfig) bool {
		for _, c := range dc.Status.Conditions {
			if c.Type == dcv1.DeploymentProgressing && strings.Contains(c.Message, "httproutes/web is not Accepted") {
				return true
			}
		}
		return false
	})
	if got, err := routeState(t.Context(), routes(t, ns)); err != nil || got != "web-stable=1 admin=3" {
		t.Errorf("a refused rollout changed the route: %q, %v", got, err)
	}
}

// The deployer pod of a routed canary is deleted at once (no grace, so it
// restores nothing itself) while 10% of the requests and a header route go
// to the new version: dc-controller marks the rollout Failed and puts the
// route back at 100% stable before the fall-back scales the canary away.
func TestRoutedCanaryDeployerDeleted(t *testing.T) {
	t.Parallel()
	ns := routedNamespace(t, true)
	createDC(t, ns, routedCanary(betaHeader, setWeight(10), pauseStep(0)))
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	waitPausedAt(t, ns, "web-2", 3)
	waitRoute(t, ns, "web-stable=90 web-canary=10 admin=3 "+headerRoute)

	zero := int64(0)
	if err := clientset().CoreV1().Pods(ns).Delete(t.Context(), "web-2-deploy", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("deleting the deployer pod: %v", err)
	}
	requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	waitRoute(t, ns, restRoute)
	waitSelects(t, ns, "web-canary", "web-1")
	waitSelects(t, ns, "web-stable", "web-1")
	waitScaled(t, ns, map[string]int32{"web-1": 4, "web-2": 0})
}

// dc-local serve, which runs dc-controller and the deployer pods, is killed
// (as a crash of the node both run on) while a routed canary pauses at 10%
// with a header route. The deployer's container is lost, so the rollout
// fails; the controller that starts again puts the route back at 100%
// stable and falls back. Not parallel: it kills the suite's server.
func TestRoutedCanaryControllerAndDeployerKilled(t *testing.T) {
	ns := routedNamespace(t, true)
	createDC(t, ns, routedCanary(betaHeader, setWeight(10), pauseStep(0)))
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	waitPausedAt(t, ns, "web-2", 3)
	waitRoute(t, ns, "web-stable=90 web-canary=10 admin=3 "+headerRoute)

	killServer(t)

	requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	waitRoute(t, ns, restRoute)
	waitSelects(t, ns, "web-canary", "web-1")
	waitSelects(t, ns, "web-stable", "web-1")
	waitScaled(t, ns, map[string]int32{"web-1": 4, "web-2": 0})
}
