package trafficrouting

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func routing() *dcv1.TrafficRouting {
	return &dcv1.TrafficRouting{
		StableService: "web-stable",
		CanaryService: "web-canary",
		GatewayAPI:    &dcv1.GatewayAPIRouting{HTTPRoute: "web"},
		ManagedRoutes: []dcv1.ManagedRoute{{Name: "canary-header"}},
	}
}

func route(t *testing.T, spec string) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute"}
	if err := yaml.Unmarshal([]byte(spec), &obj); err != nil {
		t.Fatal(err)
	}
	// A decoded route has int64 numbers, as the API's JSON gives them.
	data, _ := json.Marshal(obj)
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

const baseRoute = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop}
spec:
  parentRefs: [{name: gw}]
  rules:
  - name: main
    matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{name: web-stable, port: 8080}]
  - name: foreign
    matches: [{path: {type: PathPrefix, value: /admin}}]
    backendRefs: [{name: admin, port: 80, weight: 7}]
`

func rules(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	r, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestApply(t *testing.T) {
	exact := "yes"
	prefix := "beta-"
	header := map[string][]dcv1.HeaderRoutingMatch{"canary-header": {{HeaderName: "X-Canary", HeaderValue: dcv1.StringMatch{Exact: &exact}}}}
	prefixHeader := map[string][]dcv1.HeaderRoutingMatch{"canary-header": {{HeaderName: "X-User", HeaderValue: dcv1.StringMatch{Prefix: &prefix}}}}
	cases := []struct {
		name  string
		spec  string
		ref   Ref
		state State
		want  string
	}{{
		name:  "a weight adds the canary backendRef on the stable one's port and leaves foreign rules alone",
		spec:  baseRoute,
		ref:   Refs(routing())[0],
		state: State{Weight: 10},
		want:  `[{"backendRefs":[{"name":"web-stable","port":8080,"weight":90},{"group":"","kind":"Service","name":"web-canary","port":8080,"weight":10}],"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"name":"main"},{"backendRefs":[{"name":"admin","port":80,"weight":7}],"matches":[{"path":{"type":"PathPrefix","value":"/admin"}}],"name":"foreign"}]`,
	}, {
		name:  "a header route is a rule named after it, with the managed rule's matches and the header, to the canary only",
		spec:  baseRoute,
		ref:   Refs(routing())[0],
		state: State{Weight: 0, Headers: header},
		want:  `[{"backendRefs":[{"name":"web-stable","port":8080,"weight":100},{"group":"","kind":"Service","name":"web-canary","port":8080,"weight":0}],"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"name":"main"},{"backendRefs":[{"name":"admin","port":80,"weight":7}],"matches":[{"path":{"type":"PathPrefix","value":"/admin"}}],"name":"foreign"},{"backendRefs":[{"group":"","kind":"Service","name":"web-canary","port":8080,"weight":1}],"matches":[{"headers":[{"name":"X-Canary","type":"Exact","value":"yes"}],"path":{"type":"PathPrefix","value":"/"}}],"name":"canary-header"}]`,
	}, {
		name:  "a prefix becomes a regular expression",
		spec:  baseRoute,
		ref:   Refs(routing())[0],
		state: State{Headers: prefixHeader},
		want:  `"headers":[{"name":"X-User","type":"RegularExpression","value":"^beta-.*"}]`,
	}, {
		name: "rest removes the header rule and sends everything to stable, keeping a third backendRef's weight",
		spec: `
metadata: {name: web, namespace: shop}
spec:
  rules:
  - backendRefs: [{name: web-stable, port: 80, weight: 60}, {name: web-canary, port: 80, weight: 40}, {name: mirror, port: 80, weight: 5}]
  - name: canary-header
    backendRefs: [{name: web-canary, port: 80}]
`,
		ref:   Refs(routing())[0],
		state: Rest,
		want:  `[{"backendRefs":[{"name":"web-stable","port":80,"weight":100},{"name":"web-canary","port":80,"weight":0},{"name":"mirror","port":80,"weight":5}]}]`,
	}, {
		name: "named rules: only those are managed",
		spec: `
metadata: {name: web, namespace: shop}
spec:
  rules:
  - name: a
    backendRefs: [{name: web-stable, port: 80}]
  - name: b
    backendRefs: [{name: web-stable, port: 80}]
`,
		ref:   Ref{Resource: HTTPRoutes, Name: "web", Rules: []string{"b"}},
		state: State{Weight: 30},
		want:  `[{"backendRefs":[{"name":"web-stable","port":80}],"name":"a"},{"backendRefs":[{"name":"web-stable","port":80,"weight":70},{"group":"","kind":"Service","name":"web-canary","port":80,"weight":30}],"name":"b"}]`,
	}, {
		name: "a backendRef to a Service of another namespace or another kind is not the stable Service",
		spec: `
metadata: {name: web, namespace: shop}
spec:
  rules:
  - backendRefs: [{name: web-stable, namespace: other, port: 80}, {name: web-stable, kind: ServiceImport, group: multicluster.x-k8s.io, port: 80}]
  - backendRefs: [{name: web-stable, namespace: shop, port: 80}]
`,
		ref:   Refs(routing())[0],
		state: State{Weight: 50},
		want:  `[{"backendRefs":[{"name":"web-stable","namespace":"other","port":80},{"group":"multicluster.x-k8s.io","kind":"ServiceImport","name":"web-stable","port":80}]},{"backendRefs":[{"name":"web-stable","namespace":"shop","port":80,"weight":50},{"group":"","kind":"Service","name":"web-canary","port":80,"weight":50}]}]`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := route(t, tc.spec)
			changed, err := Apply(u, tc.ref, routing(), tc.state)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if !changed {
				t.Errorf("Apply reported no change")
			}
			if got := rules(t, u); !strings.Contains(got, tc.want) {
				t.Errorf("rules:\n got %s\nwant %s", got, tc.want)
			}
			again, err := Apply(u, tc.ref, routing(), tc.state)
			if err != nil || again {
				t.Errorf("a second Apply of the same state: changed=%v, err=%v; want no change", again, err)
			}
		})
	}
}

