package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// fieldCase is one rule of the CRD's schema broken on purpose: the API
// server must refuse the object, naming field with wantMessage.
type fieldCase struct {
	name string
	// rule is the kind of rule: minimum, maxLength, minLength, minItems,
	// maxItems, maxProperties, enum, required or cel.
	rule string
	// path is the rule's place in the schema (see schemaRules); by default
	// field with list indexes as [].
	path        string
	field       string
	wantMessage string
	// manifest is the object to create; invalidCase builds most.
	manifest string
	// statusPatches, when set, are JSON merge patches of the status of a
	// valid DeploymentConfig, applied in order; all but the last must be
	// accepted.
	statusPatches []string
}

// schemaPath is the case's place in the schema.
func (c fieldCase) schemaPath() string {
	if c.path != "" {
		return c.path
	}
	return "." + listIndex.ReplaceAllString(c.field, "[]")
}

// listIndex matches the index of a list item in a field path.
var listIndex = regexp.MustCompile(`\[\d+\]`)

// Messages of the API server's schema validation.
const (
	msgRequired = "Required value"
	msgMinItems = "should have at least 1 items"
	msgEnum     = "supported values"
)

// hookPoint is where a lifecycle hook goes.
type hookPoint struct {
	strategy, params, name string
}

// hookPoints are every place a hook can be.
var hookPoints = []hookPoint{
	{"Rolling", "rollingParams", "pre"},
	{"Rolling", "rollingParams", "post"},
	{"Recreate", "recreateParams", "pre"},
	{"Recreate", "recreateParams", "mid"},
	{"Recreate", "recreateParams", "post"},
}

// field is the hook's path, e.g. spec.strategy.rollingParams.pre.
func (p hookPoint) field() string {
	return "spec.strategy." + p.params + "." + p.name
}

// manifest is the valid DeploymentConfig with body (YAML at the hook's
// indentation) as the hook.
func (p hookPoint) manifest(body string) string {
	return invalidCase{strategy: p.strategy, params: "    " + p.params + ":\n      " + p.name + ":\n" + body}.manifest()
}

// execNewPod is a valid execNewPod hook action.
const execNewPod = "        execNewPod:\n          containerName: web\n          command: [/bin/true]"

// tagImages is a hook body with tagImages items.
func tagImages(items ...string) string {
	return "        failurePolicy: Abort\n        tagImages:\n" + strings.Join(items, "\n")
}

// tagImage is one valid tagImages item with an override of its to.name.
func tagImage(name string) string {
	return "        - containerName: web\n          to: {kind: DockerImage, name: \"" + name + "\"}"
}

