package playground

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"sigs.k8s.io/yaml"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// stockStages are kwok's own "fast" node and pod stages, copied from
// sigs.k8s.io/kwok v0.8.0: nodes become Ready at once and keep a lease, pods
// become Running and Ready at once, Job pods complete, deleted pods go away.
//
//go:embed stages/*.yaml
var stockStages embed.FS

// stageFiles fixes the order of the stock stages in the generated config.
func stageFiles() []string {
	return []string{
		"node-initialize.yaml",
		"node-heartbeat-with-lease.yaml",
		"pod-ready.yaml",
		"pod-complete.yaml",
		"pod-delete.yaml",
	}
}

// DefaultUnmanagedPodLabels lists the label keys of pods that kwok must leave
// alone: deployer and hook pods, which the playground runs itself.
func DefaultUnmanagedPodLabels() []string {
	return []string{dcv1.DeployerPodForDeploymentLabel}
}

// StageConfig returns kwok's configuration (a multi-document YAML stream of
// kwok.x-k8s.io/v1alpha1 Stage objects, for `kwokctl --config`) that makes
// ordinary pods Running and Ready at once, but leaves pods that carry any of
// the unmanagedLabels keys bound and Pending: no kwok stage touches them,
// not even to remove them once deleted. The local pod runtime runs them, and
// removes a deleted one once its work has stopped, as a kubelet does (kwok
// would remove it at once, while its deployer may still be scaling).
func StageConfig(unmanagedLabels []string) ([]byte, error) {
	var out bytes.Buffer
	for i, name := range stageFiles() {
		stage, err := loadStage(name)
		if err != nil {
			return nil, err
		}
		if isPodStage(stage) {
			excludeLabels(stage, unmanagedLabels)
		}
		doc, err := yaml.Marshal(stage)
		if err != nil {
			return nil, fmt.Errorf("encoding kwok stage %s: %w", name, err)
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(doc)
	}
	return out.Bytes(), nil
}

// loadStage decodes one embedded stock stage.
func loadStage(name string) (map[string]any, error) {
	data, err := fs.ReadFile(stockStages, path.Join("stages", name))
	if err != nil {
		return nil, fmt.Errorf("reading kwok stage %s: %w", name, err)
	}
	var stage map[string]any
	if err := yaml.Unmarshal(data, &stage); err != nil {
		return nil, fmt.Errorf("decoding kwok stage %s: %w", name, err)
	}
	return stage, nil
}

// isPodStage reports whether a stage acts on pods.
func isPodStage(stage map[string]any) bool {
	spec, _ := stage["spec"].(map[string]any)
	ref, _ := spec["resourceRef"].(map[string]any)
	return ref["kind"] == "Pod"
}

// excludeLabels adds to a stage's selector one DoesNotExist expression per
// label key.
func excludeLabels(stage map[string]any, labels []string) {
	spec := child(stage, "spec")
	selector := child(spec, "selector")
	exprs, _ := selector["matchExpressions"].([]any)
	for _, label := range labels {
		expr := map[string]any{"key": labelKeyExpr(label), "operator": "DoesNotExist"}
		if !slices.ContainsFunc(exprs, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(expr) }) {
			exprs = append(exprs, expr)
		}
	}
	selector["matchExpressions"] = exprs
}

// child returns m[key] as a map, creating it when it is absent.
func child(m map[string]any, key string) map[string]any {
	c, ok := m[key].(map[string]any)
	if !ok {
		c = map[string]any{}
		m[key] = c
	}
	return c
}

// labelKeyExpr is the jq expression kwok evaluates to read a pod's label;
// quoting keeps the dots and slash of a prefixed key inside one path step.
func labelKeyExpr(label string) string {
	return fmt.Sprintf(".metadata.labels.%q", label)
}
