package playground

import (
	"strings"
	"testing"
)

// savedConfig is the shape of kwokctl's saved configuration (kwok.yaml)
// that savedConfigCurrent reads: the options, then the stages, whose
// expressions kwokctl saves as {jq: {key, operator}}.
func savedConfig(crds []string, podStageExclusions ...[]string) string {
	var b strings.Builder
	b.WriteString("apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokctlConfiguration\nmetadata: {}\noptions:\n  runtime: binary\n")
	if crds != nil {
		b.WriteString("  enableCRDs:\n")
		for _, c := range crds {
			b.WriteString("  - " + c + "\n")
		}
	}
	b.WriteString("---\napiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata: {name: node-initialize}\nspec:\n  resourceRef: {apiGroup: v1, kind: Node}\n")
	for i, labels := range podStageExclusions {
		b.WriteString("---\napiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata: {name: pod-" + string(rune('a'+i)) + "}\nspec:\n  resourceRef: {apiGroup: v1, kind: Pod}\n  selector:\n    matchExpressions:\n    - jq: {key: .metadata.deletionTimestamp, operator: DoesNotExist}\n")
		for _, l := range labels {
			b.WriteString("    - jq: {key: '" + labelKeyExpr(l) + "', operator: DoesNotExist}\n")
		}
	}
	return b.String()
}

func TestSavedConfigCurrent(t *testing.T) {
	deployer := DefaultUnmanagedPodLabels()
	tests := []struct {
		name  string
		saved string
		want  bool
	}{
		{name: "today's cluster", saved: savedConfig([]string{"Logs"}, deployer, deployer, deployer), want: true},
		{name: "no Logs resource", saved: savedConfig(nil, deployer, deployer, deployer)},
		{name: "kwok deletes deployer pods itself", saved: savedConfig([]string{"Logs"}, deployer, deployer, nil)},
		{name: "the expression shape of the stage files", saved: strings.Replace(savedConfig([]string{"Logs"}, deployer),
			"- jq: {key: '"+labelKeyExpr(deployer[0])+"', operator: DoesNotExist}", "- {key: '"+labelKeyExpr(deployer[0])+"', operator: DoesNotExist}", 1), want: true},
		{name: "not YAML", saved: "{", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := savedConfigCurrent([]byte(tt.saved), deployer); got != tt.want {
				t.Errorf("savedConfigCurrent = %t, want %t\n%s", got, tt.want, tt.saved)
			}
		})
	}
}