func TestApplyWithoutAManagedRule(t *testing.T) {
	for name, ref := range map[string]Ref{
		"no rule sends to the stable Service": Refs(routing())[0],
		"no rule has the name":                {Resource: HTTPRoutes, Name: "web", Rules: []string{"missing"}},
	} {
		t.Run(name, func(t *testing.T) {
			u := route(t, `
metadata: {name: web, namespace: shop}
spec:
  rules:
  - name: other
    backendRefs: [{name: something-else, port: 80}]
`)
			before := rules(t, u)
			_, err := Apply(u, ref, routing(), State{Weight: 10})
			var noRule *NoRuleError
			if !errors.As(err, &noRule) {
				t.Fatalf("Apply: %v; want a NoRuleError", err)
			}
			if !strings.Contains(err.Error(), "httproutes/web") {
				t.Errorf("error %q does not name the route", err)
			}
			if rules(t, u) != before {
				t.Errorf("a refused Apply changed the route")
			}
		})
	}
}

func TestAccepted(t *testing.T) {
	cases := []struct {
		name, status, wantErr string
	}{
		{"accepted by one of two parents", `{parents: [{parentRef: {name: a}, conditions: [{type: Accepted, status: "False", reason: NotAllowedByListeners, message: "no"}]}, {parentRef: {name: b}, conditions: [{type: Accepted, status: "True"}]}]}`, ""},
		{"no status", `{}`, "status.parents is empty"},
		{"refused", `{parents: [{parentRef: {name: gw}, conditions: [{type: Accepted, status: "False", reason: NoMatchingParent, message: "no listener"}]}]}`, "gw: NoMatchingParent: no listener"},
		{"no Accepted condition", `{parents: [{parentRef: {name: gw}, conditions: [{type: ResolvedRefs, status: "True"}]}]}`, "no parent reports an Accepted condition"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := route(t, "metadata: {name: web}\nstatus: "+tc.status)
			err := Accepted(u, Refs(routing())[0])
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Accepted: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "httproutes/web is not Accepted") {
				t.Fatalf("Accepted: %v; want an error naming the route and saying %q", err, tc.wantErr)
			}
		})
	}
}

func TestRefs(t *testing.T) {
	tr := routing()
	tr.GatewayAPI = &dcv1.GatewayAPIRouting{
		HTTPRoutes: []dcv1.GatewayRoute{{Name: "a", UseHeaderRoutes: true}, {Name: "b"}},
		GRPCRoute:  "g",
	}
	var got []string
	for _, r := range Refs(tr) {
		got = append(got, r.String()+" "+r.GroupVersionKind().Kind+map[bool]string{true: " headers", false: ""}[r.HeaderRoutes])
	}
	want := "httproutes/a HTTPRoute headers,httproutes/b HTTPRoute,grpcroutes/g GRPCRoute headers"
	if strings.Join(got, ",") != want {
		t.Errorf("Refs = %s, want %s", strings.Join(got, ","), want)
	}
}

