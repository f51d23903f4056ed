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

// Apply rewrites route to state s. It changes only what the
// DeploymentConfig owns: the stable and canary backendRefs of its managed
// rules and its own header rules, those named after one of tr's managed
// routes that send to its canary Service alone. A rule or backendRef of
// anyone else (a user, another DeploymentConfig sharing the route) keeps
// its place and its share of the requests. It reports whether anything
// changed. A route without a managed rule is an error: weights could not
// be set.
func Apply(route *unstructured.Unstructured, ref Ref, tr *dcv1.TrafficRouting, s State) (bool, error) {
	rules, _, err := unstructured.NestedSlice(route.Object, "spec", "rules")
	if err != nil {
		return false, fmt.Errorf("%s: spec.rules: %w", ref, err)
	}
	ns := route.GetNamespace()
	headerNames := managedRouteNames(tr)
	own := map[string]int{} // our header rules, by name, at their index
	var managed []map[string]any
	for i, item := range rules {
		rule, ok := item.(map[string]any)
		if !ok {
			return false, fmt.Errorf("%s: spec.rules holds a %T, not a rule", ref, item)
		}
		name, _ := rule["name"].(string)
		if slices.Contains(headerNames, name) && isOwnHeaderRule(rule, tr.CanaryService, ns) {
			own[name] = i
			continue
		}
		if isManaged(rule, name, ref, tr.StableService, ns) {
			managed = append(managed, rule)
		}
	}
	if len(managed) == 0 {
		return false, &NoRuleError{Ref: ref, Want: wantedRules(ref, tr.StableService)}
	}
	before := runtime.DeepCopyJSONValue(rules).([]any)
	for _, rule := range managed {
		if err := setWeights(rule, tr, ns, s.Weight); err != nil {
			return false, &NoRuleError{Ref: ref, Want: err.Error()}
		}
	}
	rules, err = setHeaderRules(rules, own, ref, tr, managed[0], ns, s)
	if err != nil {
		return false, err
	}
	if err := unstructured.SetNestedSlice(route.Object, rules, "spec", "rules"); err != nil {
		return false, fmt.Errorf("%s: set spec.rules: %w", ref, err)
	}
	return !reflect.DeepEqual(before, rules), nil
}

// setHeaderRules puts the header rules of s in place of our own (own
// holds their indexes in rules): one still wanted is rewritten where it
// is, one no longer wanted goes, a new one is added at the end. A new one
// whose name another's rule has is refused, as rule names are unique.
func setHeaderRules(rules []any, own map[string]int, ref Ref, tr *dcv1.TrafficRouting, base map[string]any, ns string, s State) ([]any, error) {
	wanted := map[string]map[string]any{}
	for name, match := range s.Headers {
		if ref.HeaderRoutes && len(match) > 0 {
			wanted[name] = headerRule(name, base, tr, ns, match)
		}
	}
	out := make([]any, 0, len(rules)+len(wanted))
	for i, item := range rules {
		name, _ := item.(map[string]any)["name"].(string)
		if at, ok := own[name]; !ok || at != i {
			out = append(out, item)
			continue
		}
		if rule, ok := wanted[name]; ok {
			out = append(out, rule)
			delete(wanted, name)
		}
	}
	for _, name := range managedRouteNames(tr) {
		rule, ok := wanted[name]
		if !ok {
			continue
		}
		if ruleNamed(out, name) >= 0 {
			return nil, &RuleNameTakenError{Ref: ref, Name: name}
		}
		out = append(out, rule)
	}
	return out, nil
}

// ruleNamed returns the index of the rule of that name, or -1.
func ruleNamed(rules []any, name string) int {
	for i, item := range rules {
		if n, _ := item.(map[string]any)["name"].(string); n == name {
			return i
		}
	}
	return -1
}

// isOwnHeaderRule reports whether a rule named after a managed route is
// the DeploymentConfig's header rule: one that sends to its canary Service
// and nothing else. That is the mark a header rule carries; a rule of the
// same name sending anywhere else is someone else's.
func isOwnHeaderRule(rule map[string]any, canary, namespace string) bool {
	refs, _ := rule["backendRefs"].([]any)
	return len(refs) == 1 && findBackend(rule, canary, namespace) == 0
}

// RuleNameTakenError says a header rule cannot be added: a rule of the
// route that is not the DeploymentConfig's has its name.
type RuleNameTakenError struct {
	Ref  Ref
	Name string
}

func (e *RuleNameTakenError) Error() string {
	return fmt.Sprintf("%s already has a rule named %q that is not this DeploymentConfig's header route: give trafficRouting.managedRoutes a name no other rule of the route has", e.Ref, e.Name)
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

// setWeights splits the share of the requests the stable and canary
// backendRefs have between them: the canary gets weight percent of it.
// Without other backendRefs in the rule that share is all, written as
// weights summing to 100. With others, the sum of the two is kept, so each
// other backendRef keeps its share; when that sum cannot be split in
// percent, every weight of the rule is first multiplied by the same
// factor, which leaves every share as it was. The canary's backendRef is
// added (on the stable one's port) when missing.
func setWeights(rule map[string]any, tr *dcv1.TrafficRouting, namespace string, weight int32) error {
	refs, _ := rule["backendRefs"].([]any)
	stable := findBackend(rule, tr.StableService, namespace)
	if stable < 0 {
		return fmt.Errorf("a managed rule has no backendRef to the stable Service %q", tr.StableService)
	}
	canary := findBackend(rule, tr.CanaryService, namespace)
	total := weightOf(refs[stable])
	if canary >= 0 {
		total += weightOf(refs[canary])
	} else {
		added := serviceRef(tr.CanaryService)
		if port, ok := refs[stable].(map[string]any)["port"]; ok {
			added["port"] = port
		}
		added["weight"] = int64(0)
		refs = append(refs, added)
		canary = len(refs) - 1
	}
	if len(refs) == 2 {
		total = 100
	}
	if factor := 100 / gcd(total, 100); total > 0 && factor > 1 {
		if err := scaleWeights(refs, factor); err != nil {
			return err
		}
		total *= factor
	}
	refs[stable].(map[string]any)["weight"] = total * int64(100-weight) / 100
	refs[canary].(map[string]any)["weight"] = total * int64(weight) / 100
	rule["backendRefs"] = refs
	return nil
}

// maxWeight is the Gateway API's largest backendRef weight.
const maxWeight = 1000000

// weightOf is a backendRef's weight; the Gateway API's default is 1.
func weightOf(ref any) int64 {
	w, ok := ref.(map[string]any)["weight"].(int64)
	if !ok {
		return 1
	}
	return w
}

// scaleWeights multiplies every weight of refs by factor.
func scaleWeights(refs []any, factor int64) error {
	for _, ref := range refs {
		w := weightOf(ref) * factor
		if w > maxWeight {
			return fmt.Errorf("a managed rule's weights are too large to split in percent without going over %d", maxWeight)
		}
		ref.(map[string]any)["weight"] = w
	}
	return nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
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
	rule := map[string]any{
		"name":        name,
		"matches":     matches,
		"backendRefs": []any{backend},
	}
	// What the base rule does to a request besides choosing its backend
	// (rewrites, header changes, timeouts, retries, session persistence)
	// applies to the canary's requests the same way.
	for _, key := range []string{"filters", "timeouts", "retry", "sessionPersistence"} {
		if v, ok := base[key]; ok {
			rule[key] = runtime.DeepCopyJSONValue(v)
		}
	}
	return rule
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