// hookCases break every rule of a hook at point p.
func hookCases(p hookPoint) []fieldCase {
	f := p.field()
	long := strings.Repeat("a", 64)
	many := make([]string, 33)
	for i := range many {
		many[i] = tagImage("registry.example.com/web:t" + fmt.Sprint(i))
	}
	return []fieldCase{
		{rule: "required", field: f + ".failurePolicy", wantMessage: msgRequired, manifest: p.manifest(execNewPod)},
		{rule: "enum", field: f + ".failurePolicy", wantMessage: msgEnum, manifest: p.manifest("        failurePolicy: Sometimes\n" + execNewPod)},
		{rule: "cel", field: f, wantMessage: "exactly one of execNewPod, tagImages or analysis is required", manifest: p.manifest("        failurePolicy: Abort")},
		{rule: "cel", field: f, wantMessage: "exactly one of execNewPod, tagImages or analysis is required", manifest: p.manifest("        failurePolicy: Abort\n" + execNewPod + "\n        analysis:\n" + indent(validAnalysis, 10))},
		{rule: "required", field: f + ".execNewPod.command", wantMessage: msgRequired, manifest: p.manifest("        failurePolicy: Abort\n        execNewPod:\n          containerName: web")},
		{rule: "minItems", field: f + ".execNewPod.command", wantMessage: msgMinItems, manifest: p.manifest("        failurePolicy: Abort\n        execNewPod:\n          containerName: web\n          command: []")},
		{rule: "maxLength", field: f + ".execNewPod.containerName", wantMessage: "may not be more than 63", manifest: p.manifest("        failurePolicy: Abort\n        execNewPod:\n          containerName: " + long + "\n          command: [/bin/true]")},
		{rule: "cel", field: f + ".execNewPod.containerName", wantMessage: "must name a container of spec.template", manifest: p.manifest("        failurePolicy: Abort\n        execNewPod:\n          containerName: nope\n          command: [/bin/true]")},
		{rule: "maxItems", field: f + ".tagImages", wantMessage: "must have at most 32 items", manifest: p.manifest(tagImages(many...))},
		{rule: "required", field: f + ".tagImages[0].containerName", wantMessage: msgRequired, manifest: p.manifest(tagImages("        - to: {kind: DockerImage, name: registry.example.com/web:ok}"))},
		{rule: "minLength", field: f + ".tagImages[0].containerName", wantMessage: "at least 1 chars long", manifest: p.manifest(tagImages("        - containerName: \"\"\n          to: {kind: DockerImage, name: registry.example.com/web:ok}"))},
		{rule: "maxLength", field: f + ".tagImages[0].containerName", wantMessage: "may not be more than 63", manifest: p.manifest(tagImages("        - containerName: " + long + "\n          to: {kind: DockerImage, name: registry.example.com/web:ok}"))},
		{rule: "required", field: f + ".tagImages[0].to", wantMessage: msgRequired, manifest: p.manifest(tagImages("        - containerName: web"))},
		{rule: "cel", field: f + ".tagImages[0].to.kind", wantMessage: "must be DockerImage", manifest: p.manifest(tagImages("        - containerName: web\n          to: {kind: ImageStreamTag, name: web:prod}"))},
		{rule: "cel", field: f + ".tagImages[0].to.name", wantMessage: "must be a tagged image reference", manifest: p.manifest(tagImages(tagImage("registry.example.com/web")))},
		{rule: "maxLength", field: f + ".tagImages[0].to.name", wantMessage: "may not be more than 512", manifest: p.manifest(tagImages(tagImage("registry.example.com/" + strings.Repeat("a", 500) + ":t")))},
	}
}

// validAnalysis is an analysis that passes validation, at indentation 0.
const validAnalysis = `count: 2
interval: 1s
metrics:
- name: error-rate
  prometheus:
    address: http://127.0.0.1:9090
    query: sum(rate(app_requests_total{deployment="{{.Deployment}}",code="500"}[1m]))
  successCondition: result[0] < 0.05
`

// indent indents every line of text by n spaces.
func indent(text string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	return pad + strings.Join(lines, "\n"+pad)
}

