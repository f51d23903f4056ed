package cli

import (
	"testing"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// routed gives a canary trafficRouting.
func routed(dc *dcv1.DeploymentConfig) {
	dc.Spec.Strategy.RollingParams.TrafficRouting = &dcv1.TrafficRouting{
		StableService: "web-stable",
		CanaryService: "web-canary",
		GatewayAPI:    &dcv1.GatewayAPIRouting{HTTPRoute: "web"},
	}
}

// TestRolloutStatusOfARoutedCanary: status says that a routed canary's
// weight is a share of the requests.
func TestRolloutStatusOfARoutedCanary(t *testing.T) {
	runCases(t, []commandCase{{
		name: "paused at a weight",
		objs: progressive(func(dc *dcv1.DeploymentConfig) { canarySteps(dc); routed(dc) }, atStep2Paused),
		args: []string{"rollout", "status", "web", "--watch=false"},
	}})
}

// TestDescribeTraffic: describe shows a routed canary's Services, routes
// and header routes, and its traffic steps.
func TestDescribeTraffic(t *testing.T) {
	exact, prefix := "yes", "beta-"
	runCases(t, []commandCase{{
		name: "routed canary",
		objs: progressive(func(dc *dcv1.DeploymentConfig) {
			canarySteps(dc)
			p := dc.Spec.Strategy.RollingParams
			p.TrafficRouting = &dcv1.TrafficRouting{
				StableService: "web-stable",
				CanaryService: "web-canary",
				GatewayAPI: &dcv1.GatewayAPIRouting{
					HTTPRoute:  "web",
					GRPCRoutes: []dcv1.GatewayRoute{{Name: "web-grpc", Rules: []string{"main"}}},
				},
				ManagedRoutes: []dcv1.ManagedRoute{{Name: "beta"}},
			}
			three := int32(3)
			p.Steps = append([]dcv1.RollingStep{
				{SetHeaderRoute: &dcv1.SetHeaderRoute{Name: "beta", Match: []dcv1.HeaderRoutingMatch{
					{HeaderName: "X-Beta", HeaderValue: dcv1.StringMatch{Exact: &exact}},
					{HeaderName: "X-User", HeaderValue: dcv1.StringMatch{Prefix: &prefix}},
				}}},
				{SetCanaryScale: &dcv1.SetCanaryScale{Replicas: &three}},
			}, p.Steps...)
			p.Steps = append(p.Steps, dcv1.RollingStep{SetHeaderRoute: &dcv1.SetHeaderRoute{Name: "beta"}})
		}, atStep2Paused),
		args: []string{"describe", "web"},
	}})
}
