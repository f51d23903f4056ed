package convert

import (
	"fmt"
	"slices"
	"strings"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// gatewayAPIPlugin is how Argo Rollouts names its Gateway API traffic
// router plugin under trafficRouting.plugins.
const gatewayAPIPlugin = "argoproj-labs/gatewayAPI"

// otherRouters says, for each traffic router of Argo Rollouts, what to use
// here instead: every one of them is dropped.
var otherRouters = map[string]string{
	"istio":      "Istio implements the Gateway API: route through an HTTPRoute",
	"nginx":      "ingress-nginx has no weights here: use a Gateway API implementation",
	"alb":        "the AWS Load Balancer Controller implements the Gateway API: route through an HTTPRoute",
	"smi":        "SMI is retired: use a Gateway API implementation",
	"ambassador": "Emissary-ingress implements the Gateway API: route through an HTTPRoute",
	"appMesh":    "App Mesh is retired: use a Gateway API implementation",
	"traefik":    "Traefik implements the Gateway API: route through an HTTPRoute",
	"apisix":     "Apache APISIX implements the Gateway API: route through an HTTPRoute",
}

// trafficRouting maps a canary's stableService, canaryService and
// trafficRouting to rollingParams.trafficRouting when the Rollout routes
// through the Gateway API plugin; anything else is dropped with a warning
// that says what to use. It returns nil when nothing routes.
func (c *rolloutConversion) trafficRouting(canary map[string]any, namespace string) *dcv1.TrafficRouting {
	const path = "spec.strategy.canary.trafficRouting"
	routing := child(canary, "trafficRouting")
	stable, canarySvc := str(canary, "stableService"), str(canary, "canaryService")
	var gateway *dcv1.GatewayAPIRouting
	for _, k := range sortedKeys(routing) {
		switch {
		case k == "plugins":
			gateway = c.routingPlugins(child(routing, k), namespace)
		case k == "managedRoutes":
		case otherRouters[k] != "":
			c.warnf("%s.%s: %s: dropped", path, k, otherRouters[k])
		default:
			c.warnf("%s.%s has no equivalent in deployconfig: dropped", path, k)
		}
	}
	if gateway == nil || stable == "" || canarySvc == "" {
		for _, k := range []string{"stableService", "canaryService"} {
			if canary[k] != nil {
				c.warnf("spec.strategy.canary.%s is used here only with the Gateway API plugin's routes: dropped", k)
			}
		}
		if gateway != nil {
			c.warnf("%s.plugins[%q] needs both stableService and canaryService: dropped", path, gatewayAPIPlugin)
		}
		if routing != nil {
			c.warnf("%s was not converted: the steps' weights are shares of the pods here", path)
		}
		return nil
	}
	tr := &dcv1.TrafficRouting{StableService: stable, CanaryService: canarySvc, GatewayAPI: gateway}
	managed, _ := routing["managedRoutes"].([]any)
	for _, m := range managed {
		if name := str(asMap(m), "name"); name != "" {
			tr.ManagedRoutes = append(tr.ManagedRoutes, dcv1.ManagedRoute{Name: name})
		}
	}
	return tr
}

// routingPlugins maps the Gateway API plugin's configuration and drops
// every other plugin.
func (c *rolloutConversion) routingPlugins(plugins map[string]any, namespace string) *dcv1.GatewayAPIRouting {
	const path = "spec.strategy.canary.trafficRouting.plugins"
	var out *dcv1.GatewayAPIRouting
	for _, name := range sortedKeys(plugins) {
		if name != gatewayAPIPlugin {
			c.warnf("%s[%q]: only the Gateway API plugin (%s) has an equivalent: dropped", path, name, gatewayAPIPlugin)
			continue
		}
		out = c.gatewayAPI(child(plugins, name), fmt.Sprintf("%s[%q]", path, name), namespace)
	}
	return out
}

// gatewayAPI maps the plugin's route fields, which have the same names
// here; the plugin's own bookkeeping has no equivalent.
func (c *rolloutConversion) gatewayAPI(cfg map[string]any, path, namespace string) *dcv1.GatewayAPIRouting {
	out := &dcv1.GatewayAPIRouting{HTTPRoute: str(cfg, "httpRoute"), GRPCRoute: str(cfg, "grpcRoute")}
	out.HTTPRoutes = gatewayRoutes(cfg["httpRoutes"])
	out.GRPCRoutes = gatewayRoutes(cfg["grpcRoutes"])
	for _, k := range sortedKeys(cfg) {
		switch k {
		case "httpRoute", "httpRoutes", "grpcRoute", "grpcRoutes":
		case "namespace":
			if ns := str(cfg, k); ns != namespace {
				c.warnf("%s.namespace %q: routes are read in the DeploymentConfig's own namespace here: dropped", path, ns)
			}
		case "tcpRoute", "tcpRoutes":
			c.warnf("%s.%s: TCPRoutes have no equivalent (HTTPRoutes and GRPCRoutes only): dropped", path, k)
		case "configMap":
			c.warnf("%s.configMap: the rollout's state is kept on its deployment here: dropped", path)
		default:
			c.warnf("%s.%s has no equivalent in deployconfig: dropped", path, k)
		}
	}
	if out.HTTPRoute == "" && out.GRPCRoute == "" && len(out.HTTPRoutes) == 0 && len(out.GRPCRoutes) == 0 {
		c.warnf("%s names no HTTPRoute or GRPCRoute: dropped", path)
		return nil
	}
	return out
}

// gatewayRoutes maps the plugin's list of routes.
func gatewayRoutes(v any) []dcv1.GatewayRoute {
	list, _ := v.([]any)
	var out []dcv1.GatewayRoute
	for _, item := range list {
		m := asMap(item)
		if name := str(m, "name"); name != "" {
			use, _ := m["useHeaderRoutes"].(bool)
			out = append(out, dcv1.GatewayRoute{Name: name, UseHeaderRoutes: use})
		}
	}
	return out
}

// trafficStep maps the steps that need traffic routing; nil (with a
// warning) without it.
func (c *rolloutConversion) trafficStep(step map[string]any, path string, routed bool) (*dcv1.RollingStep, bool, error) {
	var out dcv1.RollingStep
	switch {
	case step["setCanaryScale"] != nil:
		out.SetCanaryScale = &dcv1.SetCanaryScale{}
		if err := decodeInto(step["setCanaryScale"], out.SetCanaryScale); err != nil {
			return nil, true, fmt.Errorf("%s: %s.setCanaryScale: %w", c.ref, path, err)
		}
	case step["setHeaderRoute"] != nil:
		out.SetHeaderRoute = &dcv1.SetHeaderRoute{}
		if err := decodeInto(step["setHeaderRoute"], out.SetHeaderRoute); err != nil {
			return nil, true, fmt.Errorf("%s: %s.setHeaderRoute: %w", c.ref, path, err)
		}
	case step["setMirrorRoute"] != nil:
		c.warnf("%s (setMirrorRoute) has no equivalent in deployconfig: dropped", path)
		return nil, true, nil
	default:
		return nil, false, nil
	}
	if !routed {
		c.warnf("%s (%s) needs traffic routing through the Gateway API, which was not converted: dropped", path, strings.Join(sortedKeys(step), ", "))
		return nil, true, nil
	}
	return &out, true, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