// analysisCases break every rule of an analysis at field f; manifest
// places an analysis (YAML at indentation 0) there.
func analysisCases(f string, manifest func(analysis string) string) []fieldCase {
	metric := func(body string) string {
		return "metrics:\n- " + strings.ReplaceAll(strings.TrimSuffix(body, "\n"), "\n", "\n  ")
	}
	prom := func(address, query string) string {
		return metric("name: m\nprometheus:\n  address: " + address + "\n  query: " + query + "\nsuccessCondition: result[0] < 1.0")
	}
	good := metric("name: m\nprometheus:\n  address: http://127.0.0.1:9090\n  query: up\nsuccessCondition: result[0] < 1.0")
	many := "metrics:\n"
	for i := range 17 {
		many += fmt.Sprintf("- name: m%d\n  prometheus: {address: \"http://127.0.0.1:9090\", query: up}\n  successCondition: \"true\"\n", i)
	}
	manyDryRun := ""
	for i := range 17 {
		manyDryRun += fmt.Sprintf("- metricName: m%d\n", i)
	}
	long := strings.Repeat("a", 64)
	c := func(rule, field, want, analysis string) fieldCase {
		return fieldCase{rule: rule, field: f + field, wantMessage: want, manifest: manifest(analysis)}
	}
	return []fieldCase{
		c("cel", ".interval", "interval is required when count is more than 1", "count: 3\n"+good),
		c("cel", ".interval", "must be a duration of at least 1s", "interval: 500ms\n"+good),
		c("cel", ".interval", "must be a duration of at least 1s", "interval: soon\n"+good),
		c("maxLength", ".interval", "may not be more than 32", "interval: "+strings.Repeat("1s", 17)+"\n"+good),
		c("minimum", ".count", "greater than or equal to 1", "count: 0\n"+good),
		c("maximum", ".count", "less than or equal to 1000", "count: 1001\ninterval: 1s\n"+good),
		c("minimum", ".failureLimit", "greater than or equal to 0", "failureLimit: -1\n"+good),
		c("maximum", ".failureLimit", "less than or equal to 1000", "failureLimit: 1001\n"+good),
		c("minimum", ".consecutiveErrorLimit", "greater than or equal to 0", "consecutiveErrorLimit: -1\n"+good),
		c("maximum", ".consecutiveErrorLimit", "less than or equal to 1000", "consecutiveErrorLimit: 1001\n"+good),
		c("required", ".metrics", msgRequired, "count: 1\n"),
		c("minItems", ".metrics", msgMinItems, "metrics: []\n"),
		c("maxItems", ".metrics", "must have at most 16 items", many),
		c("cel", ".metrics", "metric names must be unique", good+"\n"+strings.TrimPrefix(good, "metrics:\n")),
		c("required", ".metrics[0].name", msgRequired, metric("prometheus: {address: \"http://127.0.0.1:9090\", query: up}\nsuccessCondition: \"true\"")),
		c("minLength", ".metrics[0].name", "at least 1 chars long", metric("name: \"\"\nprometheus: {address: \"http://127.0.0.1:9090\", query: up}\nsuccessCondition: \"true\"")),
		c("maxLength", ".metrics[0].name", "may not be more than 63", metric("name: "+long+"\nprometheus: {address: \"http://127.0.0.1:9090\", query: up}\nsuccessCondition: \"true\"")),
		c("required", ".metrics[0].prometheus", msgRequired, metric("name: m\nsuccessCondition: \"true\"")),
		c("cel", ".metrics[0]", "at least one of successCondition or failureCondition is required", metric("name: m\nprometheus: {address: \"http://127.0.0.1:9090\", query: up}")),
		c("minLength", ".metrics[0].successCondition", "at least 1 chars long", metric("name: m\nprometheus: {address: \"http://127.0.0.1:9090\", query: up}\nsuccessCondition: \"\"")),
		c("maxLength", ".metrics[0].successCondition", "may not be more than 1024", metric("name: m\nprometheus: {address: \"http://127.0.0.1:9090\", query: up}\nsuccessCondition: \""+strings.Repeat("1", 1025)+"\"")),
		c("minLength", ".metrics[0].failureCondition", "at least 1 chars long", metric("name: m\nprometheus: {address: \"http://127.0.0.1:9090\", query: up}\nfailureCondition: \"\"")),
		c("maxLength", ".metrics[0].failureCondition", "may not be more than 1024", metric("name: m\nprometheus: {address: \"http://127.0.0.1:9090\", query: up}\nfailureCondition: \""+strings.Repeat("1", 1025)+"\"")),
		c("required", ".metrics[0].prometheus.address", msgRequired, metric("name: m\nprometheus: {query: up}\nsuccessCondition: \"true\"")),
		c("pattern", ".metrics[0].prometheus.address", "should match", prom("prometheus.monitoring:9090", "up")),
		c("maxLength", ".metrics[0].prometheus.address", "may not be more than 2048", prom("http://"+strings.Repeat("a", 2048), "up")),
		c("required", ".metrics[0].prometheus.query", msgRequired, metric("name: m\nprometheus: {address: \"http://127.0.0.1:9090\"}\nsuccessCondition: \"true\"")),
		c("minLength", ".metrics[0].prometheus.query", "at least 1 chars long", prom("http://127.0.0.1:9090", "\"\"")),
		c("maxLength", ".metrics[0].prometheus.query", "may not be more than 8192", prom("http://127.0.0.1:9090", strings.Repeat("a", 8193))),
		c("maxItems", ".dryRun", "must have at most 16 items", good+"\ndryRun:\n"+manyDryRun),
		c("required", ".dryRun[0].metricName", msgRequired, good+"\ndryRun:\n- {}\n"),
		c("minLength", ".dryRun[0].metricName", "at least 1 chars long", good+"\ndryRun:\n- metricName: \"\"\n"),
		c("maxLength", ".dryRun[0].metricName", "may not be more than 63", good+"\ndryRun:\n- metricName: "+long+"\n"),
	}
}

