package integration

import (
	"strings"
	"testing"
	"time"
)

// TestServerRefusesInvalidStepsAndBlueGreen is TestServerRefusesInvalid for
// the canary steps and the BlueGreen strategy: each case is refused with
// the field named.
func TestServerRefusesInvalidStepsAndBlueGreen(t *testing.T) {
	steps := func(body string) string { return "    rollingParams:\n      steps:\n" + body }
	traffic := "    rollingParams:\n      trafficRouting:\n        stableService: web\n        canaryService: web-canary\n        gatewayAPI: {httpRoute: web}\n        managedRoutes: [{name: beta}]\n"
	cases := []invalidCase{
		{name: "setWeight above 100", params: steps("      - setWeight: 101"),
			wantField: "spec.strategy.rollingParams.steps[0].setWeight", wantMessage: "less than or equal to 100"},
		{name: "negative setWeight", params: steps("      - setWeight: -1"),
			wantField: "spec.strategy.rollingParams.steps[0].setWeight", wantMessage: "greater than or equal to 0"},
		{name: "empty step", params: steps("      - setWeight: 20\n      - {}"),
			wantField: "spec.strategy.rollingParams.steps[1]", wantMessage: "exactly one of setWeight, pause, analysis, setCanaryScale or setHeaderRoute"},
		{name: "step with setWeight and pause", params: steps("      - setWeight: 20\n        pause: {}"),
			wantField: "spec.strategy.rollingParams.steps[0]", wantMessage: "exactly one of setWeight, pause, analysis, setCanaryScale or setHeaderRoute"},
		{name: "pause with a bad duration", params: steps("      - pause: {duration: soon}"),
			wantField: "spec.strategy.rollingParams.steps[0].pause.duration", wantMessage: "should match"},
		{name: "steps with Recreate", strategy: "Recreate", params: steps("      - setWeight: 20"),
			wantField: "spec.strategy.rollingParams.steps", wantMessage: "only run by the Rolling strategy"},
		{name: "BlueGreen without blueGreenParams", strategy: "BlueGreen",
			wantField: "spec.strategy.blueGreenParams", wantMessage: "blueGreenParams is required when strategy.type is BlueGreen"},
		{name: "blueGreenParams with Rolling", params: "    blueGreenParams:\n      activeService: web",
			wantField: "spec.strategy.blueGreenParams", wantMessage: "only allowed when strategy.type is BlueGreen"},
		{name: "BlueGreen without activeService", strategy: "BlueGreen", params: "    blueGreenParams:\n      previewService: web-preview",
			wantField: "spec.strategy.blueGreenParams.activeService", wantMessage: "Required value"},
		{name: "previewService same as activeService", strategy: "BlueGreen", params: "    blueGreenParams:\n      activeService: web\n      previewService: web",
			wantField: "spec.strategy.blueGreenParams.previewService", wantMessage: "must differ from activeService"},
		{name: "activeService not a Service name", strategy: "BlueGreen", params: "    blueGreenParams:\n      activeService: Web_Active",
			wantField: "spec.strategy.blueGreenParams.activeService", wantMessage: "should match"},
		{name: "negative scaleDownDelaySeconds", strategy: "BlueGreen", params: "    blueGreenParams:\n      activeService: web\n      scaleDownDelaySeconds: -1",
			wantField: "spec.strategy.blueGreenParams.scaleDownDelaySeconds", wantMessage: "greater than or equal to 0"},
		{name: "negative autoPromotionSeconds", strategy: "BlueGreen", params: "    blueGreenParams:\n      activeService: web\n      autoPromotionSeconds: -1",
			wantField: "spec.strategy.blueGreenParams.autoPromotionSeconds", wantMessage: "greater than or equal to 0"},
		{name: "activeDeadlineSeconds below the BlueGreen timeout", strategy: "BlueGreen", params: "    activeDeadlineSeconds: 100\n    blueGreenParams:\n      activeService: web\n      timeoutSeconds: 200",
			wantField: "spec.strategy.activeDeadlineSeconds", wantMessage: "must be greater than the strategy's timeoutSeconds"},
		{name: "minReadySeconds not below the BlueGreen timeout", strategy: "BlueGreen", params: "    blueGreenParams:\n      activeService: web\n      timeoutSeconds: 60", spec: "  minReadySeconds: 60\n",
			wantField: "spec.minReadySeconds", wantMessage: "must be less than the strategy's timeoutSeconds"},
		{name: "setCanaryScale without trafficRouting", params: steps("      - setCanaryScale: {replicas: 1}"),
			wantField: "spec.strategy.rollingParams.steps", wantMessage: "setCanaryScale and setHeaderRoute steps need trafficRouting"},
		{name: "setHeaderRoute of an undeclared route", params: traffic + "      steps:\n      - setHeaderRoute: {name: other, match: [{headerName: X-Beta, headerValue: {exact: \"1\"}}]}",
			wantField: "spec.strategy.rollingParams.steps", wantMessage: "must name one of trafficRouting.managedRoutes"},
		{name: "setCanaryScale with two sizes", params: traffic + "      steps:\n      - setCanaryScale: {replicas: 1, weight: 20}",
			wantField: "spec.strategy.rollingParams.steps[0].setCanaryScale", wantMessage: "exactly one of replicas, weight or matchTrafficWeight"},
		{name: "a header match with two kinds", params: traffic + "      steps:\n      - setHeaderRoute: {name: beta, match: [{headerName: X-Beta, headerValue: {exact: \"1\", regex: \"1.*\"}}]}",
			wantField: "spec.strategy.rollingParams.steps[0].setHeaderRoute.match[0].headerValue", wantMessage: "exactly one of exact, prefix or regex"},
		{name: "a header name with a space", params: traffic + "      steps:\n      - setHeaderRoute: {name: beta, match: [{headerName: \"X Beta\", headerValue: {exact: \"1\"}}]}",
			wantField: "spec.strategy.rollingParams.steps[0].setHeaderRoute.match[0].headerName", wantMessage: "should match"},
		{name: "the canary Service is the stable one", params: strings.Replace(traffic, "web-canary", "web", 1),
			wantField: "spec.strategy.rollingParams.trafficRouting.canaryService", wantMessage: "must differ from stableService"},
		{name: "gatewayAPI names no route", params: strings.Replace(traffic, "{httpRoute: web}", "{}", 1),
			wantField: "spec.strategy.rollingParams.trafficRouting.gatewayAPI", wantMessage: "name at least one of httpRoute"},
		{name: "trafficRouting without gatewayAPI", params: strings.Replace(traffic, "        gatewayAPI: {httpRoute: web}\n", "", 1),
			wantField: "spec.strategy.rollingParams.trafficRouting.gatewayAPI", wantMessage: "Required value"},
		{name: "trafficRouting with Recreate", strategy: "Recreate", params: traffic,
			wantField: "spec.strategy.rollingParams.trafficRouting", wantMessage: "only used by the Rolling strategy"},
	}
	expectRefused(t, cases)
}

