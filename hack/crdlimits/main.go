// Command crdlimits adds size limits to the pod template inside the
// generated DeploymentConfig CRD.
//
// The CEL rules that relate hooks and triggers to template containers must
// fit the API server's cost budget, which is estimated from the largest
// lists and strings the schema allows. The pod template comes from
// k8s.io/api, whose types carry no such limits and cannot take our markers,
// so `make generate` runs this after controller-gen. The limits are the ones
// Kubernetes enforces anyway (names and label values of 63 characters) or
// far above real use (64 containers).
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

const (
	maxContainers = 64
	maxNameLength = 63
	maxLabels     = 64
	// maxReferenceLength bounds image references (registry/repo:tag).
	maxReferenceLength = 512
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdlimits CRD.yaml")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "crdlimits: %v\n", err)
		os.Exit(1)
	}
}

func run(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	crd := map[string]any{}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	versions, _ := lookup(crd, "spec", "versions").([]any)
	for _, v := range versions {
		spec := lookup(v, "schema", "openAPIV3Schema", "properties", "spec", "properties")
		if spec == nil {
			return fmt.Errorf("%s: no spec schema", path)
		}
		if err := limitTemplate(spec); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte("---\n"), out...), 0o644)
}

func limitTemplate(spec any) error {
	for _, list := range []string{"containers", "initContainers"} {
		containers, ok := lookup(spec, "template", "properties", "spec", "properties", list).(map[string]any)
		if !ok {
			return fmt.Errorf("no template.spec.%s in the schema", list)
		}
		containers["maxItems"] = maxContainers
		name, ok := lookup(containers, "items", "properties", "name").(map[string]any)
		if !ok {
			return fmt.Errorf("no template.spec.%s[].name in the schema", list)
		}
		name["maxLength"] = maxNameLength
	}
	// tagImages targets are corev1.ObjectReferences too: bound their
	// names so the reference-pattern rule fits the budget.
	for _, hook := range [][2]string{{"rollingParams", "pre"}, {"rollingParams", "post"},
		{"recreateParams", "pre"}, {"recreateParams", "mid"}, {"recreateParams", "post"}} {
		name, ok := lookup(spec, "strategy", "properties", hook[0], "properties", hook[1], "properties",
			"tagImages", "items", "properties", "to", "properties", "name").(map[string]any)
		if !ok {
			return fmt.Errorf("no strategy.%s.%s.tagImages[].to.name in the schema", hook[0], hook[1])
		}
		name["maxLength"] = maxReferenceLength
	}
	for _, m := range []any{
		lookup(spec, "template", "properties", "metadata", "properties", "labels"),
		lookup(spec, "selector"),
	} {
		labels, ok := m.(map[string]any)
		if !ok {
			return fmt.Errorf("no label map in the schema")
		}
		labels["maxProperties"] = maxLabels
		if values, ok := labels["additionalProperties"].(map[string]any); ok {
			values["maxLength"] = maxNameLength
		}
	}
	return nil
}

// lookup follows keys through nested maps and returns nil when one is missing.
func lookup(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