// triggerCase is a case of the triggers list.
func triggerCase(rule, field, wantMessage, triggers string) fieldCase {
	return fieldCase{rule: rule, field: field, wantMessage: wantMessage, manifest: invalidCase{triggers: triggers}.manifest()}
}

// imageChangeYAML is an ImageChange trigger with the given params body.
func imageChangeYAML(params string) string {
	return "  - type: ImageChange\n    imageChangeParams:\n" + params
}

// specCases break every rule of the spec outside the hooks.
func specCases() []fieldCase {
	long := strings.Repeat("a", 64)
	selector := "  selector:\n"
	for i := range 65 {
		selector += fmt.Sprintf("    k%d: v\n", i)
	}
	names := make([]string, 17)
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i)
	}
	manyTriggers := strings.TrimSuffix(strings.Repeat("  - type: ConfigChange\n", 17), "\n")
	spec := func(rule, field, wantMessage string, c invalidCase) fieldCase {
		return fieldCase{rule: rule, field: field, wantMessage: wantMessage, manifest: c.manifest()}
	}
	rolling := func(body string) invalidCase { return invalidCase{params: "    rollingParams:\n" + body} }
	blueGreen := func(body string) invalidCase {
		return invalidCase{strategy: "BlueGreen", params: "    blueGreenParams:\n" + body}
	}
	return []fieldCase{
		{rule: "required", field: "spec", wantMessage: msgRequired, manifest: "apiVersion: apps.deployconfig.io/v1\nkind: DeploymentConfig\nmetadata:\n  name: invalid\n"},
		{rule: "required", field: "spec.template", wantMessage: msgRequired, manifest: "apiVersion: apps.deployconfig.io/v1\nkind: DeploymentConfig\nmetadata:\n  name: invalid\nspec:\n  selector:\n    app: web\n"},
		spec("minimum", "spec.replicas", "greater than or equal to 0", invalidCase{spec: "  replicas: -1\n"}),
		spec("minimum", "spec.revisionHistoryLimit", "greater than or equal to 0", invalidCase{spec: "  revisionHistoryLimit: -1\n"}),
		spec("minimum", "spec.minReadySeconds", "greater than or equal to 0", invalidCase{spec: "  minReadySeconds: -1\n"}),
		spec("cel", "spec.minReadySeconds", "must be less than the strategy's timeoutSeconds", invalidCase{spec: "  minReadySeconds: 600\n"}),
		spec("cel", "spec.selector", "must match spec.template.metadata.labels", invalidCase{spec: "  selector:\n    app: other\n"}),
		{rule: "cel", field: "spec.selector", wantMessage: "must not be empty", manifest: "apiVersion: apps.deployconfig.io/v1\nkind: DeploymentConfig\nmetadata:\n  name: invalid\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: registry.example.com/web:1\n"},
		spec("maxProperties", "spec.selector", "must have at most 64 items", invalidCase{spec: selector}),
		{rule: "maxLength", path: ".spec.selector{}", field: "spec.selector.app", wantMessage: "may not be more than 63", manifest: invalidCase{spec: "  selector:\n    app: " + long + "\n"}.manifest()},
		spec("enum", "spec.strategy.type", msgEnum, invalidCase{strategy: "Canary"}),
		spec("cel", "spec.strategy.customParams", "required when strategy.type is Custom", invalidCase{strategy: "Custom"}),
		spec("minimum", "spec.strategy.activeDeadlineSeconds", "greater than or equal to 1", invalidCase{params: "    activeDeadlineSeconds: 0"}),
		spec("cel", "spec.strategy.activeDeadlineSeconds", "must be greater than the strategy's timeoutSeconds", invalidCase{strategy: "Recreate", params: "    activeDeadlineSeconds: 100"}),
		spec("minimum", "spec.strategy.recreateParams.timeoutSeconds", "greater than or equal to 1", invalidCase{strategy: "Recreate", params: "    recreateParams:\n      timeoutSeconds: 0"}),
		spec("cel", "spec.strategy.recreateParams.mid", "only run by the Recreate strategy", invalidCase{params: "    recreateParams:\n      mid:\n        failurePolicy: Abort\n" + execNewPod}),
		spec("minimum", "spec.strategy.rollingParams.timeoutSeconds", "greater than or equal to 1", rolling("      timeoutSeconds: 0")),
		spec("maxItems", "spec.strategy.rollingParams.steps", "must have at most 64 items", rolling("      steps:\n"+strings.Repeat("      - setWeight: 10\n", 65))),
		spec("minimum", "spec.strategy.rollingParams.steps[0].setWeight", "greater than or equal to 0", rolling("      steps:\n      - setWeight: -1")),
		spec("maximum", "spec.strategy.rollingParams.steps[0].setWeight", "less than or equal to 100", rolling("      steps:\n      - setWeight: 101")),
		spec("required", "spec.strategy.blueGreenParams.activeService", msgRequired, blueGreen("      previewService: preview")),
		spec("minLength", "spec.strategy.blueGreenParams.activeService", "at least 1 chars long", blueGreen(`      activeService: ""`)),
		spec("minimum", "spec.strategy.blueGreenParams.autoPromotionSeconds", "greater than or equal to 0", blueGreen("      activeService: web\n      autoPromotionSeconds: -1")),
		spec("minimum", "spec.strategy.blueGreenParams.scaleDownDelaySeconds", "greater than or equal to 0", blueGreen("      activeService: web\n      scaleDownDelaySeconds: -1")),
		spec("minimum", "spec.strategy.blueGreenParams.timeoutSeconds", "greater than or equal to 1", blueGreen("      activeService: web\n      timeoutSeconds: 0")),
		spec("minimum", "spec.strategy.rollingParams.intervalSeconds", "greater than or equal to 1", rolling("      intervalSeconds: 0")),
		spec("minimum", "spec.strategy.rollingParams.updatePeriodSeconds", "greater than or equal to 1", rolling("      updatePeriodSeconds: 0")),
		spec("cel", "spec.strategy.rollingParams.maxSurge", "non-negative integer or a percentage", rolling("      maxSurge: 5pods")),
		spec("cel", "spec.strategy.rollingParams.maxUnavailable", "percentage of at most 100%", rolling("      maxUnavailable: 101%")),
		spec("cel", "spec.strategy.rollingParams.maxUnavailable", "must not both be zero", rolling("      maxSurge: 0%\n      maxUnavailable: 0%")),
		triggerCase("maxItems", "spec.triggers", "must have at most 16 items", manyTriggers),
		triggerCase("required", "spec.triggers[0].type", msgRequired, "  - imageChangeParams:\n      containerNames: [web]\n      from: {kind: DockerImage, name: registry.example.com/web:1}"),
		triggerCase("enum", "spec.triggers[0].type", msgEnum, "  - type: Webhook"),
		triggerCase("cel", "spec.triggers[0].imageChangeParams", "imageChangeParams is required", "  - type: ImageChange"),
		triggerCase("cel", "spec.triggers", "containerNames must name containers of spec.template", imageChangeYAML("      containerNames: [nope]\n      from: {kind: DockerImage, name: registry.example.com/web:1}")),
		triggerCase("required", "spec.triggers[0].imageChangeParams.containerNames", msgRequired, imageChangeYAML("      from: {kind: DockerImage, name: registry.example.com/web:1}")),
		triggerCase("minItems", "spec.triggers[0].imageChangeParams.containerNames", msgMinItems, imageChangeYAML("      containerNames: []\n      from: {kind: DockerImage, name: registry.example.com/web:1}")),
		triggerCase("maxItems", "spec.triggers[0].imageChangeParams.containerNames", "must have at most 16 items", imageChangeYAML("      containerNames: ["+strings.Join(names, ", ")+"]\n      from: {kind: DockerImage, name: registry.example.com/web:1}")),
		triggerCase("maxLength", "spec.triggers[0].imageChangeParams.containerNames[0]", "may not be more than 63", imageChangeYAML("      containerNames: ["+long+"]\n      from: {kind: DockerImage, name: registry.example.com/web:1}")),
		triggerCase("required", "spec.triggers[0].imageChangeParams.from", msgRequired, imageChangeYAML("      containerNames: [web]")),
		triggerCase("required", "spec.triggers[0].imageChangeParams.from.kind", msgRequired, imageChangeYAML("      containerNames: [web]\n      from: {name: registry.example.com/web:1}")),
		triggerCase("enum", "spec.triggers[0].imageChangeParams.from.kind", msgEnum, imageChangeYAML("      containerNames: [web]\n      from: {kind: Registry, name: registry.example.com/web:1}")),
		triggerCase("required", "spec.triggers[0].imageChangeParams.from.name", msgRequired, imageChangeYAML("      containerNames: [web]\n      from: {kind: DockerImage}")),
		triggerCase("minLength", "spec.triggers[0].imageChangeParams.from.name", "at least 1 chars long", imageChangeYAML("      containerNames: [web]\n      from: {kind: ImageStreamTag, name: \"\"}")),
		triggerCase("maxLength", "spec.triggers[0].imageChangeParams.from.name", "may not be more than 512", imageChangeYAML("      containerNames: [web]\n      from: {kind: ImageStreamTag, name: \""+strings.Repeat("a", 513)+"\"}")),
		triggerCase("cel", "spec.triggers[0].imageChangeParams.from.name", "must be a tagged image reference", imageChangeYAML("      containerNames: [web]\n      from: {kind: DockerImage, name: registry.example.com/web}")),
	}
}

