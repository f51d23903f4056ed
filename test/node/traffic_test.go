package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/dev/localprom"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
	"github.com/deployconfig/deployconfig/test/rollout"
)

const (
	// servicePort is the port of the tests' Services, which send to the
	// sample application's appPort.
	servicePort = 80
	// steadyBatch is the size of the batches of requests that
	// waitSteady compares: Traefik's weighted round robin is deterministic,
	// so two batches of this size answer alike once its configuration no
	// longer changes.
	steadyBatch = 100
	// revertTimeout bounds how long after a rollout's failure or cancel
	// every request may still reach the canary: "a few seconds".
	revertTimeout = 10 * time.Second
)

// backend is one backendRef of a route's rule: a Service and its weight.
type backend struct {
	service string
	weight  int
}

// httpRoute creates an HTTPRoute on the cluster's Gateway for the test's
// own hostname, with one rule sending to backends, and returns the
// hostname. Each test has a hostname of its own, so that the tests'
// routes on the one Gateway never match each other's requests.
func httpRoute(t *testing.T, ns, name string, backends ...backend) string {
	t.Helper()
	host := ns + ".test"
	route := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1",
		"kind":       "HTTPRoute",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": realnode.GatewayName, "namespace": realnode.GatewayNamespace}},
			"hostnames":  []any{host},
			"rules":      []any{map[string]any{"backendRefs": backendRefs(backends)}},
		},
	}}
	if err := suite.client.Create(context.Background(), route); err != nil {
		t.Fatalf("creating HTTPRoute %s: %v", name, err)
	}
	return host
}

func backendRefs(backends []backend) []any {
	refs := make([]any, 0, len(backends))
	for _, b := range backends {
		refs = append(refs, map[string]any{"name": b.service, "port": int64(servicePort), "weight": int64(b.weight)})
	}
	return refs
}

// setBackends replaces the backends of the route's first rule. Traefik
// writes the route's status meanwhile: a conflicting write is redone on
// the route as it now is.
func setBackends(t *testing.T, ns, name string, backends ...backend) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		route := getRoute(t, ns, name)
		rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
		rules[0].(map[string]any)["backendRefs"] = backendRefs(backends)
		if err := unstructured.SetNestedSlice(route.Object, rules, "spec", "rules"); err != nil {
			return err
		}
		return suite.client.Update(context.Background(), route)
	})
	if err != nil {
		t.Fatalf("updating HTTPRoute %s: %v", name, err)
	}
}

func getRoute(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	route := &unstructured.Unstructured{}
	route.SetAPIVersion("gateway.networking.k8s.io/v1")
	route.SetKind("HTTPRoute")
	if err := suite.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, route); err != nil {
		t.Fatalf("reading HTTPRoute %s: %v", name, err)
	}
	return route
}

// waitRouteAccepted waits until Traefik has accepted the route's current
// generation on the cluster's Gateway.
func waitRouteAccepted(t *testing.T, ns, name string) {
	t.Helper()
	var last string
	err := rollout.Poll(context.Background(), rolloutTimeout, func(ctx context.Context) (bool, error) {
		route := &unstructured.Unstructured{}
		route.SetAPIVersion("gateway.networking.k8s.io/v1")
		route.SetKind("HTTPRoute")
		if err := suite.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, route); err != nil {
			return false, err
		}
		var ok bool
		ok, last = routeAccepted(route)
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for HTTPRoute %s to be accepted by gateway %s: %v; last: %s", name, realnode.GatewayName, err, last)
	}
}

// routeAccepted reports whether the Gateway's status in the route says
// Accepted for the route's generation, and says what it says otherwise.
func routeAccepted(route *unstructured.Unstructured) (bool, string) {
	parents, _, _ := unstructured.NestedSlice(route.Object, "status", "parents")
	for _, p := range parents {
		parent, _ := p.(map[string]any)
		ref, _ := parent["parentRef"].(map[string]any)
		if ref["name"] != realnode.GatewayName {
			continue
		}
		conditions, _ := parent["conditions"].([]any)
		for _, c := range conditions {
			cond, _ := c.(map[string]any)
			if cond["type"] != "Accepted" {
				continue
			}
			generation, _ := cond["observedGeneration"].(int64)
			if cond["status"] == "True" && generation == route.GetGeneration() {
				return true, ""
			}
			return false, fmt.Sprintf("Accepted=%v (generation %d of %d): %v", cond["status"], generation, route.GetGeneration(), cond["message"])
		}
	}
	return false, fmt.Sprintf("no status from %s: %v", realnode.GatewayName, parents)
}

