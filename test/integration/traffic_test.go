package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/trafficrouting"
)

// routedDC is a Rolling DeploymentConfig web with trafficRouting through
// the HTTPRoute web, its Services web-stable and web-canary created
// selecting every version's pods, and the route sending to web-stable
// beside a rule of another application.
func routedDC(t *testing.T, ns string, withRoute bool) {
	t.Helper()
	for _, name := range []string{"web-stable", "web-canary"} {
		mustCreate(t, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
		})
	}
	if withRoute {
		route := mustUnstructured(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: %s}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{name: web-stable, port: 80}]
  - name: admin
    matches: [{path: {type: PathPrefix, value: /admin}}]
    backendRefs: [{name: admin, port: 80, weight: 3}]
`, ns))
		mustCreate(t, route)
	}
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Steps: []dcv1.RollingStep{{SetWeight: ptr(int32(30))}, {Pause: &dcv1.RolloutPause{}}},
			TrafficRouting: &dcv1.TrafficRouting{
				StableService: "web-stable",
				CanaryService: "web-canary",
				GatewayAPI:    &dcv1.GatewayAPIRouting{HTTPRoute: "web"},
				ManagedRoutes: []dcv1.ManagedRoute{{Name: "beta"}},
			},
		}}
	}))
}

// routeRules returns the HTTPRoute's rules as JSON.
func routeRules(ctx context.Context, ns string) (string, error) {
	route := &unstructured.Unstructured{}
	route.SetAPIVersion("gateway.networking.k8s.io/v1")
	route.SetKind("HTTPRoute")
	if err := cluster.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, route); err != nil {
		return "", err
	}
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	data, err := json.Marshal(rules)
	return string(data), err
}

// restRules are the route's rules at rest: every request of the managed
// rule to web-stable, the foreign rule as it was.
const restRules = `[{"backendRefs":[{"group":"","kind":"Service","name":"web-stable","port":80,"weight":100},{"group":"","kind":"Service","name":"web-canary","port":80,"weight":0}],"matches":[{"path":{"type":"PathPrefix","value":"/"}}]},{"backendRefs":[{"group":"","kind":"Service","name":"admin","port":80,"weight":3}],"matches":[{"path":{"type":"PathPrefix","value":"/admin"}}],"name":"admin"}]`

// waitRouteRules waits until the route's rules are want.
func waitRouteRules(t *testing.T, ns, what, want string) {
	t.Helper()
	waitFor(t, what, func(ctx context.Context) (bool, string, error) {
		got, err := routeRules(ctx, ns)
		return got == want, got, err
	})
}

// setCanaryTraffic rewrites the route as a deployer mid-canary has it:
// 30% to web-canary and a header rule.
func setCanaryTraffic(t *testing.T, ns string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		route := &unstructured.Unstructured{}
		route.SetAPIVersion("gateway.networking.k8s.io/v1")
		route.SetKind("HTTPRoute")
		if err := cluster.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, route); err != nil {
			return err
		}
		var rules []any
		if err := json.Unmarshal([]byte(strings.NewReplacer(`"weight":100`, `"weight":70`, `"weight":0`, `"weight":30`).Replace(restRules)), &rules); err != nil {
			return err
		}
		rules = append(rules, map[string]any{
			"name":        "beta",
			"matches":     []any{map[string]any{"headers": []any{map[string]any{"name": "X-Beta", "value": "1"}}}},
			"backendRefs": []any{map[string]any{"name": "web-canary", "port": int64(80)}},
		})
		if err := unstructured.SetNestedSlice(route.Object, rules, "spec", "rules"); err != nil {
			return err
		}
		return cluster.client.Update(context.Background(), route)
	})
	if err != nil {
		t.Fatalf("set the route mid-canary: %v", err)
	}
}

// TestTrafficRoutesRestoredWithoutDeployer: dc-controller, not the
// deployer, puts the route back at 100% stable at every end of a rollout
// that is not a success, and points both Services at the live
// deployment: here the deployer dies (its pod fails) after setting 30%
// and a header route, then a cancelled rollout does the same.
func TestTrafficRoutesRestoredWithoutDeployer(t *testing.T) {
	ns := newNamespace(t)
	routedDC(t, ns, true)
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	waitRouteRules(t, ns, "the route at rest after the first rollout", restRules)
	waitSelects(t, ns, "web-stable", "web-1")
	waitSelects(t, ns, "web-canary", "web-1")

	for i, end := range []string{"the deployer dies", "the rollout is cancelled"} {
		t.Run(end, func(t *testing.T) {
			updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
				dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:" + strings.ReplaceAll(end, " ", "-")
			})
			rc := deployment.Name("web", int64(i+2))
			pod := waitPod(t, ns, deployment.DeployerPodName(rc))
			setPodPhase(t, ns, pod.Name, corev1.PodRunning)
			waitPhase(t, ns, rc, dcv1.DeploymentPhaseRunning)
			setCanaryTraffic(t, ns)
			editService(t, ns, "web-canary", func(svc *corev1.Service) { svc.Spec.Selector = deploymentSelector(rc) })
			// During the rollout the route is the deployer's: left as it is.
			if got, err := routeRules(context.Background(), ns); err != nil || !strings.Contains(got, `"weight":30`) {
				t.Fatalf("the route mid-rollout: %s, %v", got, err)
			}

			if end == "the deployer dies" {
				setPodPhase(t, ns, pod.Name, corev1.PodFailed)
			} else {
				patchRC(t, ns, rc, func(rc *corev1.ReplicationController) {
					rc.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
					rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] = dcv1.DeploymentCancelledByUser
				})
			}
			waitPhase(t, ns, rc, dcv1.DeploymentPhaseFailed)
			waitRouteRules(t, ns, "the route back at 100% stable without its header rule", restRules)
			waitSelects(t, ns, "web-canary", "web-1")
			waitSelects(t, ns, "web-stable", "web-1")
			waitEvent(t, ns, "web", "RouteRestored")
		})
	}
}

// TestTrafficRouteMissingIsReported: a route that does not exist is an
// event on the DeploymentConfig; the rest of the sync (the Services)
// goes on.
func TestTrafficRouteMissingIsReported(t *testing.T) {
	ns := newNamespace(t)
	routedDC(t, ns, false)
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	waitEvent(t, ns, "web", "RouteInvalid")
	waitSelects(t, ns, "web-stable", "web-1")
	waitSelects(t, ns, "web-canary", "web-1")
}

// TestTrafficRouteMarkedAcceptedByHand runs the command with which
// docs/traffic-routing.md has a kwok playground's user play the Gateway,
// and checks that the route is then Accepted as the deployer judges it.
func TestTrafficRouteMarkedAcceptedByHand(t *testing.T) {
	ns := newNamespace(t)
	routedDC(t, ns, true)
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "traffic-routing.md"))
	if err != nil {
		t.Fatal(err)
	}
	var command string
	for _, line := range strings.Split(string(doc), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "kubectl patch httproute web --subresource=status") {
			command = l
		}
	}
	args, patch, ok := strings.Cut(strings.TrimPrefix(command, "kubectl "), " -p '")
	if !ok {
		t.Fatalf("docs/traffic-routing.md has no 'kubectl patch httproute web --subresource=status ... -p '...'' command (found %q)", command)
	}
	argv := append(strings.Fields(args), "-n", ns, "-p", strings.TrimSuffix(patch, "'"))
	if _, stderr, err := kubectlRun(testContext(t, time.Minute), "", argv...); err != nil {
		t.Fatalf("kubectl %v: %v: %s", argv, err, stderr)
	}
	route := &unstructured.Unstructured{}
	route.SetAPIVersion("gateway.networking.k8s.io/v1")
	route.SetKind("HTTPRoute")
	if err := cluster.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, route); err != nil {
		t.Fatal(err)
	}
	if err := trafficrouting.Accepted(route, trafficrouting.Refs(getDC(t, ns, "web").Spec.Strategy.RollingParams.TrafficRouting)[0]); err != nil {
		t.Errorf("after the docs' command: %v", err)
	}
}

// TestTrafficHeaderRegexRefusedBeforeTheRollout: a header route's regex
// that RE2 refuses passes the API server's schema but stops the rollout
// before its deployment exists, Stalled with the field named, and never
// reaches the route.
func TestTrafficHeaderRegexRefusedBeforeTheRollout(t *testing.T) {
	ns := newNamespace(t)
	routedDC(t, ns, true)
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	waitRouteRules(t, ns, "at rest", restRules)
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		regex := "((a{100}){100}){100}"
		dc.Spec.Strategy.RollingParams.Steps = []dcv1.RollingStep{
			{SetHeaderRoute: &dcv1.SetHeaderRoute{Name: "beta", Match: []dcv1.HeaderRoutingMatch{{HeaderName: "X-User", HeaderValue: dcv1.StringMatch{Regex: &regex}}}}},
			{Pause: &dcv1.RolloutPause{}},
		}
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:2"
	})
	waitCondition(t, ns, "web", dcv1.DeploymentStalled, corev1.ConditionTrue, dcv1.InvalidHeaderRouteReason)
	for _, c := range getDC(t, ns, "web").Status.Conditions {
		if c.Type == dcv1.DeploymentStalled && !strings.Contains(c.Message, "spec.strategy.rollingParams.steps[0].setHeaderRoute.match[0].headerValue.regex") {
			t.Errorf("Stalled says %q, want the field named", c.Message)
		}
	}
	if _, err := getRC(context.Background(), ns, "web-2"); !apierrors.IsNotFound(err) {
		t.Errorf("web-2: %v; want it never created", err)
	}
	waitRouteRules(t, ns, "still at rest", restRules)
	waitEvent(t, ns, "web", dcv1.InvalidHeaderRouteReason)
}
