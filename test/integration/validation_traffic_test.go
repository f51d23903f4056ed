package integration

import (
	"fmt"
	"strings"
)

// trafficCases break each rule of rollingParams.trafficRouting and of the
// steps that need it, for TestServerRefusesEveryBrokenRule.
func trafficCases() []fieldCase {
	const (
		base  = "spec.strategy.rollingParams.trafficRouting"
		step0 = "spec.strategy.rollingParams.steps[0]"
	)
	long64, long254 := strings.Repeat("a", 64), strings.Repeat("a", 254)
	// routed is a Rolling strategy with trafficRouting fields (a YAML
	// body indented under trafficRouting) and steps.
	routed := func(fields, steps string) string {
		return invalidCase{params: "    rollingParams:\n      trafficRouting:\n" + indent(fields, 8) + "\n      steps:\n" + indent(steps, 6)}.manifest()
	}
	// valid are trafficRouting fields that pass; each case changes one.
	valid := "stableService: web\ncanaryService: web-canary\ngatewayAPI: {httpRoute: web}\nmanagedRoutes: [{name: beta}]\n"
	with := func(old, replacement string) string { return strings.Replace(valid, old, replacement, 1) }
	gateway := func(g string) string { return with("gatewayAPI: {httpRoute: web}", "gatewayAPI: "+g) }
	step := func(s string) string { return routed(valid, s) }
	header := func(match string) string {
		return step("- setHeaderRoute: {name: beta, match: [" + match + "]}\n")
	}
	c := func(rule, field, wantMessage, manifest string) fieldCase {
		return fieldCase{rule: rule, field: field, wantMessage: wantMessage, manifest: manifest}
	}
	many := func(n int, item string) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(item, i)
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	cases := []fieldCase{
		{rule: "cel", field: base, wantMessage: "only used by the Rolling strategy",
			manifest: invalidCase{strategy: "Recreate", params: "    rollingParams:\n      trafficRouting:\n" + indent(valid, 8)}.manifest()},
		c("cel", "spec.strategy.rollingParams.steps", "setCanaryScale and setHeaderRoute steps need trafficRouting",
			invalidCase{params: "    rollingParams:\n      steps:\n      - setCanaryScale: {replicas: 1}"}.manifest()),
		c("cel", "spec.strategy.rollingParams.steps", "must name one of trafficRouting.managedRoutes", step("- setHeaderRoute: {name: other}\n")),
		c("cel", step0+".setCanaryScale", "set exactly one of replicas, weight or matchTrafficWeight", step("- setCanaryScale: {replicas: 1, weight: 10}\n")),
		c("minimum", step0+".setCanaryScale.replicas", "greater than or equal to 0", step("- setCanaryScale: {replicas: -1}\n")),
		c("minimum", step0+".setCanaryScale.weight", "greater than or equal to 0", step("- setCanaryScale: {weight: -1}\n")),
		c("maximum", step0+".setCanaryScale.weight", "less than or equal to 100", step("- setCanaryScale: {weight: 101}\n")),
		c("required", step0+".setHeaderRoute.name", msgRequired, step("- setHeaderRoute: {match: []}\n")),
		c("minLength", step0+".setHeaderRoute.name", "at least 1 chars long", step("- setHeaderRoute: {name: \"\"}\n")),
		c("maxLength", step0+".setHeaderRoute.name", "may not be more than 63", step("- setHeaderRoute: {name: "+long64+"}\n")),
		c("maxItems", step0+".setHeaderRoute.match", "must have at most 8 items", header(strings.Trim(many(9, "{headerName: h%d, headerValue: {exact: x}}"), "[]"))),
		c("required", step0+".setHeaderRoute.match[0].headerName", msgRequired, header("{headerValue: {exact: x}}")),
		c("required", step0+".setHeaderRoute.match[0].headerValue", msgRequired, header("{headerName: X-Beta}")),
		c("minLength", step0+".setHeaderRoute.match[0].headerName", "at least 1 chars long", header("{headerName: \"\", headerValue: {exact: x}}")),
		c("maxLength", step0+".setHeaderRoute.match[0].headerName", "may not be more than 256", header("{headerName: "+strings.Repeat("h", 257)+", headerValue: {exact: x}}")),
		c("pattern", step0+".setHeaderRoute.match[0].headerName", "should match", header("{headerName: \"X Beta\", headerValue: {exact: x}}")),
		c("cel", step0+".setHeaderRoute.match[0].headerValue", "set exactly one of exact, prefix or regex", header("{headerName: X-Beta, headerValue: {exact: x, prefix: p}}")),
		c("maxLength", step0+".setHeaderRoute.match[0].headerValue.exact", "may not be more than 4096", header("{headerName: X-Beta, headerValue: {exact: "+strings.Repeat("x", 4097)+"}}")),
		c("maxLength", step0+".setHeaderRoute.match[0].headerValue.prefix", "may not be more than 1024", header("{headerName: X-Beta, headerValue: {prefix: "+strings.Repeat("x", 1025)+"}}")),
		c("maxLength", step0+".setHeaderRoute.match[0].headerValue.regex", "may not be more than 1024", header("{headerName: X-Beta, headerValue: {regex: "+strings.Repeat("x", 1025)+"}}")),
		c("required", base+".stableService", msgRequired, routed(with("stableService: web\n", ""), "- setWeight: 10\n")),
		c("minLength", base+".stableService", "at least 1 chars long", routed(with("stableService: web", "stableService: \"\""), "- setWeight: 10\n")),
		c("maxLength", base+".stableService", "may not be more than 63", routed(with("stableService: web", "stableService: "+long64), "- setWeight: 10\n")),
		c("pattern", base+".stableService", "should match", routed(with("stableService: web", "stableService: Web"), "- setWeight: 10\n")),
		c("required", base+".canaryService", msgRequired, routed(with("canaryService: web-canary\n", ""), "- setWeight: 10\n")),
		c("minLength", base+".canaryService", "at least 1 chars long", routed(with("canaryService: web-canary", "canaryService: \"\""), "- setWeight: 10\n")),
		c("maxLength", base+".canaryService", "may not be more than 63", routed(with("canaryService: web-canary", "canaryService: "+long64), "- setWeight: 10\n")),
		c("pattern", base+".canaryService", "should match", routed(with("canaryService: web-canary", "canaryService: web_canary"), "- setWeight: 10\n")),
		c("cel", base+".canaryService", "must differ from stableService", routed(with("canaryService: web-canary", "canaryService: web"), "- setWeight: 10\n")),
		c("required", base+".gatewayAPI", msgRequired, routed(with("gatewayAPI: {httpRoute: web}\n", ""), "- setWeight: 10\n")),
		c("cel", base+".gatewayAPI", "name at least one of httpRoute, httpRoutes, grpcRoute or grpcRoutes", routed(gateway("{}"), "- setWeight: 10\n")),
		c("maxItems", base+".managedRoutes", "must have at most 8 items", routed(with("managedRoutes: [{name: beta}]", "managedRoutes: "+many(9, "{name: r%d}")), "- setWeight: 10\n")),
		c("required", base+".managedRoutes[0].name", msgRequired, routed(with("managedRoutes: [{name: beta}]", "managedRoutes: [{}]"), "- setWeight: 10\n")),
		c("minLength", base+".managedRoutes[0].name", "at least 1 chars long", routed(with("managedRoutes: [{name: beta}]", "managedRoutes: [{name: \"\"}]"), "- setWeight: 10\n")),
		c("maxLength", base+".managedRoutes[0].name", "may not be more than 63", routed(with("managedRoutes: [{name: beta}]", "managedRoutes: [{name: "+long64+"}]"), "- setWeight: 10\n")),
		c("pattern", base+".managedRoutes[0].name", "should match", routed(with("managedRoutes: [{name: beta}]", "managedRoutes: [{name: Beta}]"), "- setWeight: 10\n")),
	}
	// The route fields: the same rules for HTTP and gRPC routes.
	for _, kind := range []string{"http", "grpc"} {
		one, list := kind+"Route", kind+"Routes"
		routes := func(r string) string { return routed(gateway("{"+list+": ["+r+"]}"), "- setWeight: 10\n") }
		cases = append(cases,
			c("maxLength", base+".gatewayAPI."+one, "may not be more than 253", routed(gateway("{"+one+": "+long254+"}"), "- setWeight: 10\n")),
			c("pattern", base+".gatewayAPI."+one, "should match", routed(gateway("{"+one+": Web}"), "- setWeight: 10\n")),
			c("maxItems", base+".gatewayAPI."+list, "must have at most 8 items", routed(gateway("{"+list+": "+many(9, "{name: r%d}")+"}"), "- setWeight: 10\n")),
			c("required", base+".gatewayAPI."+list+"[0].name", msgRequired, routes("{useHeaderRoutes: true}")),
			c("minLength", base+".gatewayAPI."+list+"[0].name", "at least 1 chars long", routes("{name: \"\"}")),
			c("maxLength", base+".gatewayAPI."+list+"[0].name", "may not be more than 253", routes("{name: "+long254+"}")),
			c("pattern", base+".gatewayAPI."+list+"[0].name", "should match", routes("{name: Web}")),
			c("maxItems", base+".gatewayAPI."+list+"[0].rules", "must have at most 16 items", routes("{name: web, rules: "+many(17, "r%d")+"}")),
			c("maxLength", base+".gatewayAPI."+list+"[0].rules[0]", "may not be more than 253", routes("{name: web, rules: ["+long254+"]}")),
		)
	}
	return cases
}