// statusCases break the status's rules through the status subresource.
func statusCases() []fieldCase {
	condition := func(c string) []string { return []string{`{"status":{"conditions":[` + c + `]}}`} }
	cause := func(c string) []string {
		return []string{`{"status":{"details":{"message":"m","causes":[` + c + `]}}}`}
	}
	return []fieldCase{
		{rule: "minimum", field: "status.latestVersion", wantMessage: "greater than or equal to 0", statusPatches: []string{`{"status":{"latestVersion":-1}}`}},
		{rule: "cel", field: "status.latestVersion", wantMessage: "must not decrease", statusPatches: []string{`{"status":{"latestVersion":7}}`, `{"status":{"latestVersion":6}}`}},
		{rule: "minimum", field: "status.observedGeneration", wantMessage: "greater than or equal to 0", statusPatches: []string{`{"status":{"observedGeneration":-1}}`}},
		{rule: "cel", field: "status.observedGeneration", wantMessage: "must not decrease", statusPatches: []string{`{"status":{"observedGeneration":70}}`, `{"status":{"observedGeneration":60}}`}},
		{rule: "required", field: "status.conditions[0].status", wantMessage: msgRequired, statusPatches: condition(`{"type":"Progressing"}`)},
		{rule: "required", field: "status.conditions[0].type", wantMessage: msgRequired, statusPatches: condition(`{"status":"True"}`)},
		{rule: "required", field: "status.details.causes[0].type", wantMessage: msgRequired, statusPatches: cause(`{}`)},
		{rule: "enum", field: "status.details.causes[0].type", wantMessage: msgEnum, statusPatches: cause(`{"type":"Webhook"}`)},
		{rule: "required", field: "status.details.causes[0].imageTrigger.from", wantMessage: msgRequired, statusPatches: cause(`{"type":"ImageChange","imageTrigger":{}}`)},
	}
}