// TestApplyGRPCRoute: a GRPCRoute's rules have the same backendRefs, and
// its matches a method beside the headers; a header route keeps the
// method.
func TestApplyGRPCRoute(t *testing.T) {
	exact := "yes"
	u := route(t, `
kind: GRPCRoute
metadata: {name: api, namespace: shop}
spec:
  rules:
  - matches: [{method: {service: shop.Cart, method: Add}, headers: [{name: tenant, value: a}]}]
    backendRefs: [{name: web-stable, port: 9090}]
`)
	tr := routing()
	tr.GatewayAPI = &dcv1.GatewayAPIRouting{GRPCRoute: "api"}
	ref := Refs(tr)[0]
	state := State{Weight: 5, Headers: map[string][]dcv1.HeaderRoutingMatch{"canary-header": {{HeaderName: "X-Canary", HeaderValue: dcv1.StringMatch{Exact: &exact}}}}}
	if _, err := Apply(u, ref, tr, state); err != nil {
		t.Fatal(err)
	}
	want := `[{"backendRefs":[{"name":"web-stable","port":9090,"weight":95},{"group":"","kind":"Service","name":"web-canary","port":9090,"weight":5}],"matches":[{"headers":[{"name":"tenant","value":"a"}],"method":{"method":"Add","service":"shop.Cart"}}]},` +
		`{"backendRefs":[{"group":"","kind":"Service","name":"web-canary","port":9090,"weight":1}],"matches":[{"headers":[{"name":"tenant","value":"a"},{"name":"X-Canary","type":"Exact","value":"yes"}],"method":{"method":"Add","service":"shop.Cart"}}],"name":"canary-header"}]`
	if got := rules(t, u); got != want {
		t.Errorf("rules:\n got %s\nwant %s", got, want)
	}
}