// TestServerAcceptsStepsAndBlueGreen checks that valid canary steps and a
// valid BlueGreen strategy are accepted, so the rules above refuse only
// what they should.
func TestServerAcceptsStepsAndBlueGreen(t *testing.T) {
	cases := []invalidCase{
		{name: "canary steps", params: "    rollingParams:\n      steps:\n      - setWeight: 20\n      - pause: {}\n      - setWeight: 60\n      - pause: {duration: 30s}"},
		{name: "blue-green", strategy: "BlueGreen", params: "    blueGreenParams:\n      activeService: web\n      previewService: web-preview\n      autoPromotionSeconds: 30\n      scaleDownDelaySeconds: 30"},
		{name: "min-ready-seconds below a long blue-green timeout", strategy: "BlueGreen", params: "    blueGreenParams:\n      activeService: web\n      timeoutSeconds: 900", spec: "  minReadySeconds: 700\n"},
		{name: "traffic routing as argo rollouts writes it", params: "    rollingParams:\n      trafficRouting:\n        stableService: web\n        canaryService: web-canary\n        managedRoutes: [{name: beta}]\n        gatewayAPI:\n          httpRoutes: [{name: web, useHeaderRoutes: true, rules: [main]}]\n          grpcRoute: web-grpc\n      steps:\n      - setHeaderRoute: {name: beta, match: [{headerName: X-Beta, headerValue: {prefix: b}}]}\n      - setCanaryScale: {weight: 20}\n      - setWeight: 5\n      - setCanaryScale: {matchTrafficWeight: true}\n      - setHeaderRoute: {name: beta}\n      - pause: {}"},
	}
	ns := newNamespace(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t, time.Minute)
			obj := mustUnstructured(t, tc.manifest())
			obj.SetNamespace(ns)
			obj.SetName(strings.ReplaceAll(tc.name, " ", "-"))
			if err := cluster.client.Create(ctx, obj); err != nil {
				t.Fatalf("the API server refused the DeploymentConfig: %v\n%s", err, tc.manifest())
			}
		})
	}
}

