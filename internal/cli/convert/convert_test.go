package convert

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// corpusDir is the corpus of DeploymentConfig manifests the conversion is
// checked against, and the directory of its golden files: the project's own
// (test/testdata/dc-corpus), or the one DC_COMPAT_DIR names (`make
// test-compat`), whose golden files are testdata/compat.
func corpusDir(t *testing.T) (dir, golden string) {
	t.Helper()
	dir, golden = filepath.Join("..", "..", "..", "test", "testdata", "dc-corpus"), filepath.Join("testdata", "corpus")
	if env := os.Getenv("DC_COMPAT_DIR"); env != "" {
		dir, golden = env, filepath.Join("testdata", "compat")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("corpus not found at %s: %v", dir, err)
	}
	return dir, golden
}

// corpusFiles lists the manifests of a corpus, relative to its root.
func corpusFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := filepath.Ext(path)
		if !d.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	if len(files) == 0 {
		t.Fatalf("no manifests under %s", dir)
	}
	return files
}

// TestConvertCorpus converts every manifest of the corpus and compares the
// output and warnings with golden files.
func TestConvertCorpus(t *testing.T) {
	root, goldenDir := corpusDir(t)
	for _, rel := range corpusFiles(t, root) {
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, rel))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Convert(data, Options{})
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			checkConverted(t, res)
			out, err := res.YAML()
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join(goldenDir, strings.ReplaceAll(rel, string(filepath.Separator), "__")+".golden")
			compareGolden(t, golden, renderResult(out, res.Warnings))
		})
	}
}

// checkConverted asserts what must hold for every converted document.
func checkConverted(t *testing.T, res *Result) {
	t.Helper()
	for _, doc := range res.Documents {
		for _, obj := range objectsOf(doc) {
			if str(obj, "kind") != "DeploymentConfig" {
				continue
			}
			if got := str(obj, "apiVersion"); got != "apps.deployconfig.io/v1" {
				t.Errorf("apiVersion = %q", got)
			}
			if _, ok := obj["status"]; ok {
				t.Errorf("%s: status was kept", objectRef(obj))
			}
			meta := child(obj, "metadata")
			for _, key := range []string{"resourceVersion", "uid", "selfLink", "creationTimestamp", "generation", "managedFields"} {
				if _, ok := meta[key]; ok {
					t.Errorf("%s: metadata.%s was kept", objectRef(obj), key)
				}
			}
		}
	}
}

func objectsOf(doc map[string]any) []map[string]any {
	if !isList(doc) {
		return []map[string]any{doc}
	}
	var out []map[string]any
	items, _ := doc["items"].([]any)
	for _, item := range items {
		out = append(out, asMap(item))
	}
	return out
}

