package strategy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/trafficrouting"
)

// fakeRoutes records the states a rollout sets, each with the scales
// done before it, so that a test sees whether pods came before requests.
type fakeRoutes struct {
	mu       sync.Mutex
	cluster  *fc.Cluster
	checkErr error
	log      []string
}

func (f *fakeRoutes) Check(context.Context) error { return f.checkErr }

func (f *fakeRoutes) Set(_ context.Context, s trafficrouting.State) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	entry := fmt.Sprintf("%s after %d scales", s, len(f.cluster.Scales()))
	if len(f.log) > 0 && strings.HasPrefix(f.log[len(f.log)-1], s.String()+" after ") {
		return false, nil
	}
	f.log = append(f.log, entry)
	return true, nil
}

func (f *fakeRoutes) states() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, e := range f.log {
		out = append(out, strings.SplitN(e, " after ", 2)[0])
	}
	return out
}

var routed = &dcv1.TrafficRouting{
	StableService: "web",
	CanaryService: "web-preview",
	GatewayAPI:    &dcv1.GatewayAPIRouting{HTTPRoute: "web"},
	ManagedRoutes: []dcv1.ManagedRoute{{Name: "beta"}},
}

func (e *env) withRoutes(t *testing.T) *fakeRoutes {
	t.Helper()
	e.withServices(t)
	f := &fakeRoutes{cluster: e.cluster}
	e.rollout.WithRoutes(func(*dcv1.TrafficRouting) Routes { return f })
	return f
}

func headerRoute(name string) dcv1.RollingStep {
	return dcv1.RollingStep{SetHeaderRoute: &dcv1.SetHeaderRoute{Name: name, Match: []dcv1.HeaderRoutingMatch{
		{HeaderName: "X-Beta", HeaderValue: dcv1.StringMatch{Exact: ptr.To("1")}},
	}}}
}

func canaryScale(n int32) dcv1.RollingStep {
	return dcv1.RollingStep{SetCanaryScale: &dcv1.SetCanaryScale{Replicas: ptr.To(n)}}
}

func trafficSteps(s ...dcv1.RollingStep) *dcv1.RollingDeploymentStrategyParams {
	p := steps("25%", "25%", s...)
	p.TrafficRouting = routed
	return p
}

func TestTrafficCanary(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	routes := e.withRoutes(t)
	params := trafficSteps(headerRoute("beta"), weight(10), canaryScale(3), weight(50),
		dcv1.RollingStep{SetCanaryScale: &dcv1.SetCanaryScale{MatchTrafficWeight: true}}, weight(25))
	if _, err := e.rollout.Rolling(t.Context(), params, e.from, e.to, 4); err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	want := []string{
		"100% stable",                   // the start: nothing was set before
		"0% canary and 1 header routes", // setHeaderRoute: one pod first
		"10% canary and 1 header routes",
		"50% canary and 1 header routes", // at setCanaryScale's 3 pods
		"25% canary and 1 header routes", // matchTrafficWeight: 2 pods, then 25%: 1 pod
		"100% canary",                    // at full size
		"100% stable",                    // the stable Service now selects web-2
	}
	if got := routes.states(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("route states:\n got %q\nwant %q", got, want)
	}
	// The old deployment keeps all its pods until the new one is stable;
	// the canary is sized by the weight, setCanaryScale, or a header route.
	if got, want := e.scales(1), "web-2=1 web-2=3 web-2=2 web-2=1 web-2=4 web-1=0"; got != want {
		t.Errorf("scales: %s, want %s", got, want)
	}
	if sel := e.selector(t, "web"); !selects(sel, "web-2") {
		t.Errorf("stable Service selects %v, want web-2", sel)
	}
	if _, pr := e.rcState(t, "web-2"); pr.Switch != deployment.SwitchFinal {
		mark := pr.Switch
		t.Errorf("web-2 switched mark %q, want final", mark)
	}
}

// TestTrafficPodsBeforeRequests checks the order of a growing and a
// shrinking canary: pods come before the requests, and requests leave
// before the pods.
func TestTrafficPodsBeforeRequests(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	routes := e.withRoutes(t)
	if _, err := e.rollout.Rolling(t.Context(), trafficSteps(weight(75), weight(25)), e.from, e.to, 4); err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	// Setup made 1 scale; web-2=3 is the 2nd, web-2=1 the 3rd.
	want := []string{"100% stable after 1 scales", "75% canary after 2 scales", "25% canary after 2 scales"}
	if got := routes.log[:3]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("route log %q, want %q", got, want)
	}
}