// fieldCases is the whole table, each case named after its field and rule.
func fieldCases() []fieldCase {
	var cases []fieldCase
	for _, p := range hookPoints {
		cases = append(cases, hookCases(p)...)
		cases = append(cases, analysisCases(p.field()+".analysis", func(a string) string {
			return p.manifest("        failurePolicy: Abort\n        analysis:\n" + indent(a, 10))
		})...)
	}
	// The other places an analysis can be: a canary step and blue-green's
	// prePromotionAnalysis.
	cases = append(cases, analysisCases("spec.strategy.rollingParams.steps[0].analysis", func(a string) string {
		return invalidCase{params: "    rollingParams:\n      steps:\n      - analysis:\n" + indent(a, 10)}.manifest()
	})...)
	cases = append(cases, analysisCases("spec.strategy.blueGreenParams.prePromotionAnalysis", func(a string) string {
		return invalidCase{strategy: "BlueGreen", params: "    blueGreenParams:\n      activeService: web\n      prePromotionAnalysis:\n" + indent(a, 8)}.manifest()
	})...)
	cases = append(cases, analysisCases("spec.strategy.blueGreenParams.postPromotionAnalysis", func(a string) string {
		return invalidCase{strategy: "BlueGreen", params: "    blueGreenParams:\n      activeService: web\n      postPromotionAnalysis:\n" + indent(a, 8)}.manifest()
	})...)
	cases = append(cases, analysisCases("spec.strategy.rollingParams.analysis", func(a string) string {
		return invalidCase{params: "    rollingParams:\n      steps:\n      - setWeight: 50\n      analysis:\n" + indent(a, 8)}.manifest()
	})...)
	cases = append(cases, specCases()...)
	cases = append(cases, progressiveCases()...)
	cases = append(cases, statusCases()...)
	cases = append(cases, configSnapshotCases()...)
	cases = append(cases, trafficCases()...)
	for i := range cases {
		cases[i].name = fmt.Sprintf("%s %s %s", cases[i].field, cases[i].rule, cases[i].wantMessage)
	}
	return cases
}