// appServices creates a Service per name on the sample application's port,
// selecting the pods of the DeploymentConfig of that name.
func appServices(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": name},
				Ports:    []corev1.ServicePort{{Name: "http", Port: servicePort, TargetPort: intstr.FromInt32(appPort), Protocol: corev1.ProtocolTCP}},
			},
		}
		if _, err := suite.clientset.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating service %s: %v", name, err)
		}
	}
}

// answers counts what n requests through the Gateway for host answered:
// "version N" for the sample application's answers, "status N" for other
// answers, "error" for requests that got none. header, when not empty,
// is sent with every request ("Name: value").
func answers(t *testing.T, host, header string, n int) map[string]int {
	t.Helper()
	httpClient := suite.cluster.HTTPClient(10 * time.Second)
	defer httpClient.CloseIdleConnections()
	counts := map[string]int{}
	var firstErr error
	for range n {
		answer, err := ask(httpClient, host, header)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		counts[answer]++
	}
	if firstErr != nil {
		t.Logf("requests to %s: %v (first error of %d)", host, firstErr, counts["error"])
	}
	return counts
}

// ask sends one request through the Gateway and says who answered.
func ask(httpClient *http.Client, host, header string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+realnode.GatewayAddr+"/", nil)
	if err != nil {
		return "error", err
	}
	req.Host = host
	if name, value, ok := strings.Cut(header, ":"); ok {
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return "error", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "error", err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("status %d", resp.StatusCode), nil
	}
	fields := strings.Fields(string(body))
	if len(fields) < 2 || fields[len(fields)-2] != "version" {
		return "unexpected " + strings.TrimSpace(string(body)), nil
	}
	return "version " + fields[len(fields)-1], nil
}

// waitSteady waits until Traefik serves host with a configuration that no
// longer changes: two batches of requests in a row answer alike, every
// request answered by some version of the application.
func waitSteady(t *testing.T, host, header string) {
	t.Helper()
	var prev, last map[string]int
	err := rollout.Poll(context.Background(), rolloutTimeout, func(context.Context) (bool, error) {
		last = answers(t, host, header, steadyBatch)
		steady := prev != nil && maps.Equal(prev, last) && onlyVersions(last)
		prev = last
		return steady, nil
	})
	if err != nil {
		t.Fatalf("waiting for the Gateway to serve %s steadily: %v; last batch %v", host, err, last)
	}
}

// onlyVersions reports whether every answer came from the application.
func onlyVersions(counts map[string]int) bool {
	for answer := range counts {
		if !strings.HasPrefix(answer, "version ") {
			return false
		}
	}
	return true
}

// assertShare checks that version answered pct% (± tolerance points) of
// the requests, and that nothing but the application answered.
func assertShare(t *testing.T, counts map[string]int, version string, pct, tolerance float64) {
	t.Helper()
	total := 0
	for _, n := range counts {
		total += n
	}
	got := 100 * float64(counts["version "+version]) / float64(total)
	if math.Abs(got-pct) > tolerance || !onlyVersions(counts) {
		t.Errorf("version %s answered %.1f%% of %d requests (%v), want %.0f%% ± %.0f and only the application's answers",
			version, got, total, counts, pct, tolerance)
	}
}

// assertOnly checks that every request answered from version.
func assertOnly(t *testing.T, what string, counts map[string]int, version string) {
	t.Helper()
	if len(counts) != 1 || counts["version "+version] == 0 {
		t.Errorf("%s: answers %v, want only version %s", what, counts, version)
	}
}

// The data plane itself: Traefik, built from its module, serves an
// HTTPRoute of the cluster's Gateway and splits real requests between
// two Services as the backendRefs' weights say.
func TestGatewaySplitsRequestsByBackendWeight(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	appServices(t, ns, "blue", "green")
	blue := appDC(ns, "blue", rollout.Options{Replicas: 1})
	green := appDC(ns, "green", rollout.Options{Replicas: 1})
	setEnv(&green.Spec.Template.Spec.Containers[0], versionEnv, "2")
	create(t, blue)
	create(t, green)
	requireComplete(t, ns, "blue", 1)
	requireComplete(t, ns, "green", 1)
	waitEndpoints(t, ns, "blue", "blue-1", 1)
	waitEndpoints(t, ns, "green", "green-1", 1)
	host := httpRoute(t, ns, "web", backend{"blue", 100})

	for _, tc := range []struct {
		blue, green int
	}{
		{blue: 100, green: 0},
		{blue: 80, green: 20},
		{blue: 10, green: 90},
		{blue: 0, green: 100},
	} {
		setBackends(t, ns, "web", backend{"blue", tc.blue}, backend{"green", tc.green})
		waitRouteAccepted(t, ns, "web")
		waitSteady(t, host, "")
		counts := answers(t, host, "", 1000)
		t.Logf("weights blue %d, green %d: %v", tc.blue, tc.green, counts)
		assertShare(t, counts, "2", float64(tc.green), 3)
	}
}

