package playground

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// decodeStages splits a stage configuration into its stages, by name.
func decodeStages(t *testing.T, config []byte) map[string]map[string]any {
	t.Helper()
	stages := map[string]map[string]any{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(config), 4096)
	for {
		var stage map[string]any
		if err := dec.Decode(&stage); err != nil {
			break
		}
		if stage["kind"] != "Stage" || stage["apiVersion"] != "kwok.x-k8s.io/v1alpha1" {
			t.Fatalf("not a kwok Stage: %v", stage)
		}
		meta := stage["metadata"].(map[string]any)
		stages[meta["name"].(string)] = stage
	}
	return stages
}

// exclusions are the label keys a stage's DoesNotExist expressions skip.
func exclusions(stage map[string]any) []string {
	selector := stage["spec"].(map[string]any)["selector"].(map[string]any)
	var labels []string
	for _, e := range selector["matchExpressions"].([]any) {
		expr := e.(map[string]any)
		key := expr["key"].(string)
		if expr["operator"] == "DoesNotExist" && strings.HasPrefix(key, ".metadata.labels.") {
			labels = append(labels, key)
		}
	}
	return labels
}

func TestStageConfig(t *testing.T) {
	deployer := `.metadata.labels."deployconfig.io/deployer-pod-for.name"`
	other := `.metadata.labels."example.com/other"`
	tests := []struct {
		name   string
		labels []string
		// want maps each stage to the label expressions it must skip.
		want map[string][]string
	}{
		{
			name:   "default labels",
			labels: DefaultUnmanagedPodLabels(),
			want: map[string][]string{
				"node-initialize":           nil,
				"node-heartbeat-with-lease": nil,
				"pod-ready":                 {deployer},
				"pod-complete":              {deployer},
				"pod-delete":                {deployer},
			},
		},
		{
			name:   "no labels: kwok's stock stages",
			labels: nil,
			want: map[string][]string{
				"node-initialize": nil, "node-heartbeat-with-lease": nil,
				"pod-ready": nil, "pod-complete": nil, "pod-delete": nil,
			},
		},
		{
			name:   "several labels, one repeated",
			labels: []string{"deployconfig.io/deployer-pod-for.name", "example.com/other", "example.com/other"},
			want: map[string][]string{
				"node-initialize": nil, "node-heartbeat-with-lease": nil,
				"pod-ready":    {deployer, other},
				"pod-complete": {deployer, other},
				"pod-delete":   {deployer, other},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config, err := StageConfig(tt.labels)
			if err != nil {
				t.Fatal(err)
			}
			stages := decodeStages(t, config)
			if len(stages) != len(tt.want) {
				t.Fatalf("got %d stages, want %d:\n%s", len(stages), len(tt.want), config)
			}
			for name, want := range tt.want {
				stage, ok := stages[name]
				if !ok {
					t.Fatalf("stage %s missing", name)
				}
				if got := exclusions(stage); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("stage %s skips %v, want %v", name, got, want)
				}
			}
		})
	}
}

// The stock stages survive decoding and encoding: their templates are
// unchanged and the existing selectors are kept.
func TestStageConfigKeepsStockStages(t *testing.T) {
	config, err := StageConfig(DefaultUnmanagedPodLabels())
	if err != nil {
		t.Fatal(err)
	}
	stages := decodeStages(t, config)
	for _, name := range stageFiles() {
		stock, err := loadStage(name)
		if err != nil {
			t.Fatal(err)
		}
		stockName := stock["metadata"].(map[string]any)["name"].(string)
		got := stages[stockName]
		gotNext := fmt.Sprint(got["spec"].(map[string]any)["next"])
		if wantNext := fmt.Sprint(stock["spec"].(map[string]any)["next"]); gotNext != wantNext {
			t.Errorf("stage %s: next changed", stockName)
		}
		gotExprs := got["spec"].(map[string]any)["selector"].(map[string]any)["matchExpressions"].([]any)
		stockExprs := stock["spec"].(map[string]any)["selector"].(map[string]any)["matchExpressions"].([]any)
		if fmt.Sprint(gotExprs[:len(stockExprs)]) != fmt.Sprint(stockExprs) {
			t.Errorf("stage %s: stock selector changed: %v", stockName, gotExprs)
		}
	}
}

func TestLabelKeyExpr(t *testing.T) {
	tests := map[string]string{
		"app":                                   `.metadata.labels."app"`,
		"deployconfig.io/deployer-pod-for.name": `.metadata.labels."deployconfig.io/deployer-pod-for.name"`,
	}
	for label, want := range tests {
		if got := labelKeyExpr(label); got != want {
			t.Errorf("labelKeyExpr(%q) = %s, want %s", label, got, want)
		}
	}
}