// TestServerRefusesEveryBrokenRule breaks each rule of the CRD's schema in
// turn; the API server must refuse each object with a message naming the
// field. TestValidationTableCoversEveryRule keeps the table complete.
func TestServerRefusesEveryBrokenRule(t *testing.T) {
	ns := newNamespace(t)
	for i, tc := range fieldCases() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t, time.Minute)
			var err error
			if tc.statusPatches != nil {
				err = patchStatus(t, ns, fmt.Sprintf("status-%d", i), tc.statusPatches)
			} else {
				obj := mustUnstructured(t, tc.manifest)
				obj.SetNamespace(ns)
				err = cluster.client.Create(ctx, obj)
			}
			if err == nil {
				t.Fatalf("the API server accepted it:\n%s%s", tc.manifest, strings.Join(tc.statusPatches, "\n"))
			}
			if msg := err.Error(); !strings.Contains(msg, tc.field) || !strings.Contains(msg, tc.wantMessage) {
				t.Errorf("error does not name %q with %q:\n%s", tc.field, tc.wantMessage, msg)
			}
		})
	}
}

// patchStatus creates a valid DeploymentConfig without triggers and
// applies the patches to its status; it returns the last one's error, and
// fails the test if an earlier one fails.
func patchStatus(t *testing.T, ns, name string, patches []string) error {
	t.Helper()
	ctx := testContext(t, time.Minute)
	obj := mustUnstructured(t, strings.Replace(invalidCase{triggers: "    []"}.manifest(), "name: invalid", "name: "+name, 1))
	obj.SetNamespace(ns)
	if err := cluster.client.Create(ctx, obj); err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	var err error
	for i, patch := range patches {
		err = cluster.client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))
		if err != nil && i < len(patches)-1 {
			t.Fatalf("status patch %s was refused: %v", patch, err)
		}
	}
	return err
}

