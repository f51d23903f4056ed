// Package trafficrouting sets the weights and header routes of the Gateway
// API routes a canary rollout manages (rollingParams.trafficRouting). The
// deployer moves a route through a rollout's steps; dc-controller puts it
// back at rest (100% stable, no header routes) whenever no rollout runs, so
// that a route never depends on a deployer being alive.
//
// Routes are handled as unstructured objects: HTTPRoute and GRPCRoute have
// the same rules/backendRefs/matches shape for what is changed here, and the
// project needs no Gateway API client library for it.
package trafficrouting

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// The route kinds a DeploymentConfig can manage.
var (
	HTTPRoutes = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	GRPCRoutes = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "grpcroutes"}
)

// Ref is one route of a DeploymentConfig's trafficRouting.
type Ref struct {
	// Resource is the route's resource, and Kind its kind.
	Resource schema.GroupVersionResource
	Kind     string
	// Name is the route's name, in the DeploymentConfig's namespace.
	Name string
	// HeaderRoutes says that setHeaderRoute steps add their rules here.
	HeaderRoutes bool
	// Rules names the managed rules; empty manages every rule with a
	// backendRef to the stable Service.
	Rules []string
}

// String names the route as kubectl would.
func (r Ref) String() string {
	return r.Resource.Resource + "/" + r.Name
}

// GroupVersionKind is the route's.
func (r Ref) GroupVersionKind() schema.GroupVersionKind {
	return r.Resource.GroupVersion().WithKind(r.Kind)
}

// Refs lists the routes of tr. A route named by httpRoute or grpcRoute
// takes header routes, as in Argo Rollouts' Gateway API plugin.
func Refs(tr *dcv1.TrafficRouting) []Ref {
	if tr == nil || tr.GatewayAPI == nil {
		return nil
	}
	g := tr.GatewayAPI
	var refs []Ref
	add := func(res schema.GroupVersionResource, kind, one string, many []dcv1.GatewayRoute) {
		if one != "" {
			refs = append(refs, Ref{Resource: res, Kind: kind, Name: one, HeaderRoutes: true})
		}
		for _, r := range many {
			refs = append(refs, Ref{Resource: res, Kind: kind, Name: r.Name, HeaderRoutes: r.UseHeaderRoutes, Rules: r.Rules})
		}
	}
	add(HTTPRoutes, "HTTPRoute", g.HTTPRoute, g.HTTPRoutes)
	add(GRPCRoutes, "GRPCRoute", g.GRPCRoute, g.GRPCRoutes)
	return refs
}

// State is what a rollout wants its routes to say.
type State struct {
	// Weight is the canary's share of the managed rules' requests, 0 to 100.
	Weight int32
	// Headers are the header routes in force, by managed route name.
	Headers map[string][]dcv1.HeaderRoutingMatch
}

// Rest is a route between rollouts: every request to the stable Service.
var Rest = State{}

// IsRest reports whether s sends nothing to the canary.
func (s State) IsRest() bool {
	return s.Weight == 0 && len(s.Headers) == 0
}

// Apply rewrites route to state s. It changes only the managed rules'
// stable and canary backendRefs and the rules named after tr's managed
// routes; it reports whether anything changed. A route without a managed
// rule is an error: weights could not be set.
func Apply(route *unstructured.Unstructured, ref Ref, tr *dcv1.TrafficRouting, s State) (bool, error) {
	rules, _, err := unstructured.NestedSlice(route.Object, "spec", "rules")
	if err != nil {
		return false, fmt.Errorf("%s: spec.rules: %w", ref, err)
	}
	headerNames := managedRouteNames(tr)
	var kept []any
	var managed []map[string]any
	for _, item := range rules {
		rule, ok := item.(map[string]any)
		if !ok {
			return false, fmt.Errorf("%s: spec.rules holds a %T, not a rule", ref, item)
		}
		name, _ := rule["name"].(string)
		if slices.Contains(headerNames, name) {
			continue // rebuilt below from s
		}
		kept = append(kept, rule)
		if isManaged(rule, name, ref, tr.StableService, route.GetNamespace()) {
			managed = append(managed, rule)
		}
	}
	if len(managed) == 0 {
		return false, &NoRuleError{Ref: ref, Want: wantedRules(ref, tr.StableService)}
	}
	for _, rule := range managed {
		if err := setWeights(rule, tr, route.GetNamespace(), s.Weight); err != nil {
			return false, &NoRuleError{Ref: ref, Want: err.Error()}
		}
	}
	if ref.HeaderRoutes {
		for _, name := range headerNames {
			if match, ok := s.Headers[name]; ok && len(match) > 0 {
				kept = append(kept, headerRule(name, managed[0], tr, route.GetNamespace(), match))
			}
		}
	}
	before, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	if err := unstructured.SetNestedSlice(route.Object, kept, "spec", "rules"); err != nil {
		return false, fmt.Errorf("%s: set spec.rules: %w", ref, err)
	}
	return !reflect.DeepEqual(before, kept), nil
}

// NoRuleError says that a route has no rule whose weights the rollout
// may set.
type NoRuleError struct {
	Ref  Ref
	Want string
}

func (e *NoRuleError) Error() string {
	return fmt.Sprintf("%s has no rule to manage: %s", e.Ref, e.Want)
}

// managedRouteNames lists the names of tr's header routes.
func managedRouteNames(tr *dcv1.TrafficRouting) []string {
	names := make([]string, 0, len(tr.ManagedRoutes))
	for _, m := range tr.ManagedRoutes {
		names = append(names, m.Name)
	}
	return names
}

// isManaged reports whether a rule's weights are the rollout's.
func isManaged(rule map[string]any, name string, ref Ref, stable, namespace string) bool {
	if len(ref.Rules) > 0 {
		return name != "" && slices.Contains(ref.Rules, name)
	}
	return findBackend(rule, stable, namespace) >= 0
}

