// Package convert turns OpenShift DeploymentConfig manifests
// (apps.openshift.io/v1 and the legacy pre-group v1) and Argo Rollouts'
// Rollouts (argoproj.io/v1alpha1, argorollout.go) into deployconfig's
// apps.deployconfig.io/v1, carrying every field that has a meaning here and
// saying, as warnings, what does not carry over. It is pure: it reads bytes
// and returns objects and warnings, so `kubectl dc convert`, tests and tools
// share one behaviour.
package convert

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Options tune a conversion.
type Options struct {
	// ImageRegistry, when set, turns ImageStreamTag references into
	// registry references (see ParseImageRegistry for its two forms).
	ImageRegistry *ImageRegistry
}

// Result is a converted input: its documents in input order and the
// warnings about what did not carry over.
type Result struct {
	// Documents are the output objects. A List in the input stays one List
	// document; a document that converts to nothing is left out.
	Documents []map[string]any
	// Warnings are one-line notes about dropped or changed fields and
	// objects, each naming the object it is about.
	Warnings []string

	// templates are the input's Argo AnalysisTemplates, which Rollouts'
	// analyses are inlined from (argorollout.go).
	templates argoTemplates
}

// openShiftGroupSuffix ends the API group of every OpenShift-only kind
// (route.openshift.io, build.openshift.io, image.openshift.io...).
const openShiftGroupSuffix = "openshift.io"

// Convert converts every document of data, which may be YAML (one or more
// documents) or JSON, a single object or a v1 List.
func Convert(data []byte, opts Options) (*Result, error) {
	res := &Result{templates: collectArgoTemplates(data)}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for index := 1; ; index++ {
		var raw any
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", index, err)
		}
		if raw == nil {
			continue
		}
		doc, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d: expected a Kubernetes object (a mapping with apiVersion and kind), got %s", index, jsonKind(raw))
		}
		if len(doc) == 0 {
			continue
		}
		if path, r := unprintable(doc, ""); path != "" {
			return nil, fmt.Errorf("document %d: %s: contains the control character %U, which a manifest cannot hold", index, path[1:], r)
		}
		out, err := convertDocument(doc, opts, res)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", index, err)
		}
		if out != nil {
			res.Documents = append(res.Documents, out)
		}
	}
	return res, nil
}

// convertDocument converts one top-level document: a List (its items one by
// one) or a single object. It returns nil when nothing is left.
func convertDocument(doc map[string]any, opts Options, res *Result) (map[string]any, error) {
	if !isList(doc) {
		return convertObject(doc, opts, res)
	}
	items, _ := doc["items"].([]any)
	converted := make([]any, 0, len(items))
	for i, item := range items {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("items[%d]: expected an object, got %T", i, item)
		}
		out, err := convertObject(obj, opts, res)
		if err != nil {
			return nil, fmt.Errorf("items[%d]: %w", i, err)
		}
		if out != nil {
			converted = append(converted, out)
		}
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "items": converted}, nil
}

func isList(obj map[string]any) bool {
	return str(obj, "kind") == "List" && str(obj, "apiVersion") == "v1"
}

// convertObject converts a DeploymentConfig, passes a Kubernetes object
// through unchanged and drops an OpenShift-only object, with a warning for
// both of the last two.
func convertObject(obj map[string]any, opts Options, res *Result) (map[string]any, error) {
	apiVersion, kind := str(obj, "apiVersion"), str(obj, "kind")
	ref := objectRef(obj)
	switch {
	case kind == "":
		return nil, fmt.Errorf("%s: the object has no kind", ref)
	case kind == "DeploymentConfig" && (apiVersion == "apps.openshift.io/v1" || apiVersion == "v1" || apiVersion == dcv1.GroupVersion.String()):
		return convertDeploymentConfig(obj, opts, res)
	case isArgo(apiVersion):
		return convertArgoObject(obj, res)
	case isOpenShiftOnly(apiVersion, kind) && kind == "Template":
		res.warnf("%s: %s is an OpenShift-only kind with no equivalent on Kubernetes: dropped (render it with 'oc process' and convert the result)", ref, apiVersion)
		return nil, nil
	case isOpenShiftOnly(apiVersion, kind):
		res.warnf("%s: %s is an OpenShift-only kind with no equivalent on Kubernetes: dropped", ref, apiVersion)
		return nil, nil
	default:
		res.warnf("%s: not a DeploymentConfig: passed through unchanged", ref)
		return obj, nil
	}
}

// isOpenShiftOnly reports whether an object is of an OpenShift API (Route,
// BuildConfig, ImageStream, Template...): its group ends in openshift.io, or
// it is under the legacy v1 apiVersion with a kind core Kubernetes lacks.
func isOpenShiftOnly(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	if strings.HasSuffix(gv.Group, openShiftGroupSuffix) {
		return true
	}
	if gv.Group != "" || gv.Version != "v1" {
		return false
	}
	return !clientgoscheme.Scheme.Recognizes(gv.WithKind(kind))
}

// objectRef names an object in warnings, e.g. "deploymentconfig/web".
func objectRef(obj map[string]any) string {
	name := "<unnamed>"
	if meta, ok := obj["metadata"].(map[string]any); ok && str(meta, "name") != "" {
		name = str(meta, "name")
	}
	kind := strings.ToLower(str(obj, "kind"))
	if kind == "" {
		kind = "object"
	}
	return kind + "/" + name
}

func (r *Result) warnf(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// jsonKind names the kind of a decoded JSON value for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// str returns the string at key, or "" when it is absent or not a string.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// child returns the map at key, or nil.
func child(m map[string]any, key string) map[string]any {
	if m == nil {
		return nil
	}
	c, _ := m[key].(map[string]any)
	return c
}
