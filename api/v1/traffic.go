package v1

import "fmt"

// Reasons of the conditions about trafficRouting.
const (
	// InvalidHeaderRouteReason is the reason of the Progressing and
	// Stalled conditions when a setHeaderRoute step holds a match a
	// Gateway API data plane would refuse (a regex that is not RE2).
	InvalidHeaderRouteReason = "InvalidHeaderRoute"
	// GatewayAPIUnsupportedReason is the reason of the Progressing
	// condition when the cluster's Gateway API CRDs are missing or older
	// than MinGatewayAPIVersion.
	GatewayAPIUnsupportedReason = "GatewayAPIUnsupported"
)

// MinGatewayAPIVersion is the oldest release of the Gateway API's CRDs
// (standard channel) that trafficRouting works with: the first whose
// standard HTTPRoute and GRPCRoute rules have a name, by which header
// routes and named rules are found again. On older CRDs the API server
// drops the name, and every step would add a rule that is never removed.
// The experimental channel has the name from MinGatewayAPIExperimental.
const (
	MinGatewayAPIVersion      = "v1.4.0"
	MinGatewayAPIExperimental = "v1.2.0"
)

// TrafficRouting makes a canary's weights shares of the requests rather
// than of the pods: the deployer sets the weights of a Gateway API route's
// backendRefs, and the canary's pod count follows the weight (or
// setCanaryScale) without taking pods from the stable deployment. Field
// names follow Argo Rollouts' canary strategy and its Gateway API plugin,
// so that `kubectl dc convert` carries them over.
//
// +kubebuilder:validation:XValidation:rule="self.stableService != self.canaryService",message="canaryService must differ from stableService",fieldPath=".canaryService"
type TrafficRouting struct {
	// StableService selects the live deployment: dc-controller and the
	// deployer set its selector to the DeploymentConfig's selector plus the
	// live deployment's `deployment` label. It must exist in the
	// DeploymentConfig's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	StableService string `json:"stableService"`

	// CanaryService selects the new deployment while a rollout runs, and
	// the live one between rollouts. It must exist in the
	// DeploymentConfig's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	CanaryService string `json:"canaryService"`

	// GatewayAPI names the routes whose weights the rollout sets.
	GatewayAPI *GatewayAPIRouting `json:"gatewayAPI"`

	// ManagedRoutes are the header routes that setHeaderRoute steps may
	// add, as Argo Rollouts' managedRoutes. Each becomes a rule of the
	// route, named after it, while the rollout runs; the route's rules must
	// not use these names.
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	// +optional
	ManagedRoutes []ManagedRoute `json:"managedRoutes,omitempty"`
}

// GatewayAPIRouting names Gateway API routes in the DeploymentConfig's
// namespace. The managed rules of a route are those it names in rules or,
// without rules, every rule with a backendRef to the stable Service. In a
// managed rule the stable and canary Services' backendRefs split the share
// of the requests the stable one had, weight percent to the canary (its
// backendRef is added when the rule lacks it); other backendRefs keep
// their share, and other rules are never touched.
//
// +kubebuilder:validation:XValidation:rule="has(self.httpRoute) || has(self.httpRoutes) || has(self.grpcRoute) || has(self.grpcRoutes)",message="name at least one of httpRoute, httpRoutes, grpcRoute or grpcRoutes"
type GatewayAPIRouting struct {
	// HTTPRoute is the name of one HTTPRoute, with header routes.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	HTTPRoute string `json:"httpRoute,omitempty"`

	// HTTPRoutes are HTTPRoutes to manage, each with its own options.
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	// +optional
	HTTPRoutes []GatewayRoute `json:"httpRoutes,omitempty"`

	// GRPCRoute is the name of one GRPCRoute, with header routes.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	GRPCRoute string `json:"grpcRoute,omitempty"`

	// GRPCRoutes are GRPCRoutes to manage, each with its own options.
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	// +optional
	GRPCRoutes []GatewayRoute `json:"grpcRoutes,omitempty"`
}

// GatewayRoute is one route of GatewayAPIRouting.
type GatewayRoute struct {
	// Name is the route's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`

	// UseHeaderRoutes makes setHeaderRoute steps add their rules to this
	// route.
	// +optional
	UseHeaderRoutes bool `json:"useHeaderRoutes,omitempty"`

	// Rules names the rules to manage (a rule's `name`); without it, every
	// rule with a backendRef to the stable Service is managed.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	Rules []string `json:"rules,omitempty"`
}

// ManagedRoute names a header route.
type ManagedRoute struct {
	// Name names the rule that setHeaderRoute adds to the route.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
}

// SetCanaryScale sizes the new deployment apart from the traffic weight,
// as Argo Rollouts' setCanaryScale; it holds for the steps that follow,
// until matchTrafficWeight.
//
// +kubebuilder:validation:XValidation:rule="(has(self.replicas) ? 1 : 0) + (has(self.weight) ? 1 : 0) + (has(self.matchTrafficWeight) && self.matchTrafficWeight ? 1 : 0) == 1",message="set exactly one of replicas, weight or matchTrafficWeight: true"
type SetCanaryScale struct {
	// Replicas is the new deployment's pod count.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Weight is the new deployment's pod count as a percentage of the
	// DeploymentConfig's replicas, rounded up.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	Weight *int32 `json:"weight,omitempty"`

	// MatchTrafficWeight sizes the new deployment by the traffic weight
	// again: the weight's percentage of the replicas, rounded up.
	// +optional
	MatchTrafficWeight bool `json:"matchTrafficWeight,omitempty"`
}

// SetHeaderRoute sends the requests whose headers match to the canary, or
// with no match removes the header route.
type SetHeaderRoute struct {
	// Name is one of trafficRouting.managedRoutes.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Match lists headers that must all match; empty removes the route.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Match []HeaderRoutingMatch `json:"match,omitempty"`
}

// HeaderRoutingMatch is one header of a header route.
type HeaderRoutingMatch struct {
	// HeaderName is the header's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$`
	HeaderName string `json:"headerName"`

	// HeaderValue is how the header's value matches.
	HeaderValue StringMatch `json:"headerValue"`
}

// StringMatch matches a string exactly or by a regular expression; a
// prefix is a regular expression the deployer writes for the route, since
// the Gateway API has no prefix match for headers.
//
// +kubebuilder:validation:XValidation:rule="(has(self.exact) ? 1 : 0) + (has(self.prefix) ? 1 : 0) + (has(self.regex) ? 1 : 0) == 1",message="set exactly one of exact, prefix or regex"
type StringMatch struct {
	// Exact is the value.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Exact *string `json:"exact,omitempty"`
	// Prefix is the start of the value.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Prefix *string `json:"prefix,omitempty"`
	// Regex is a regular expression the value matches (RE2).
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Regex *string `json:"regex,omitempty"`
}

// String says how the step sizes the canary, as logs and the CLI show it.
func (s *SetCanaryScale) String() string {
	switch {
	case s.Replicas != nil:
		return fmt.Sprintf("setCanaryScale %d pods", *s.Replicas)
	case s.Weight != nil:
		return fmt.Sprintf("setCanaryScale %d%% of the pods", *s.Weight)
	}
	return "setCanaryScale matchTrafficWeight"
}

// String names the header route and says when the step removes it, as
// logs and pages show it.
func (h *SetHeaderRoute) String() string {
	if len(h.Match) == 0 {
		return "setHeaderRoute " + h.Name + ": removed"
	}
	return "setHeaderRoute " + h.Name
}