func TestTrafficFailureRestoresStable(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	routes := e.withRoutes(t)
	e.rollout.WithAnalysis(failingAnalysis{})
	params := trafficSteps(headerRoute("beta"), weight(20), dcv1.RollingStep{Analysis: &dcv1.Analysis{}})
	_, err := e.rollout.Rolling(t.Context(), params, e.from, e.to, 4)
	if err == nil {
		t.Fatalf("rollout passed a failed analysis:\n%s", e.out.String())
	}
	states := routes.states()
	if last := states[len(states)-1]; last != "100% stable" {
		t.Errorf("routes end at %s, want 100%% stable; states %q", last, states)
	}
	if sel := e.selector(t, "web-preview"); !selects(sel, "web-1") {
		t.Errorf("canary Service selects %v after the failure, want web-1", sel)
	}
	if sel := e.selector(t, "web"); !selects(sel, "web-1") {
		t.Errorf("stable Service selects %v after the failure, want web-1", sel)
	}
	if from, _ := e.rcState(t, "web-1"); from != 4 {
		t.Errorf("web-1 has %d replicas, want 4", from)
	}
}

func TestTrafficRouteNotAcceptedMovesNothing(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	routes := e.withRoutes(t)
	routes.checkErr = errors.New("httproutes/web is not Accepted: no Gateway has reported on it")
	_, err := e.rollout.Rolling(t.Context(), trafficSteps(weight(10)), e.from, e.to, 4)
	if err == nil || !strings.Contains(err.Error(), "strategy.rollingParams.trafficRouting: httproutes/web is not Accepted") {
		t.Fatalf("rollout: %v; want the route's refusal, naming the field", err)
	}
	if got := e.scales(1); got != "" {
		t.Errorf("scales %s; want none", got)
	}
	if len(routes.log) != 0 {
		t.Errorf("routes were set: %q", routes.log)
	}
}

// TestTrafficResumes checks a restarted deployer: it goes back to the
// traffic of the steps before the recorded one.
func TestTrafficResumes(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	routes := e.withRoutes(t)
	params := trafficSteps(headerRoute("beta"), weight(50), pauseUntilPromoted)
	e.to = e.recordProgress(t, deployment.Progress{Stage: deployment.StageSteps, Step: 3, Steps: 3})
	done := e.runAsync(t.Context(), params, 4)
	e.waitPaused(t, "3")
	if got := routes.states(); len(got) != 1 || got[0] != "50% canary and 1 header routes" {
		t.Errorf("resumed at %q, want 50%% canary with the header route", got)
	}
	if to, _ := e.rcState(t, "web-2"); to != 2 {
		t.Errorf("web-2 has %d replicas, want 2", to)
	}
	e.promote(t, "3")
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
}

func TestCanaryReplicas(t *testing.T) {
	cases := []struct {
		name    string
		weight  int32
		scale   *dcv1.SetCanaryScale
		headers bool
		want    int32
	}{
		{"the weight's share, rounded up", 10, nil, false, 1},
		{"no weight, no pods", 0, nil, false, 0},
		{"a header route keeps a pod", 0, nil, true, 1},
		{"replicas", 10, &dcv1.SetCanaryScale{Replicas: ptr.To[int32](7)}, false, 7},
		{"replicas beyond desired are desired", 10, &dcv1.SetCanaryScale{Replicas: ptr.To[int32](70)}, false, 10},
		{"a scale weight", 10, &dcv1.SetCanaryScale{Weight: ptr.To[int32](45)}, false, 5},
		{"full weight", 100, nil, false, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &traffic{scale: tc.scale, state: trafficrouting.State{Weight: tc.weight}}
			if tc.headers {
				tr.state.Headers = map[string][]dcv1.HeaderRoutingMatch{"beta": nil}
			}
			if got := tr.canaryReplicas(10); got != tc.want {
				t.Errorf("canaryReplicas(10) = %d, want %d", got, tc.want)
			}
		})
	}
}
