package bench

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/cli/convert"
)

// The footprint workload cycles the pod templates of a corpus of
// DeploymentConfig manifests, converted as `kubectl dc convert` does, with
// their containers, env, probes and volumes.

// compatDir is the corpus whose pod templates the footprint workload
// cycles: DC_COMPAT_DIR, or the project's own corpus in the checkout.
func compatDir(root string) string {
	if dir := os.Getenv("DC_COMPAT_DIR"); dir != "" {
		return dir
	}
	return filepath.Join(root, "test", "testdata", "dc-corpus")
}

// corpusTemplates reads the pod templates of every DeploymentConfig under
// dir, in file order. A container without an image (one an ImageChange
// trigger would fill in) gets the benchmark's image: kwok runs no
// container, and deployconfig never creates an RC with an empty image.
func corpusTemplates(dir string) ([]corev1.PodTemplateSpec, error) {
	files, err := manifestFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []corev1.PodTemplateSpec
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading the corpus: %w", err)
		}
		res, err := convert.Convert(data, convert.Options{})
		if err != nil {
			// Files that are not DeploymentConfigs the converter takes
			// (an ImageStream, a Deployment) have no template to give.
			continue
		}
		for _, doc := range res.Documents {
			ts, err := templatesOf(doc)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			out = append(out, ts...)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no DeploymentConfig templates under %s (set DC_COMPAT_DIR)", dir)
	}
	return out, nil
}

// manifestFiles lists the YAML and JSON files under dir, sorted.
func manifestFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the corpus at %s: %w", dir, err)
	}
	slices.Sort(files)
	return files, nil
}

// templatesOf returns the pod templates of the DeploymentConfigs in one
// converted document (a List's items too).
func templatesOf(doc map[string]any) ([]corev1.PodTemplateSpec, error) {
	objs := []any{doc}
	if doc["kind"] == "List" {
		objs, _ = doc["items"].([]any)
	}
	var out []corev1.PodTemplateSpec
	for _, obj := range objs {
		m, _ := obj.(map[string]any)
		if m["kind"] != "DeploymentConfig" || m["apiVersion"] != dcv1.GroupVersion.String() {
			continue
		}
		dc := &dcv1.DeploymentConfig{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, dc); err != nil {
			return nil, fmt.Errorf("decoding DeploymentConfig %v: %w", m["metadata"], err)
		}
		if dc.Spec.Template == nil || len(dc.Spec.Template.Spec.Containers) == 0 {
			continue
		}
		t := *dc.Spec.Template.DeepCopy()
		for i := range t.Spec.Containers {
			if c := &t.Spec.Containers[i]; c.Image == "" || c.Image == " " {
				c.Image = appImage
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// withTemplate gives dc the corpus template's pod spec, and its labels and
// annotations where the benchmark's own (the selector's) do not have them.
func withTemplate(dc *dcv1.DeploymentConfig, t corev1.PodTemplateSpec) {
	tmpl := dc.Spec.Template
	tmpl.Spec = *t.Spec.DeepCopy()
	for k, v := range t.Labels {
		if _, ours := tmpl.Labels[k]; !ours {
			tmpl.Labels[k] = v
		}
	}
	for k, v := range t.Annotations {
		if _, ours := tmpl.Annotations[k]; !ours {
			tmpl.Annotations[k] = v
		}
	}
}

// referenced lists the ConfigMaps and Secrets a pod spec names (volumes,
// projected sources, env and envFrom), and its service account, which the
// footprint creates (empty) so that pods are not held or refused for them. PersistentVolumeClaims are not made:
// kwok has no storage, and their pods stay Pending, unscheduled, which
// changes nothing in dc-controller (it does not cache application pods).
func referenced(spec corev1.PodSpec) (configMaps, secrets, serviceAccounts []string) {
	add := func(list *[]string, name string) {
		if name != "" && !slices.Contains(*list, name) {
			*list = append(*list, name)
		}
	}
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			add(&configMaps, v.ConfigMap.Name)
		}
		if v.Secret != nil {
			add(&secrets, v.Secret.SecretName)
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					add(&configMaps, s.ConfigMap.Name)
				}
				if s.Secret != nil {
					add(&secrets, s.Secret.Name)
				}
			}
		}
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				add(&configMaps, e.ConfigMapRef.Name)
			}
			if e.SecretRef != nil {
				add(&secrets, e.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add(&configMaps, r.Name)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add(&secrets, r.Name)
			}
		}
	}
	for _, s := range spec.ImagePullSecrets {
		add(&secrets, s.Name)
	}
	add(&serviceAccounts, spec.ServiceAccountName)
	return configMaps, secrets, serviceAccounts
}
