package convert

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	sjson "sigs.k8s.io/json"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// FuzzConvert feeds arbitrary manifests (and --image-registry values) to
// `kubectl dc convert`. It must never panic, and whatever it converts must
// be what the command promises: no OpenShift DeploymentConfig left, every
// one in apps.deployconfig.io/v1 without the old cluster's fields, decoding
// strictly (kubectl apply's strict validation refuses unknown fields), the
// output renders as YAML and JSON, and converting the output again changes
// no DeploymentConfig.
func FuzzConvert(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed, "")
		f.Add(seed, "registry.example.com/team")
	}
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: DeploymentConfig\n  metadata: {name: a, namespace: ns}\n  spec: {template: {}}\n"), "registry.example.com:5000")
	f.Add([]byte(`{"apiVersion":"apps.openshift.io/v1","kind":"DeploymentConfig","metadata":{"name":"x"},"spec":{"triggers":[{"type":"ImageChange","imageChangeParams":{"from":{"kind":"ImageStreamTag","name":"x:1"}}}],"template":null}}`), "")
	f.Add([]byte("- 1\n- 2\n"), "")
	// Argo Rollouts manifests, from kubectl dc convert's golden tests.
	argo, _ := filepath.Glob("../testdata/convert/argo-*.yaml")
	for _, file := range argo {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "")
	}
	f.Add([]byte("apiVersion: apps.openshift.io/v1\nkind: DeploymentConfig\nmetadata: {name: x}\nspec:\n  template: {}\n  unknown.dotted: 1\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, registry string) {
		opts := Options{}
		// A flag value comes from a terminal as text; the output is
		// rendered as YAML, which has no room for invalid UTF-8.
		if r, err := ParseImageRegistry(registry); err == nil && utf8.ValidString(registry) {
			opts.ImageRegistry = r
		}
		res, err := Convert(data, opts)
		if err != nil {
			return
		}
		checkFuzzed(t, res)
		out, err := res.YAML()
		if err != nil {
			t.Fatalf("YAML of a converted result: %v", err)
		}
		if _, err := res.JSON(); err != nil {
			t.Fatalf("JSON of a converted result: %v", err)
		}
		again, err := Convert(out, opts)
		if err != nil {
			t.Fatalf("converting the output again: %v\noutput:\n%s", err, out)
		}
		if first, second := deploymentConfigsJSON(t, res), deploymentConfigsJSON(t, again); !bytes.Equal(first, second) {
			t.Fatalf("converting the output again changed it:\nfirst:  %s\nsecond: %s", first, second)
		}
	})
}

// fuzzSeeds are the manifests of the corpus (see corpusDir): what users
// write, for the fuzzer to start from.
func fuzzSeeds(f *testing.F) [][]byte {
	f.Helper()
	dir := filepath.Join("..", "..", "..", "test", "testdata", "dc-corpus")
	if env := os.Getenv("DC_COMPAT_DIR"); env != "" {
		dir = env
	}
	var seeds [][]byte
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			seeds = append(seeds, data)
		}
		return nil
	})
	if err != nil {
		f.Fatalf("reading the corpus at %s: %v", dir, err)
	}
	return seeds
}

// checkFuzzed asserts what every converted DeploymentConfig must be.
func checkFuzzed(t *testing.T, res *Result) {
	t.Helper()
	for _, doc := range res.Documents {
		for _, obj := range objectsOf(doc) {
			if obj == nil || str(obj, "kind") != "DeploymentConfig" {
				continue
			}
			switch str(obj, "apiVersion") {
			case "apps.openshift.io/v1", "v1":
				t.Fatalf("%s: an OpenShift DeploymentConfig was left unconverted", objectRef(obj))
			case dcv1.GroupVersion.String():
			default:
				// Another API's kind of the same name passes through.
				continue
			}
			if _, ok := obj["status"]; ok {
				t.Fatalf("%s: status was kept", objectRef(obj))
			}
			for _, key := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "ownerReferences"} {
				if _, ok := child(obj, "metadata")[key]; ok {
					t.Fatalf("%s: metadata.%s was kept", objectRef(obj), key)
				}
			}
			data, err := json.Marshal(obj)
			if err != nil {
				t.Fatalf("%s: %v", objectRef(obj), err)
			}
			strict, err := sjson.UnmarshalStrict(data, &dcv1.DeploymentConfig{}, sjson.DisallowUnknownFields)
			if err != nil || len(strict) > 0 {
				t.Fatalf("%s does not decode strictly as %s: %v %v\n%s", objectRef(obj), dcv1.GroupVersion, err, strict, data)
			}
		}
	}
}

// deploymentConfigsJSON renders the DeploymentConfigs of a result, in order.
func deploymentConfigsJSON(t *testing.T, res *Result) []byte {
	t.Helper()
	var dcs []map[string]any
	for _, doc := range res.Documents {
		for _, obj := range objectsOf(doc) {
			if obj != nil && str(obj, "kind") == "DeploymentConfig" {
				dcs = append(dcs, obj)
			}
		}
	}
	data, err := json.Marshal(dcs)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
