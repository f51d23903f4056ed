package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// FieldManager is the server-side apply field manager of what the
// playground applies.
const FieldManager = "dc-local"

// mappingTimeout bounds how long an applied object's kind may stay unknown
// to the API server, e.g. right after its CRD was established.
const mappingTimeout = 30 * time.Second

// Applier server-side applies manifests to a cluster, like `kubectl apply
// --server-side --force-conflicts`.
type Applier struct {
	dynamic dynamic.Interface
	mapper  meta.ResettableRESTMapper
}

// NewApplier makes an Applier for the cluster cfg points at.
func NewApplier(cfg *rest.Config) (*Applier, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making a dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making a discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return &Applier{dynamic: dyn, mapper: mapper}, nil
}

// Apply applies objs in order; namespaced objects without a namespace go to
// namespace. It returns the objects as the API server stored them.
func (a *Applier) Apply(ctx context.Context, namespace string, objs ...*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	applied := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		out, err := a.applyOne(ctx, namespace, obj)
		if err != nil {
			return applied, err
		}
		applied = append(applied, out)
	}
	return applied, nil
}

// ApplyFiles applies every object of the YAML files.
func (a *Applier) ApplyFiles(ctx context.Context, namespace string, files ...string) ([]*unstructured.Unstructured, error) {
	objs, err := ReadManifests(files...)
	if err != nil {
		return nil, err
	}
	return a.Apply(ctx, namespace, objs...)
}

// Get reads obj back from the cluster; namespaced objects without a
// namespace are looked for in namespace.
func (a *Applier) Get(ctx context.Context, namespace string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := a.resource(ctx, namespace, obj)
	if err != nil {
		return nil, err
	}
	return ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
}

func (a *Applier) applyOne(ctx context.Context, namespace string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := a.resource(ctx, namespace, obj)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", describe(obj), err)
	}
	out, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager: FieldManager,
		Force:        new(true),
	})
	if err != nil {
		return nil, fmt.Errorf("applying %s: %w", describe(obj), err)
	}
	return out, nil
}

// resource finds the API resource of obj, waiting a little for kinds that
// the API server does not serve yet.
func (a *Applier) resource(ctx context.Context, namespace string, obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	var mapping *meta.RESTMapping
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, mappingTimeout, true, func(context.Context) (bool, error) {
		var err error
		mapping, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			a.mapper.Reset()
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("finding the API resource of %s: %w", describe(obj), err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return a.dynamic.Resource(mapping.Resource), nil
	}
	ns := obj.GetNamespace()
	if ns == "" {
		ns = namespace
	}
	return a.dynamic.Resource(mapping.Resource).Namespace(ns), nil
}

// describe names an object in messages, e.g. "DeploymentConfig hello".
func describe(obj *unstructured.Unstructured) string {
	return obj.GetKind() + " " + obj.GetName()
}

// ReadManifests decodes every object of the YAML (or JSON) files, skipping
// empty documents.
func ReadManifests(files ...string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading manifests: %w", err)
		}
		decoded, err := DecodeManifests(data)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		objs = append(objs, decoded...)
	}
	return objs, nil
}

// DecodeManifests decodes a stream of YAML documents or JSON objects.
func DecodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	docs, err := decodeDocuments(data)
	if err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, 0, len(docs))
	for i, m := range docs {
		obj := &unstructured.Unstructured{Object: m}
		if obj.GetKind() == "" || obj.GetAPIVersion() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("document %d: apiVersion, kind and metadata.name are required", i+1)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// decodeDocuments decodes a stream of YAML documents or JSON objects into
// maps, skipping empty documents.
func decodeDocuments(data []byte) ([]map[string]any, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs []map[string]any
	for i := 1; ; i++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(m) > 0 {
			docs = append(docs, m)
		}
	}
}

// kustomization is the subset of kustomize's kustomization.yaml that the
// playground understands: a list of manifest files and a namespace.
type kustomization struct {
	Resources []string `json:"resources"`
	Namespace string   `json:"namespace"`
}

// KustomizationFiles reads dir/kustomization.yaml and returns the namespace
// it sets and the paths of the files it lists. It refuses kustomize
// features other than plain resource files and a namespace, rather than
// apply something else than `kubectl apply -k` would.
func KustomizationFiles(dir string) (namespace string, files []string, err error) {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return "", nil, fmt.Errorf("reading the kustomization: %w", err)
	}
	k, err := parseKustomization(data)
	if err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, "kustomization.yaml"), err)
	}
	for _, r := range k.Resources {
		path := filepath.Join(dir, r)
		if info, err := os.Stat(path); err != nil || info.IsDir() {
			return "", nil, fmt.Errorf("kustomization %s: resource %q is not a manifest file", dir, r)
		}
		files = append(files, path)
	}
	return k.Namespace, files, nil
}

// parseKustomization decodes a kustomization.yaml and checks that it uses
// only the fields the playground supports.
func parseKustomization(data []byte) (kustomization, error) {
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return kustomization{}, err
	}
	supported := []string{"apiVersion", "kind", "resources", "namespace"}
	for key := range raw {
		if !slices.Contains(supported, key) {
			return kustomization{}, fmt.Errorf("unsupported kustomization field %q (only resources and namespace are)", key)
		}
	}
	var k kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return kustomization{}, err
	}
	if len(k.Resources) == 0 {
		return kustomization{}, errors.New("no resources listed")
	}
	return k, nil
}

// WaitExist waits until every object exists in the cluster.
func (a *Applier) WaitExist(ctx context.Context, namespace string, timeout time.Duration, objs ...*unstructured.Unstructured) error {
	for _, obj := range objs {
		var last error
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			_, last = a.Get(ctx, namespace, obj)
			return last == nil, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", describe(obj), errors.Join(err, last))
		}
	}
	return nil
}
