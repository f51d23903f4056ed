package playground

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeManifests(t *testing.T) {
	tests := []struct {
		name      string
		data      string
		wantNames []string
		wantErr   string
	}{
		{name: "empty", data: ""},
		{
			name:      "documents, empty ones skipped",
			data:      "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# only a comment\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n",
			wantNames: []string{"a", "b"},
		},
		{
			name:      "JSON",
			data:      `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}`,
			wantNames: []string{"j"},
		},
		{name: "no kind", data: "apiVersion: v1\nmetadata: {name: a}\n", wantErr: "document 1: apiVersion, kind and metadata.name are required"},
		{name: "bad YAML", data: "apiVersion: v1\nkind: [\n", wantErr: "document 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := DecodeManifests([]byte(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range objs {
				names = append(names, o.GetName())
			}
			if strings.Join(names, ",") != strings.Join(tt.wantNames, ",") {
				t.Errorf("got %v, want %v", names, tt.wantNames)
			}
		})
	}
}

func TestParseKustomization(t *testing.T) {
	tests := []struct {
		name          string
		data          string
		wantResources string
		wantNamespace string
		wantErr       string
	}{
		{
			name:          "resources",
			data:          "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- a.yaml\n- b.yaml\n",
			wantResources: "a.yaml,b.yaml",
		},
		{name: "namespace", data: "namespace: demo\nresources: [a.yaml]\n", wantResources: "a.yaml", wantNamespace: "demo"},
		{name: "patches are refused", data: "resources: [a.yaml]\npatches: []\n", wantErr: `unsupported kustomization field "patches"`},
		{name: "nothing listed", data: "kind: Kustomization\n", wantErr: "no resources"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := parseKustomization([]byte(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(k.Resources, ","); got != tt.wantResources || k.Namespace != tt.wantNamespace {
				t.Errorf("got resources %s, namespace %q; want %s, %q", got, k.Namespace, tt.wantResources, tt.wantNamespace)
			}
		})
	}
}

// The samples the playground applies are what it can read.
func TestSamplesKustomization(t *testing.T) {
	ns, files, err := KustomizationFiles("../../../config/samples")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := ReadManifests(files...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"hello", "recreate"}
	if ns != "" || len(objs) != len(want) {
		t.Fatalf("samples: namespace %q, %d objects; want the DeploymentConfigs %v", ns, len(objs), want)
	}
	for i, obj := range objs {
		if obj.GetKind() != "DeploymentConfig" || obj.GetName() != want[i] || obj.GetAPIVersion() != "apps.deployconfig.io/v1" {
			t.Errorf("sample %d is %s %s/%s, want apps.deployconfig.io/v1 DeploymentConfig %s", i, obj.GetAPIVersion(), obj.GetKind(), obj.GetName(), want[i])
		}
	}
}

func TestKustomizationFilesRefusesDirectories(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "base"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: [base]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := KustomizationFiles(dir); err == nil || !strings.Contains(err.Error(), `"base" is not a manifest file`) {
		t.Fatalf("error %v, want one about base", err)
	}
}

func TestCheckCRDs(t *testing.T) {
	crds, err := ReadManifests("../../../config/crd/bases/apps.deployconfig.io_deploymentconfigs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkCRDs(crds); err != nil {
		t.Errorf("the generated CRD: %v", err)
	}
	other, err := DecodeManifests([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkCRDs(other); err == nil {
		t.Error("a ConfigMap passed as a CRD")
	}
}
