package integration

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// minimalDC is a DeploymentConfig with only what the API requires.
const minimalDC = `apiVersion: apps.deployconfig.io/v1
kind: DeploymentConfig
metadata:
  name: %s
spec:
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: registry.example.com/web:1
%s`

// TestServerAppliesDefaults creates DeploymentConfigs with kubectl and checks
// the defaults a user sees in `kubectl get -o yaml`.
func TestServerAppliesDefaults(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name  string
		extra string // appended under spec:
		want  map[string]any
		// absent lists paths the server must not fill in.
		absent []string
	}{{
		name: "absent strategy becomes Rolling with defaults",
		want: map[string]any{
			"spec.replicas":                                   float64(1),
			"spec.revisionHistoryLimit":                       float64(10),
			"spec.test":                                       false,
			"spec.triggers[0].type":                           "ConfigChange",
			"spec.strategy.type":                              "Rolling",
			"spec.strategy.activeDeadlineSeconds":             float64(21600),
			"spec.strategy.rollingParams.updatePeriodSeconds": float64(1),
			"spec.strategy.rollingParams.intervalSeconds":     float64(1),
			"spec.strategy.rollingParams.timeoutSeconds":      float64(600),
			"spec.strategy.rollingParams.maxSurge":            "25%",
			"spec.strategy.rollingParams.maxUnavailable":      "25%",
		},
		absent: []string{"spec.triggers[1]", "spec.strategy.recreateParams"},
	}, {
		name:  "explicit empty triggers stay empty",
		extra: "  triggers: []\n",
		want:  map[string]any{"spec.triggers": []any{}},
	}, {
		name:  "fields inside a present recreateParams",
		extra: "  strategy:\n    type: Recreate\n    recreateParams: {}\n",
		want: map[string]any{
			"spec.strategy.type":                          "Recreate",
			"spec.strategy.recreateParams.timeoutSeconds": float64(600),
			"spec.strategy.activeDeadlineSeconds":         float64(21600),
		},
		absent: []string{"spec.strategy.rollingParams"},
	}, {
		name:  "fields inside a present rollingParams",
		extra: "  strategy:\n    rollingParams:\n      maxSurge: 2\n",
		want: map[string]any{
			"spec.strategy.type":                              "Rolling",
			"spec.strategy.rollingParams.maxSurge":            float64(2),
			"spec.strategy.rollingParams.updatePeriodSeconds": float64(1),
			"spec.strategy.rollingParams.intervalSeconds":     float64(1),
			"spec.strategy.rollingParams.timeoutSeconds":      float64(600),
		},
	}, {
		name:  "values the user set are kept",
		extra: "  replicas: 0\n  revisionHistoryLimit: 2\n  test: true\n",
		want: map[string]any{
			"spec.replicas":             float64(0),
			"spec.revisionHistoryLimit": float64(2),
			"spec.test":                 true,
		},
	}}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t, time.Minute)
			name := fmt.Sprintf("defaults-%d", i)
			if _, stderr, err := kubectlRun(ctx, fmt.Sprintf(minimalDC, name, tc.extra), "apply", "-n", ns, "-f", "-"); err != nil {
				t.Fatalf("kubectl apply: %v: %s", err, stderr)
			}
			out, stderr, err := kubectlRun(ctx, "", "get", "-n", ns, "dc", name, "-o", "yaml")
			if err != nil {
				t.Fatalf("kubectl get: %v: %s", err, stderr)
			}
			obj := map[string]any{}
			if err := yaml.Unmarshal([]byte(out), &obj); err != nil {
				t.Fatalf("parse kubectl output: %v", err)
			}
			for path, want := range tc.want {
				got, ok := field(obj, path)
				if !ok || !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %#v (present: %v), want %#v", path, got, ok, want)
				}
			}
			for _, path := range tc.absent {
				if got, ok := field(obj, path); ok {
					t.Errorf("%s = %#v, want it absent", path, got)
				}
			}
		})
	}
}