func renderResult(out []byte, warnings []string) string {
	var b strings.Builder
	b.WriteString("# warnings\n")
	for _, w := range warnings {
		b.WriteString("# " + w + "\n")
	}
	b.WriteString("# output\n")
	b.Write(out)
	return b.String()
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestConvert covers each conversion rule on small manifests.
func TestConvert(t *testing.T) {
	registryHost, _ := ParseImageRegistry("registry.example.com:5000")
	registryPath, _ := ParseImageRegistry("registry.example.com/team")
	cases := []struct {
		name     string
		in       string
		opts     Options
		want     map[string]any // dotted paths into the first output object
		absent   []string
		warnings []string // substrings, one per expected warning, in order
		docs     int
	}{{
		name: "apiVersion, server metadata and status",
		in: dc(`  namespace: ns
  uid: abc
  resourceVersion: "5"
  selfLink: /x
  generation: 3
  creationTimestamp: "2020-01-01T00:00:00Z"
  managedFields: [{manager: x}]
  annotations:
    deploy.openshift.io/deployer-pod.ignore: "true"
    kubectl.kubernetes.io/last-applied-configuration: "{}"
`, "", "status:\n  latestVersion: 3\n"),
		want: map[string]any{
			"apiVersion":         "apps.deployconfig.io/v1",
			"metadata.namespace": "ns",
			"metadata.annotations.deployconfig.io/deployer-pod.ignore": "true",
		},
		absent: []string{"status", "metadata.uid", "metadata.resourceVersion", "metadata.selfLink", "metadata.generation",
			"metadata.creationTimestamp", "metadata.managedFields", "metadata.annotations.deploy.openshift.io/deployer-pod.ignore",
			"metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"},
		docs: 1,
	}, {
		name:     "owner references are dropped",
		in:       dc("  ownerReferences: [{apiVersion: v1, kind: X, name: y, uid: z}]\n", "", ""),
		absent:   []string{"metadata.ownerReferences"},
		warnings: []string{"metadata.ownerReferences name objects of the old cluster"},
		docs:     1,
	}, {
		name: "ImageStreamTag trigger kept, not automatic",
		in: dc("", `  triggers:
  - type: ImageChange
    imageChangeParams:
      automatic: true
      containerNames: [web]
      from: {kind: ImageStreamTag, name: "web:latest", namespace: openshift}
`, ""),
		want:     map[string]any{"spec.triggers[0].imageChangeParams.automatic": false, "spec.triggers[0].imageChangeParams.from.kind": "ImageStreamTag"},
		warnings: []string{"ImageChange trigger on ImageStreamTag openshift/web:latest kept with automatic=false"},
		docs:     1,
	}, {
		name: "ImageStreamTag trigger mapped with HOST",
		in: dc("  namespace: ns\n", `  triggers:
  - type: ImageChange
    imageChangeParams:
      automatic: true
      containerNames: [web]
      from: {kind: ImageStreamTag, name: "web:1"}
`, ""),
		opts: Options{ImageRegistry: registryHost},
		want: map[string]any{
			"spec.triggers[0].imageChangeParams.automatic": true,
			"spec.triggers[0].imageChangeParams.from.kind": "DockerImage",
			"spec.triggers[0].imageChangeParams.from.name": "registry.example.com:5000/ns/web:1",
		},
		absent:   []string{"spec.triggers[0].imageChangeParams.from.namespace"},
		warnings: []string{"now watches the DockerImage registry.example.com:5000/ns/web:1"},
		docs:     1,
	}, {
		// The image OpenShift last triggered is in the old cluster's
		// registry: kept, it would start rollout #1 with that image before
		// the trigger resolved the new registry's tag.
		name: "a mapped trigger forgets the old cluster's last triggered image",
		in: dc("  namespace: ns\n", `  triggers:
  - type: ImageChange
    imageChangeParams:
      automatic: true
      containerNames: [web]
      from: {kind: ImageStreamTag, name: "web:1"}
      lastTriggeredImage: image-registry.openshift-image-registry.svc:5000/ns/web@sha256:6f2b4c29d0e1b2b0a8e6b3c0f1a7d7c1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7
`, ""),
		opts:     Options{ImageRegistry: registryHost},
		want:     map[string]any{"spec.triggers[0].imageChangeParams.from.name": "registry.example.com:5000/ns/web:1"},
		absent:   []string{"spec.triggers[0].imageChangeParams.lastTriggeredImage"},
		warnings: []string{"now watches the DockerImage registry.example.com:5000/ns/web:1"},
		docs:     1,
	}, {
		name: "ImageStreamTag trigger mapped with HOST/PATH ignores the namespace",
		in: dc("", `  triggers:
  - type: ImageChange
    imageChangeParams:
      containerNames: [web]
      from: {kind: ImageStreamTag, name: "web", namespace: other}
`, ""),
		opts:     Options{ImageRegistry: registryPath},
		want:     map[string]any{"spec.triggers[0].imageChangeParams.from.name": "registry.example.com/team/web:latest"},
		warnings: []string{"now watches"},
		docs:     1,
	}, {
		name: "HOST without a namespace cannot map",
		in: dc("", `  triggers:
  - type: ImageChange
    imageChangeParams:
      automatic: false
      containerNames: [web]
      from: {kind: ImageStreamTag, name: "web:1"}
`, ""),
		opts:     Options{ImageRegistry: registryHost},
		want:     map[string]any{"spec.triggers[0].imageChangeParams.from.kind": "ImageStreamTag"},
		warnings: []string{"is never resolved: there are no ImageStreams (its namespace is unknown"},
		docs:     1,
	}, {
		name: "tagImages hook into an ImageStreamTag",
		in: dc("", `  strategy:
    type: Recreate
    recreateParams:
      post:
        failurePolicy: Abort
        tagImages:
        - containerName: web
          to: {kind: ImageStreamTag, name: "web:deployed"}
`, ""),
		absent:   []string{"spec.strategy.recreateParams.post"},
		warnings: []string{"spec.strategy.recreateParams.post.tagImages[0]: dropped: it tags into ImageStreamTag web:deployed", "spec.strategy.recreateParams.post: the hook had only tagImages into ImageStreamTags and was dropped"},
		docs:     1,
	}, {
		name: "tagImages hook mapped",
		in: dc("", `  strategy:
    type: Recreate
    recreateParams:
      post:
        failurePolicy: Abort
        tagImages:
        - containerName: web
          to: {kind: ImageStreamTag, name: "web:deployed"}
`, ""),
		opts:     Options{ImageRegistry: registryPath},
		want:     map[string]any{"spec.strategy.recreateParams.post.tagImages[0].to.name": "registry.example.com/team/web:deployed", "spec.strategy.recreateParams.post.tagImages[0].to.kind": "DockerImage"},
		warnings: []string{"tags into the DockerImage registry.example.com/team/web:deployed"},
		docs:     1,
	}, {
		name: "unknown fields are dropped, nulls removed",
		in: dc("", `  strategy:
    type: Rolling
    rollingParams:
      pre:
        failurePolicy: Abort
        execNewPod:
          command: [/bin/sh, -c]
          args: [echo]
  foo: bar
`, "status:\n"),
		absent: []string{"spec.strategy.rollingParams.pre.execNewPod.args", "spec.foo", "status"},
		warnings: []string{
			"spec.foo is not a field of apps.deployconfig.io/v1: dropped",
			"spec.strategy.rollingParams.pre.execNewPod.args is not a field of apps.deployconfig.io/v1: dropped",
		},
		docs: 1,
	}, {
		name: "custom deployer written for OpenShift",
		in: dc("", `  strategy:
    type: Custom
    customParams:
      image: openshift/origin-deployer
      command: [/bin/sh, -c, "openshift-deploy --until=50%"]
`, ""),
		warnings: []string{"is OpenShift's deployer", "runs openshift-deploy"},
		docs:     1,
	}, {
		name: "legacy v1 List keeps Kubernetes objects and drops OpenShift ones",
		in: `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: web}
- apiVersion: route.openshift.io/v1
  kind: Route
  metadata: {name: web}
- apiVersion: v1
  kind: BuildConfig
  metadata: {name: web}
- apiVersion: v1
  kind: DeploymentConfig
  metadata: {name: web}
  spec:
    template:
      metadata: {labels: {app: web}}
      spec:
        containers: [{name: web, image: nginx}]
`,
		want: map[string]any{"kind": "List", "items[0].kind": "Service", "items[1].kind": "DeploymentConfig", "items[1].apiVersion": "apps.deployconfig.io/v1"},
		warnings: []string{
			"service/web: not a DeploymentConfig: passed through unchanged",
			"route/web: route.openshift.io/v1 is an OpenShift-only kind",
			"buildconfig/web: v1 is an OpenShift-only kind",
		},
		docs: 1,
	}, {
		name: "multi-document YAML",
		in: dc("", "", "") + "---\n" + `apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
apiVersion: template.openshift.io/v1
kind: Template
metadata: {name: t}
`,
		warnings: []string{"configmap/c: not a DeploymentConfig", "template/t: template.openshift.io/v1 is an OpenShift-only kind"},
		docs:     2,
	}, {
		name:     "image-less container",
		in:       strings.Replace(dc("", "", ""), "image: nginx", `image: " "`, 1),
		warnings: []string{`container "web" has no image`},
		docs:     1,
	}, {
		name: "already ours",
		in:   strings.Replace(dc("", "", ""), "apps.openshift.io/v1", "apps.deployconfig.io/v1", 1),
		want: map[string]any{"apiVersion": "apps.deployconfig.io/v1"},
		docs: 1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Convert([]byte(tc.in), tc.opts)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if len(res.Documents) != tc.docs {
				t.Fatalf("got %d documents, want %d", len(res.Documents), tc.docs)
			}
			first := res.Documents[0]
			for path, want := range tc.want {
				got, ok := lookup(first, path)
				if !ok || !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %#v (present %v), want %#v", path, got, ok, want)
				}
			}
			for _, path := range tc.absent {
				if got, ok := lookup(first, path); ok {
					t.Errorf("%s = %#v, want it absent", path, got)
				}
			}
			if len(res.Warnings) != len(tc.warnings) {
				t.Fatalf("warnings = %q, want %d matching %q", res.Warnings, len(tc.warnings), tc.warnings)
			}
			for i, want := range tc.warnings {
				if !strings.Contains(res.Warnings[i], want) {
					t.Errorf("warning %d = %q, want it to contain %q", i, res.Warnings[i], want)
				}
			}
		})
	}
}