// canaryHeader is the header of the header route.
const canaryHeader = "X-Canary: yes"

// trafficDC is the sample application's DeploymentConfig of the traffic-routing tests:
// two replicas behind the Services web-stable and web-canary and the
// HTTPRoute web, rolled out with a header route, then 10% of the requests,
// then a pause; analysis, when not nil, runs beside the steps.
func trafficDC(ns string, analysis *dcv1.Analysis) *dcv1.DeploymentConfig {
	dc := appDC(ns, "web", rollout.Options{Replicas: 2, MaxSurge: "1", MaxUnavailable: "0"})
	name, value, _ := strings.Cut(canaryHeader, ":")
	value = strings.TrimSpace(value)
	p := dc.Spec.Strategy.RollingParams
	p.TrafficRouting = &dcv1.TrafficRouting{
		StableService: "web-stable",
		CanaryService: "web-canary",
		ManagedRoutes: []dcv1.ManagedRoute{{Name: "canary-header"}},
		GatewayAPI:    &dcv1.GatewayAPIRouting{HTTPRoute: "web"},
	}
	p.Steps = []dcv1.RollingStep{
		{SetHeaderRoute: &dcv1.SetHeaderRoute{Name: "canary-header", Match: []dcv1.HeaderRoutingMatch{
			{HeaderName: name, HeaderValue: dcv1.StringMatch{Exact: &value}},
		}}},
		{SetWeight: ptr.To(int32(10))},
		{Pause: &dcv1.RolloutPause{}},
	}
	p.Analysis = analysis
	return dc
}

// startTrafficRollout creates the DeploymentConfig with its
// Services and route, rolls version 1 out, checks that the Gateway serves
// it alone, and starts version 2, which stops at its pause with 10% of the
// requests and the header route. It returns the route's hostname.
func startTrafficRollout(t *testing.T, ns string, analysis *dcv1.Analysis) string {
	t.Helper()
	services(t, ns, "web-stable", "web-canary")
	host := httpRoute(t, ns, "web", backend{"web-stable", 1})
	create(t, trafficDC(ns, analysis))
	requireComplete(t, ns, "web", 1)
	waitEndpoints(t, ns, "web-stable", "web-1", 2)
	waitRouteAccepted(t, ns, "web")
	waitSteady(t, host, "")
	assertOnly(t, "version 1 alone", answers(t, host, "", 200), "1")

	setVersion(t, ns, "web", "2")
	waitPaused(t, ns, "web-2", 3)
	waitEndpoints(t, ns, "web-canary", "web-2", 1)
	waitRouteAccepted(t, ns, "web")
	waitSteady(t, host, "")
	waitSteady(t, host, canaryHeader)
	return host
}

// The canary through a real Gateway: at setWeight 10, 10% ± 3% of
// 2,000 requests answer from the new version while its pods are a third
// of the pods; requests with the header route's header reach only the new
// version; promote gives 100% new.
func TestTrafficRoutingCanaryThroughGateway(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	host := startTrafficRollout(t, ns, nil)

	counts := answers(t, host, "", 2000)
	t.Logf("at setWeight 10: %v", counts)
	assertShare(t, counts, "2", 10, 3)
	assertOnly(t, "with "+canaryHeader, answers(t, host, canaryHeader, 200), "2")

	mustKubectlDC(t, ns, "rollout", "promote", "web")
	requireComplete(t, ns, "web", 2)
	waitRouteAccepted(t, ns, "web")
	waitSteady(t, host, "")
	assertOnly(t, "after promote", answers(t, host, "", 500), "2")
	assertOnly(t, "after promote, with "+canaryHeader, answers(t, host, canaryHeader, 100), "2")
}

