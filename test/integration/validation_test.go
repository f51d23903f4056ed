package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// validDC is a DeploymentConfig that passes validation; each case of
// TestServerRefusesInvalid changes one thing in it.
const validDC = `apiVersion: apps.deployconfig.io/v1
kind: DeploymentConfig
metadata:
  name: invalid
spec:
  strategy:
    type: %s
%s
  triggers:
%s
  template:
    metadata:
      labels:
        app: web
%s
    spec:
      containers:
      - name: web
        image: registry.example.com/web:1
      - name: sidecar
        image: registry.example.com/sidecar:1
`

// invalidCase describes one invalid DeploymentConfig: the strategy type,
// the strategy body, the triggers, extra template labels, and extra spec.
type invalidCase struct {
	name        string
	strategy    string
	params      string
	triggers    string
	spec        string
	wantField   string
	wantMessage string
}

func (c invalidCase) manifest() string {
	strategy := c.strategy
	if strategy == "" {
		strategy = "Rolling"
	}
	triggers := c.triggers
	if triggers == "" {
		triggers = "  - type: ConfigChange"
	}
	return fmt.Sprintf(validDC, strategy, c.params, triggers, "") + c.spec
}

func hook(body string) string {
	return "    rollingParams:\n      pre:\n" + body
}

func TestServerRefusesInvalid(t *testing.T) {
	cases := []invalidCase{
		{name: "selector does not match template labels", spec: "  selector:\n    app: other\n",
			wantField: "spec.selector", wantMessage: "must match spec.template.metadata.labels"},
		{name: "negative replicas", spec: "  replicas: -1\n",
			wantField: "spec.replicas", wantMessage: "greater than or equal to 0"},
		{name: "negative revisionHistoryLimit", spec: "  revisionHistoryLimit: -1\n",
			wantField: "spec.revisionHistoryLimit", wantMessage: "greater than or equal to 0"},
		{name: "negative minReadySeconds", spec: "  minReadySeconds: -1\n",
			wantField: "spec.minReadySeconds", wantMessage: "greater than or equal to 0"},
		{name: "minReadySeconds not below the timeout", spec: "  minReadySeconds: 600\n",
			wantField: "spec.minReadySeconds", wantMessage: "must be less than the strategy's timeoutSeconds"},
		{name: "unknown strategy type", strategy: "Canary",
			wantField: "spec.strategy.type", wantMessage: `supported values: "Rolling", "Recreate", "Custom", "BlueGreen"`},
		{name: "maxSurge and maxUnavailable both 0", params: "    rollingParams:\n      maxSurge: 0\n      maxUnavailable: 0",
			wantField: "spec.strategy.rollingParams.maxUnavailable", wantMessage: "must not both be zero"},
		{name: "maxSurge 0% and maxUnavailable 0", params: "    rollingParams:\n      maxSurge: 0%\n      maxUnavailable: 0",
			wantField: "spec.strategy.rollingParams.maxUnavailable", wantMessage: "must not both be zero"},
		{name: "maxUnavailable above 100%", params: "    rollingParams:\n      maxUnavailable: 150%",
			wantField: "spec.strategy.rollingParams.maxUnavailable", wantMessage: "percentage of at most 100%"},
		{name: "maxUnavailable not a number", params: "    rollingParams:\n      maxUnavailable: lots",
			wantField: "spec.strategy.rollingParams.maxUnavailable", wantMessage: "non-negative integer or a percentage"},
		{name: "negative maxSurge", params: "    rollingParams:\n      maxSurge: -1",
			wantField: "spec.strategy.rollingParams.maxSurge", wantMessage: "non-negative integer or a percentage"},
		{name: "rolling timeout 0", params: "    rollingParams:\n      timeoutSeconds: 0",
			wantField: "spec.strategy.rollingParams.timeoutSeconds", wantMessage: "greater than or equal to 1"},
		{name: "rolling interval 0", params: "    rollingParams:\n      intervalSeconds: 0",
			wantField: "spec.strategy.rollingParams.intervalSeconds", wantMessage: "greater than or equal to 1"},
		{name: "rolling update period 0", params: "    rollingParams:\n      updatePeriodSeconds: 0",
			wantField: "spec.strategy.rollingParams.updatePeriodSeconds", wantMessage: "greater than or equal to 1"},
		{name: "recreate timeout negative", strategy: "Recreate", params: "    recreateParams:\n      timeoutSeconds: -5",
			wantField: "spec.strategy.recreateParams.timeoutSeconds", wantMessage: "greater than or equal to 1"},
		{name: "activeDeadlineSeconds 0", params: "    activeDeadlineSeconds: 0",
			wantField: "spec.strategy.activeDeadlineSeconds", wantMessage: "greater than or equal to 1"},
		{name: "activeDeadlineSeconds equal to the timeout", params: "    activeDeadlineSeconds: 600\n    rollingParams:\n      timeoutSeconds: 600",
			wantField: "spec.strategy.activeDeadlineSeconds", wantMessage: "must be greater than the strategy's timeoutSeconds"},
		{name: "activeDeadlineSeconds below the default timeout", strategy: "Recreate", params: "    activeDeadlineSeconds: 100",
			wantField: "spec.strategy.activeDeadlineSeconds", wantMessage: "must be greater than the strategy's timeoutSeconds"},
		{name: "Custom without customParams", strategy: "Custom",
			wantField: "spec.strategy.customParams", wantMessage: "required when strategy.type is Custom"},
		{name: "mid hook in Rolling", params: "    recreateParams:\n      mid:\n        failurePolicy: Abort\n        execNewPod:\n          containerName: web\n          command: [/bin/true]",
			wantField: "spec.strategy.recreateParams.mid", wantMessage: "only run by the Recreate strategy"},
		{name: "hook without failurePolicy", params: hook("        execNewPod:\n          containerName: web\n          command: [/bin/true]"),
			wantField: "spec.strategy.rollingParams.pre.failurePolicy", wantMessage: "Required value"},
		{name: "hook with unknown failurePolicy", params: hook("        failurePolicy: Sometimes\n        execNewPod:\n          containerName: web\n          command: [/bin/true]"),
			wantField: "spec.strategy.rollingParams.pre.failurePolicy", wantMessage: `supported values: "Abort", "Retry", "Ignore"`},
		{name: "hook without an action", params: hook("        failurePolicy: Abort"),
			wantField: "spec.strategy.rollingParams.pre", wantMessage: "exactly one of execNewPod, tagImages or analysis is required"},
		{name: "hook with two actions", params: hook("        failurePolicy: Abort\n        execNewPod:\n          containerName: web\n          command: [/bin/true]\n        tagImages:\n        - containerName: web\n          to: {kind: DockerImage, name: registry.example.com/web:ok}"),
			wantField: "spec.strategy.rollingParams.pre", wantMessage: "exactly one of execNewPod, tagImages or analysis is required"},
		{name: "hook with an empty command", params: hook("        failurePolicy: Abort\n        execNewPod:\n          containerName: web\n          command: []"),
			wantField: "spec.strategy.rollingParams.pre.execNewPod.command", wantMessage: "should have at least 1 items"},
		{name: "hook naming a missing container", params: hook("        failurePolicy: Abort\n        execNewPod:\n          containerName: nope\n          command: [/bin/true]"),
			wantField: "spec.strategy.rollingParams.pre.execNewPod.containerName", wantMessage: "must name a container of spec.template"},
		{name: "hook without containerName in a two-container template", params: hook("        failurePolicy: Abort\n        execNewPod:\n          command: [/bin/true]"),
			wantField: "spec.strategy.rollingParams.pre.execNewPod.containerName", wantMessage: "must name a container of spec.template"},
		{name: "recreate post hook naming a missing container", strategy: "Recreate", params: "    recreateParams:\n      post:\n        failurePolicy: Ignore\n        execNewPod:\n          containerName: nope\n          command: [/bin/true]",
			wantField: "spec.strategy.recreateParams.post.execNewPod.containerName", wantMessage: "must name a container of spec.template"},
		{name: "tagImages into an ImageStreamTag", params: hook("        failurePolicy: Abort\n        tagImages:\n        - containerName: web\n          to: {kind: ImageStreamTag, name: web:prod}"),
			wantField: "spec.strategy.rollingParams.pre.tagImages[0].to.kind", wantMessage: "must be DockerImage"},
		{name: "tagImages to an untagged reference", params: hook("        failurePolicy: Abort\n        tagImages:\n        - containerName: web\n          to: {kind: DockerImage, name: registry.example.com/web}"),
			wantField: "spec.strategy.rollingParams.pre.tagImages[0].to.name", wantMessage: "must be a tagged image reference"},
		{name: "ImageChange from an untagged DockerImage", triggers: "  - type: ImageChange\n    imageChangeParams:\n      containerNames: [web]\n      from: {kind: DockerImage, name: \"registry.example.com/web@sha256:0123\"}",
			wantField: "spec.triggers[0].imageChangeParams.from.name", wantMessage: "must be a tagged image reference"},
		{name: "unknown trigger type", triggers: "  - type: Webhook",
			wantField: "spec.triggers[0].type", wantMessage: `supported values: "ConfigChange", "ImageChange"`},
		{name: "ImageChange without params", triggers: "  - type: ImageChange",
			wantField: "spec.triggers[0].imageChangeParams", wantMessage: "imageChangeParams is required"},
		{name: "ImageChange without containerNames", triggers: "  - type: ImageChange\n    imageChangeParams:\n      containerNames: []\n      from: {kind: DockerImage, name: registry.example.com/web:1}",
			wantField: "spec.triggers[0].imageChangeParams.containerNames", wantMessage: "should have at least 1 items"},
		{name: "ImageChange naming a missing container", triggers: "  - type: ImageChange\n    imageChangeParams:\n      containerNames: [nope]\n      from: {kind: DockerImage, name: registry.example.com/web:1}",
			wantField: "spec.triggers", wantMessage: "containerNames must name containers of spec.template"},
		{name: "ImageChange without from.name", triggers: "  - type: ImageChange\n    imageChangeParams:\n      containerNames: [web]\n      from: {kind: DockerImage, name: \"\"}",
			wantField: "spec.triggers[0].imageChangeParams.from.name", wantMessage: "at least 1 chars long"},
		{name: "ImageChange from an unknown kind", triggers: "  - type: ImageChange\n    imageChangeParams:\n      containerNames: [web]\n      from: {kind: Registry, name: x}",
			wantField: "spec.triggers[0].imageChangeParams.from.kind", wantMessage: "supported values"},
	}
	expectRefused(t, cases)
}