// wantedRules says which rules a route had to have.
func wantedRules(ref Ref, stable string) string {
	if len(ref.Rules) > 0 {
		return fmt.Sprintf("no rule is named %s", strings.Join(ref.Rules, " or "))
	}
	return fmt.Sprintf("no rule has a backendRef to the stable Service %q", stable)
}

// findBackend returns the index of the rule's backendRef to the named
// Service of the route's namespace, or -1.
func findBackend(rule map[string]any, service, namespace string) int {
	refs, _ := rule["backendRefs"].([]any)
	for i, item := range refs {
		ref, ok := item.(map[string]any)
		if !ok || ref["name"] != service {
			continue
		}
		if group, _ := ref["group"].(string); group != "" {
			continue
		}
		if kind, _ := ref["kind"].(string); kind != "" && kind != "Service" {
			continue
		}
		if ns, _ := ref["namespace"].(string); ns != "" && ns != namespace {
			continue
		}
		return i
	}
	return -1
}

// setWeights gives the stable backendRef 100-weight and the canary's
// weight, adding the canary's (on the stable one's port) when missing.
func setWeights(rule map[string]any, tr *dcv1.TrafficRouting, namespace string, weight int32) error {
	refs, _ := rule["backendRefs"].([]any)
	stable := findBackend(rule, tr.StableService, namespace)
	if stable < 0 {
		return fmt.Errorf("a managed rule has no backendRef to the stable Service %q", tr.StableService)
	}
	canary := findBackend(rule, tr.CanaryService, namespace)
	if canary < 0 {
		added := serviceRef(tr.CanaryService)
		if port, ok := refs[stable].(map[string]any)["port"]; ok {
			added["port"] = port
		}
		refs = append(refs, added)
		canary = len(refs) - 1
	}
	refs[stable].(map[string]any)["weight"] = int64(100 - weight)
	refs[canary].(map[string]any)["weight"] = int64(weight)
	rule["backendRefs"] = refs
	return nil
}

// serviceRef is a backendRef to a Service, with the group and kind the
// API server would default, so that a route read back compares equal.
func serviceRef(name string) map[string]any {
	return map[string]any{"group": "", "kind": "Service", "name": name}
}

// headerRule is the rule of a header route: the managed rule's matches,
// each with the headers added, sending to the canary only.
func headerRule(name string, base map[string]any, tr *dcv1.TrafficRouting, namespace string, match []dcv1.HeaderRoutingMatch) map[string]any {
	headers := make([]any, 0, len(match))
	for _, m := range match {
		headers = append(headers, headerMatch(m))
	}
	var matches []any
	baseMatches, _ := base["matches"].([]any)
	if len(baseMatches) == 0 {
		baseMatches = []any{map[string]any{}}
	}
	for _, item := range baseMatches {
		m, _ := item.(map[string]any)
		copied := runtime.DeepCopyJSONValue(m).(map[string]any)
		existing, _ := copied["headers"].([]any)
		copied["headers"] = append(existing, runtime.DeepCopyJSONValue(headers).([]any)...)
		matches = append(matches, copied)
	}
	backend := serviceRef(tr.CanaryService)
	backend["weight"] = int64(1)
	refs, _ := base["backendRefs"].([]any)
	if i := findBackend(base, tr.StableService, namespace); i >= 0 {
		if port, ok := refs[i].(map[string]any)["port"]; ok {
			backend["port"] = port
		}
	}
	return map[string]any{
		"name":        name,
		"matches":     matches,
		"backendRefs": []any{backend},
	}
}

// headerMatch turns a header of a header route into a Gateway API header
// match. The Gateway API has no prefix match: a prefix becomes a regular
// expression.
func headerMatch(m dcv1.HeaderRoutingMatch) map[string]any {
	v := m.HeaderValue
	switch {
	case v.Exact != nil:
		return map[string]any{"name": m.HeaderName, "type": "Exact", "value": *v.Exact}
	case v.Prefix != nil:
		return map[string]any{"name": m.HeaderName, "type": "RegularExpression", "value": "^" + regexp.QuoteMeta(*v.Prefix) + ".*"}
	case v.Regex != nil:
		return map[string]any{"name": m.HeaderName, "type": "RegularExpression", "value": *v.Regex}
	}
	return map[string]any{"name": m.HeaderName, "type": "Exact", "value": ""}
}

// Accepted returns nil when a parent (a Gateway) accepted the route, and
// otherwise an error that says what its status shows.
func Accepted(route *unstructured.Unstructured, ref Ref) error {
	parents, _, _ := unstructured.NestedSlice(route.Object, "status", "parents")
	if len(parents) == 0 {
		return fmt.Errorf("%s is not Accepted: no Gateway has reported on it (status.parents is empty); check its parentRefs and that a Gateway API implementation runs", ref)
	}
	var why []string
	for _, item := range parents {
		parent, _ := item.(map[string]any)
		conds, _, _ := unstructured.NestedSlice(parent, "conditions")
		gateway, _, _ := unstructured.NestedString(parent, "parentRef", "name")
		for _, c := range conds {
			cond, _ := c.(map[string]any)
			if cond["type"] != "Accepted" {
				continue
			}
			if cond["status"] == "True" {
				return nil
			}
			why = append(why, fmt.Sprintf("%s: %v: %v", gateway, cond["reason"], cond["message"]))
		}
	}
	if len(why) == 0 {
		return fmt.Errorf("%s is not Accepted: no parent reports an Accepted condition", ref)
	}
	return fmt.Errorf("%s is not Accepted by any parent (%s)", ref, strings.Join(why, "; "))
}