// schemaRule is one rule of the CRD's schema.
type schemaRule struct {
	path, rule, message string
}

// notOurs are the parts of the schema that come from Kubernetes' own types
// (the pod template, environment variables, resource requirements) and
// carry their rules: those types' validation is Kubernetes', and the
// objects made from them (RCs, pods) are validated again when created.
var notOurs = []string{".metadata", ".spec.template.", ".env[]", ".environment[]", ".resources."}

// schemaRuleKeys are the schema keywords that refuse values.
var schemaRuleKeys = []string{"minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "maxProperties", "enum", "pattern"}

// Every rule of the CRD's schema on deployconfig's own fields has a case in
// the table, and every case names a rule that exists.
func TestValidationTableCoversEveryRule(t *testing.T) {
	rules := schemaRules(t)
	cases := fieldCases()
	covered := func(r schemaRule) bool {
		for _, c := range cases {
			if c.schemaPath() == r.path && c.rule == r.rule && (r.rule != "cel" || strings.Contains(r.message, c.wantMessage)) {
				return true
			}
		}
		return false
	}
	for _, r := range rules {
		if !covered(r) {
			t.Errorf("no case breaks the %s rule of %s %s", r.rule, r.path, r.message)
		}
	}
	for _, c := range cases {
		found := false
		for _, r := range rules {
			found = found || (c.schemaPath() == r.path && c.rule == r.rule)
		}
		if !found {
			t.Errorf("case %q names no rule of the schema (path %s)", c.name, c.schemaPath())
		}
	}
	t.Logf("%d rules, %d cases", len(rules), len(cases))
}

// schemaRules reads the rules of the DeploymentConfig CRD's schema, outside
// notOurs. A CEL rule is placed at its fieldPath; a required property at
// the property.
func schemaRules(t *testing.T) []schemaRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "apps.deployconfig.io_deploymentconfigs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	var rules []schemaRule
	for _, v := range crd.Spec.Versions {
		rules = walkSchema(v.Schema.OpenAPIV3Schema, "", rules)
	}
	return rules
}

// walkSchema collects the rules of a schema node and its children.
func walkSchema(node map[string]any, path string, rules []schemaRule) []schemaRule {
	for _, part := range notOurs {
		if strings.Contains(path, part) {
			return rules
		}
	}
	for _, key := range schemaRuleKeys {
		if _, ok := node[key]; ok {
			rules = append(rules, schemaRule{path: path, rule: key})
		}
	}
	validations, _ := node["x-kubernetes-validations"].([]any)
	for _, v := range validations {
		cel, _ := v.(map[string]any)
		fieldPath, _ := cel["fieldPath"].(string)
		message, _ := cel["message"].(string)
		rules = append(rules, schemaRule{path: path + fieldPath, rule: "cel", message: message})
	}
	required, _ := node["required"].([]any)
	for _, r := range required {
		rules = append(rules, schemaRule{path: path + "." + fmt.Sprint(r), rule: "required"})
	}
	properties, _ := node["properties"].(map[string]any)
	for name, child := range properties {
		if c, ok := child.(map[string]any); ok {
			rules = walkSchema(c, path+"."+name, rules)
		}
	}
	if items, ok := node["items"].(map[string]any); ok {
		rules = walkSchema(items, path+"[]", rules)
	}
	if values, ok := node["additionalProperties"].(map[string]any); ok {
		rules = walkSchema(values, path+"{}", rules)
	}
	return rules
}