// progressiveCases break the rules of the canary steps and of the BlueGreen
// strategy that specCases does not, for TestServerRefusesEveryBrokenRule.
func progressiveCases() []fieldCase {
	long := strings.Repeat("a", 64)
	spec := func(rule, field, wantMessage string, c invalidCase) fieldCase {
		return fieldCase{rule: rule, field: field, wantMessage: wantMessage, manifest: c.manifest()}
	}
	steps := func(body string) invalidCase { return invalidCase{params: "    rollingParams:\n      steps:\n" + body} }
	blueGreen := func(body string) invalidCase {
		return invalidCase{strategy: "BlueGreen", params: "    blueGreenParams:\n" + body}
	}
	return []fieldCase{
		spec("cel", "spec.strategy.rollingParams.steps", "only run by the Rolling strategy", invalidCase{strategy: "Recreate", params: "    rollingParams:\n      steps:\n      - setWeight: 10"}),
		spec("cel", "spec.strategy.rollingParams.steps[0]", "exactly one of setWeight, pause, analysis, setCanaryScale or setHeaderRoute", steps("      - setWeight: 10\n        pause: {}")),
		spec("pattern", "spec.strategy.rollingParams.steps[0].pause.duration", "should match", steps("      - pause: {duration: 5 minutes}")),
		spec("cel", "spec.strategy.blueGreenParams", "blueGreenParams is required when strategy.type is BlueGreen", invalidCase{strategy: "BlueGreen"}),
		spec("cel", "spec.strategy.blueGreenParams", "only allowed when strategy.type is BlueGreen", invalidCase{params: "    blueGreenParams:\n      activeService: web"}),
		spec("maxLength", "spec.strategy.blueGreenParams.activeService", "may not be more than 63", blueGreen("      activeService: "+long)),
		spec("pattern", "spec.strategy.blueGreenParams.activeService", "should match", blueGreen("      activeService: Web")),
		spec("maxLength", "spec.strategy.blueGreenParams.previewService", "may not be more than 63", blueGreen("      activeService: web\n      previewService: "+long)),
		spec("pattern", "spec.strategy.blueGreenParams.previewService", "should match", blueGreen("      activeService: web\n      previewService: web_preview")),
		spec("cel", "spec.strategy.blueGreenParams.previewService", "must differ from activeService", blueGreen("      activeService: web\n      previewService: web")),
		spec("cel", "spec.strategy.rollingParams.analysis", "a background analysis needs steps", invalidCase{params: "    rollingParams:\n      analysis:\n        metrics:\n        - name: m\n          prometheus: {address: \"http://127.0.0.1:9090\", query: up}\n          successCondition: \"true\""}),
	}
}