// Every end of a canary that is not a success sends all the requests back
// to the stable version within a few seconds, with and without the header
// route's header: a cancel, and a background analysis that fails (the
// new version's error rate, from the test's exporter on a real Prometheus
// that the deployer reaches inside the cluster's network).
func TestTrafficRoutingAbortRestoresStable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		analysis bool
		abort    func(t *testing.T, ns string, metrics *errorRates)
		// reason is in the failed rollout's reason or deployer log,
		// lower-cased.
		reason string
	}{
		{name: "cancel", reason: "cancel", abort: func(t *testing.T, ns string, _ *errorRates) {
			mustKubectlDC(t, ns, "rollout", "cancel", "web")
		}},
		{name: "failed analysis", analysis: true, reason: `analysis failed: metric "error-rate"`, abort: func(t *testing.T, ns string, metrics *errorRates) {
			metrics.set(ns, "web-2", 0.5)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			var metrics *errorRates
			var analysis *dcv1.Analysis
			if tc.analysis {
				metrics = startErrorRates(t)
				metrics.set(ns, "web-1", 0)
				metrics.set(ns, "web-2", 0)
				metrics.waitRated(t, ns, "web-2")
				analysis = metrics.analysis()
			}
			host := startTrafficRollout(t, ns, analysis)
			if counts := answers(t, host, "", 500); counts["version 2"] == 0 {
				t.Fatalf("before the abort the canary answered none of 500 requests: %v", counts)
			}

			tc.abort(t, ns, metrics)
			rc := waitDone(t, ns, "web", 2)
			ended := time.Now()
			// Why it failed is in the RC's reason or, for what the deployer
			// saw, in its log.
			why := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] + "\n" + deployerLog(t, ns, "web")
			if got := rc.Annotations[dcv1.DeploymentPhaseAnnotation]; got != string(dcv1.DeploymentPhaseFailed) || !strings.Contains(strings.ToLower(why), tc.reason) {
				t.Fatalf("rollout %s ended %s, want Failed for %s:\n%s", rc.Name, got, tc.reason, why)
			}
			waitOnlyStable(t, host, "")
			waitOnlyStable(t, host, canaryHeader)
			t.Logf("100%% stable %s after the rollout ended", time.Since(ended).Round(100*time.Millisecond))
			if took := time.Since(ended); took > revertTimeout {
				t.Errorf("requests reached the canary for %s after the rollout ended, want at most %s", took, revertTimeout)
			}
			assertOnly(t, "after the abort", answers(t, host, "", 1000), "1")
		})
	}
}

// waitOnlyStable waits, up to revertTimeout, until a batch of requests
// answers from version 1 alone.
func waitOnlyStable(t *testing.T, host, header string) {
	t.Helper()
	var last map[string]int
	err := rollout.Poll(context.Background(), revertTimeout, func(context.Context) (bool, error) {
		last = answers(t, host, header, steadyBatch)
		return len(last) == 1 && last["version 1"] > 0, nil
	})
	if err != nil {
		t.Fatalf("waiting for only version 1 to answer %s (header %q): %v; last batch %v", host, header, err, last)
	}
}

// errorRates are the deployments' error rates as a real Prometheus sees
// them: the test sets them on an exporter that Prometheus scrapes, both on
// the host's loopback, and the deployer's analysis reaches Prometheus at an
// address inside the cluster's network that leads to it.
type errorRates struct {
	exporter *localprom.Exporter
	prom     *localprom.Server
	// inCluster is Prometheus's address as pods reach it.
	inCluster string
}

// startErrorRates starts the exporter, Prometheus and the way in to it;
// the test's cleanup stops them.
func startErrorRates(t *testing.T) *errorRates {
	t.Helper()
	exporter, err := localprom.StartExporter()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exporter.Close() })
	prom, err := localprom.Start(t.Context(), localprom.Options{
		Binary: filepath.Join(suite.binDir, "prometheus"), Targets: []string{exporter.Addr()},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prom.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr, err := suite.cluster.Expose(ctx, strings.TrimPrefix(prom.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return &errorRates{exporter: exporter, prom: prom, inCluster: addr}
}

// set makes the deployment answer 10 requests a second, share of them
// with code 500.
func (e *errorRates) set(ns, deployment string, share float64) {
	e.exporter.SetTraffic(ns, deployment, 10, 10*share)
}

// analysis measures the new deployment's error rate every second while
// the steps run, and fails above 5%.
func (e *errorRates) analysis() *dcv1.Analysis {
	return &dcv1.Analysis{
		Interval:              metav1.Duration{Duration: time.Second},
		ConsecutiveErrorLimit: ptr.To(int32(10)),
		Metrics: []dcv1.AnalysisMetric{{
			Name:             "error-rate",
			Prometheus:       &dcv1.PrometheusMetric{Address: "http://" + e.inCluster, Query: localprom.ErrorRateQuery},
			SuccessCondition: "result[0] <= 0.05",
		}},
	}
}

// waitRated waits until Prometheus has two scrapes of the deployment's
// requests, so that its error rate is a number and the analysis's first
// measurement a verdict.
func (e *errorRates) waitRated(t *testing.T, ns, deployment string) {
	t.Helper()
	query := `rate(` + localprom.RequestsMetric + `{namespace="` + ns + `",deployment="` + deployment + `",code="200"}[5s]) > 0`
	err := rollout.Poll(context.Background(), rolloutTimeout, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.prom.URL()+"/api/v1/query?query="+url.QueryEscape(query), nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		var answer struct {
			Data struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
			return false, err
		}
		return len(answer.Data.Result) > 0, nil
	})
	if err != nil {
		t.Fatalf("waiting for prometheus to rate %s: %v", deployment, err)
	}
}