// TestApplySharedRoute: a route that other DeploymentConfigs and users
// share keeps their rules where they are, and their backendRefs' shares.
func TestApplySharedRoute(t *testing.T) {
	exact := "yes"
	beta := func(v string) map[string][]dcv1.HeaderRoutingMatch {
		return map[string][]dcv1.HeaderRoutingMatch{"canary-header": {{HeaderName: "X-Canary", HeaderValue: dcv1.StringMatch{Exact: &v}}}}
	}
	cases := []struct {
		name  string
		spec  string
		state State
		want  string // the rules, exactly
	}{{
		name: "another DeploymentConfig's header rule of the same name stays at rest",
		spec: `
metadata: {name: web, namespace: shop}
spec:
  rules:
  - backendRefs: [{name: web-stable, port: 80, weight: 100}, {name: web-canary, port: 80, weight: 0}]
  - name: canary-header
    backendRefs: [{name: api-canary, port: 80, weight: 1}]
`,
		state: Rest,
		want:  `[{"backendRefs":[{"name":"web-stable","port":80,"weight":100},{"name":"web-canary","port":80,"weight":0}]},{"backendRefs":[{"name":"api-canary","port":80,"weight":1}],"name":"canary-header"}]`,
	}, {
		name: "a foreign backendRef keeps its share: stable:1 other:1 at 20% is 40/10/50",
		spec: `
metadata: {name: web, namespace: shop}
spec:
  rules:
  - backendRefs: [{name: web-stable, port: 80, weight: 1}, {name: other, port: 80, weight: 1}]
`,
		state: State{Weight: 20},
		want:  `[{"backendRefs":[{"name":"web-stable","port":80,"weight":80},{"name":"other","port":80,"weight":100},{"group":"","kind":"Service","name":"web-canary","port":80,"weight":20}]}]`,
	}, {
		name: "and at rest it still has half",
		spec: `
metadata: {name: web, namespace: shop}
spec:
  rules:
  - backendRefs: [{name: web-stable, port: 80, weight: 80}, {name: other, port: 80, weight: 100}, {name: web-canary, port: 80, weight: 20}]
`,
		state: Rest,
		want:  `[{"backendRefs":[{"name":"web-stable","port":80,"weight":100},{"name":"other","port":80,"weight":100},{"name":"web-canary","port":80,"weight":0}]}]`,
	}, {
		name: "our header rule changes in place, before another's",
		spec: `
metadata: {name: web, namespace: shop}
spec:
  rules:
  - backendRefs: [{name: web-stable, port: 80, weight: 100}, {name: web-canary, port: 80, weight: 0}]
  - name: canary-header
    backendRefs: [{group: "", kind: Service, name: web-canary, port: 80, weight: 1}]
    matches: [{headers: [{name: X-Canary, type: Exact, value: "no"}]}]
  - name: api-header
    backendRefs: [{name: api-canary, port: 80, weight: 1}]
`,
		state: State{Headers: beta(exact)},
		want:  `[{"backendRefs":[{"name":"web-stable","port":80,"weight":100},{"name":"web-canary","port":80,"weight":0}]},{"backendRefs":[{"group":"","kind":"Service","name":"web-canary","port":80,"weight":1}],"matches":[{"headers":[{"name":"X-Canary","type":"Exact","value":"yes"}]}],"name":"canary-header"},{"backendRefs":[{"name":"api-canary","port":80,"weight":1}],"name":"api-header"}]`,
	}, {
		name: "a header rule does to requests what the base rule does",
		spec: `
metadata: {name: web, namespace: shop}
spec:
  rules:
  - matches: [{path: {type: PathPrefix, value: /shop}}]
    filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}, {type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: X-Env, value: prod}]}}]
    timeouts: {request: 5s}
    sessionPersistence: {sessionName: cart, type: Cookie}
    backendRefs: [{name: web-stable, port: 80}]
`,
		state: State{Headers: beta(exact)},
		want:  `[{"backendRefs":[{"name":"web-stable","port":80,"weight":100},{"group":"","kind":"Service","name":"web-canary","port":80,"weight":0}],"filters":[{"type":"URLRewrite","urlRewrite":{"path":{"replacePrefixMatch":"/","type":"ReplacePrefixMatch"}}},{"requestHeaderModifier":{"set":[{"name":"X-Env","value":"prod"}]},"type":"RequestHeaderModifier"}],"matches":[{"path":{"type":"PathPrefix","value":"/shop"}}],"sessionPersistence":{"sessionName":"cart","type":"Cookie"},"timeouts":{"request":"5s"}},{"backendRefs":[{"group":"","kind":"Service","name":"web-canary","port":80,"weight":1}],"filters":[{"type":"URLRewrite","urlRewrite":{"path":{"replacePrefixMatch":"/","type":"ReplacePrefixMatch"}}},{"requestHeaderModifier":{"set":[{"name":"X-Env","value":"prod"}]},"type":"RequestHeaderModifier"}],"matches":[{"headers":[{"name":"X-Canary","type":"Exact","value":"yes"}],"path":{"type":"PathPrefix","value":"/shop"}}],"name":"canary-header","sessionPersistence":{"sessionName":"cart","type":"Cookie"},"timeouts":{"request":"5s"}}]`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := route(t, tc.spec)
			if _, err := Apply(u, Refs(routing())[0], routing(), tc.state); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got := rules(t, u); got != tc.want {
				t.Errorf("rules:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestApplyHeaderRuleNameTaken: a rule of someone else with a managed
// route's name is neither removed nor replaced; adding the header route is
// refused with an error that names it.
func TestApplyHeaderRuleNameTaken(t *testing.T) {
	exact := "yes"
	u := route(t, `
metadata: {name: web, namespace: shop}
spec:
  rules:
  - backendRefs: [{name: web-stable, port: 80}]
  - name: canary-header
    backendRefs: [{name: admin, port: 80}]
`)
	before := rules(t, u)
	_, err := Apply(u, Refs(routing())[0], routing(), State{Headers: map[string][]dcv1.HeaderRoutingMatch{"canary-header": {{HeaderName: "X", HeaderValue: dcv1.StringMatch{Exact: &exact}}}}})
	var taken *RuleNameTakenError
	if !errors.As(err, &taken) || !strings.Contains(err.Error(), `"canary-header"`) {
		t.Fatalf("Apply: %v; want a RuleNameTakenError naming canary-header", err)
	}
	if _, err := Apply(u, Refs(routing())[0], routing(), Rest); err != nil {
		t.Fatalf("Apply at rest: %v", err)
	}
	if got := rules(t, u); !strings.Contains(got, `{"backendRefs":[{"name":"admin","port":80}],"name":"canary-header"}`) {
		t.Errorf("the foreign rule is gone or changed: %s (was %s)", got, before)
	}
}