func TestConvertErrors(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"not YAML", "apiVersion: v1\nkind: [", "document 1"},
		{"no kind", "apiVersion: v1\nmetadata: {name: x}\n", "object/x: the object has no kind"},
		{"no spec", "apiVersion: v1\nkind: DeploymentConfig\nmetadata: {name: x}\n", "deploymentconfig/x: spec is required"},
		{"wrong type", strings.Replace(dc("", "", ""), "replicas: 1", `replicas: "three"`, 1), "deploymentconfig/web: json: cannot unmarshal string"},
		{"bad list item", "apiVersion: v1\nkind: List\nitems: [3]\n", "items[0]: expected an object"},
		{"not an object", "- a\n- b\n", "document 1: expected a Kubernetes object (a mapping with apiVersion and kind), got a list"},
		{"second document", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\nplain text\n", "document 2: expected a Kubernetes object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Convert([]byte(tc.in), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseImageRegistry(t *testing.T) {
	cases := []struct {
		in, name, namespace, want string
		ok                        bool
		err                       string
	}{
		{in: "reg.io", name: "app:1", namespace: "ns", want: "reg.io/ns/app:1", ok: true},
		{in: "reg.io:5000", name: "app", namespace: "ns", want: "reg.io:5000/ns/app:latest", ok: true},
		{in: "reg.io", name: "app:1", namespace: "", ok: false},
		{in: "reg.io/a/b", name: "app@sha256:abc", namespace: "", want: "reg.io/a/b/app@sha256:abc", ok: true},
		{in: "", err: "got an empty value"},
		{in: "https://reg.io", err: "without a scheme"},
		{in: "reg.io/", err: `got "reg.io/"`},
		{in: "reg.io/app:1", err: "without a tag"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			r, err := ParseImageRegistry(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, ok := r.Reference(tc.name, tc.namespace)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Reference = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
			if r.String() != tc.in {
				t.Errorf("String = %q", r.String())
			}
		})
	}
}

func TestResultRendering(t *testing.T) {
	res, err := Convert([]byte(dc("", "", "")+"---\n"+dc("", "", "")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	y, err := res.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(y), "---\n") != 1 {
		t.Errorf("YAML of two documents:\n%s", y)
	}
	j, err := res.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var list map[string]any
	if err := yaml.Unmarshal(j, &list); err != nil || list["kind"] != "List" || len(list["items"].([]any)) != 2 {
		t.Errorf("JSON of two documents is not a List of two: %s (%v)", j, err)
	}
}

// dc returns an OpenShift DeploymentConfig manifest with extra lines under
// metadata and spec and after spec.
func dc(metadata, spec, after string) string {
	return `apiVersion: apps.openshift.io/v1
kind: DeploymentConfig
metadata:
  name: web
` + metadata + `spec:
  replicas: 1
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
` + spec + after
}

// lookup returns the value at a dotted path with [i] list indexes. Map keys
// that contain dots (annotations) are matched greedily.
func lookup(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for path != "" {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		key, rest, found := matchKey(m, path)
		if !found {
			return nil, false
		}
		cur, path = m[key], rest
		for strings.HasPrefix(path, "[") {
			end := strings.Index(path, "]")
			var i int
			for _, c := range path[1:end] {
				i = i*10 + int(c-'0')
			}
			list, ok := cur.([]any)
			if !ok || i >= len(list) {
				return nil, false
			}
			cur, path = list[i], path[end+1:]
		}
		path = strings.TrimPrefix(path, ".")
	}
	return cur, true
}

// matchKey finds the longest key of m that path starts with, followed by
// the end, a dot or an index.
func matchKey(m map[string]any, path string) (string, string, bool) {
	best := ""
	for k := range m {
		if strings.HasPrefix(path, k) && len(k) > len(best) {
			rest := path[len(k):]
			if rest == "" || rest[0] == '.' || rest[0] == '[' {
				best = k
			}
		}
	}
	return best, path[len(best):], best != ""
}
