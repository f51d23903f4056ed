// Package cachedconfig is how dc-controller's informer cache holds a
// DeploymentConfig: with its pod template kept as the JSON it encodes to,
// in an annotation only the cache knows. Decoded, a pod template is more
// than half of a DeploymentConfig's memory (Go's PodSpec and Container
// structs are large even when nearly empty) while its JSON is a fraction
// of that; a controller that reads a DeploymentConfig from the cache
// expands its copy before it looks at the template or writes the object.
package cachedconfig

import (
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// TemplateAnnotation holds the encoded pod template of a cached
// DeploymentConfig. The API server never sees it: Expand removes it, and
// a status update ignores metadata.
const TemplateAnnotation = dcv1.KeyPrefix + "cached-pod-template"

// Compact replaces the DeploymentConfig's pod template by its JSON
// encoding. It is meant for the cache's transform, which owns the object.
func Compact(dc *dcv1.DeploymentConfig) error {
	if dc.Spec.Template == nil {
		return nil
	}
	data, err := json.Marshal(dc.Spec.Template)
	if err != nil {
		return fmt.Errorf("encode the pod template of deploymentconfig %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	annotations := make(map[string]string, len(dc.Annotations)+1)
	maps.Copy(annotations, dc.Annotations)
	annotations[TemplateAnnotation] = string(data)
	dc.Annotations = annotations
	dc.Spec.Template = nil
	return nil
}

// Expand puts back the pod template that Compact encoded and removes its
// annotation; a DeploymentConfig that was not compacted is left as it is.
// It changes only dc's own fields (it replaces the annotations map rather
// than editing it), so a shallow copy of the cache's object may be
// expanded.
func Expand(dc *dcv1.DeploymentConfig) error {
	data, ok := dc.Annotations[TemplateAnnotation]
	if !ok {
		return nil
	}
	template := &corev1.PodTemplateSpec{}
	if err := json.Unmarshal([]byte(data), template); err != nil {
		return fmt.Errorf("decode the cached pod template of deploymentconfig %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	annotations := maps.Clone(dc.Annotations)
	delete(annotations, TemplateAnnotation)
	if len(annotations) == 0 {
		annotations = nil
	}
	dc.Annotations = annotations
	dc.Spec.Template = template
	return nil
}