// expectRefused creates each case's DeploymentConfig and checks that the API
// server refuses it with an error naming the case's field and message.
func expectRefused(t *testing.T, cases []invalidCase) {
	t.Helper()
	ns := newNamespace(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t, time.Minute)
			obj := mustUnstructured(t, tc.manifest())
			obj.SetNamespace(ns)
			err := cluster.client.Create(ctx, obj)
			if err == nil {
				t.Fatalf("the API server accepted the DeploymentConfig:\n%s", tc.manifest())
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.wantField) || !strings.Contains(msg, tc.wantMessage) {
				t.Errorf("error does not name %q with %q:\n%s", tc.wantField, tc.wantMessage, msg)
			}
		})
	}
}

// TestServerRefusesEmptySelector checks a DeploymentConfig that has neither
// a selector nor template labels.
func TestServerRefusesEmptySelector(t *testing.T) {
	ctx := testContext(t, time.Minute)
	obj := mustUnstructured(t, `apiVersion: apps.deployconfig.io/v1
kind: DeploymentConfig
metadata:
  name: no-selector
spec:
  template:
    spec:
      containers:
      - name: web
        image: registry.example.com/web:1
`)
	obj.SetNamespace(newNamespace(t))
	err := cluster.client.Create(ctx, obj)
	if err == nil || !strings.Contains(err.Error(), "spec.selector") || !strings.Contains(err.Error(), "must not be empty") {
		t.Fatalf("want an error naming spec.selector, got %v", err)
	}
}

// TestKubectlApplyNamesTheField is what a user sees when applying an invalid
// DeploymentConfig.
func TestKubectlApplyNamesTheField(t *testing.T) {
	ctx := testContext(t, time.Minute)
	c := invalidCase{params: "    rollingParams:\n      maxSurge: 0\n      maxUnavailable: 0"}
	_, stderr, err := kubectlRun(ctx, c.manifest(), "apply", "-n", newNamespace(t), "-f", "-")
	if err == nil {
		t.Fatal("kubectl apply succeeded")
	}
	if !strings.Contains(stderr, "spec.strategy.rollingParams.maxUnavailable") || !strings.Contains(stderr, "must not both be zero") {
		t.Errorf("kubectl apply error does not name the field:\n%s", stderr)
	}
}
