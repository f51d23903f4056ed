package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/cli"
	"github.com/deployconfig/deployconfig/internal/cli/convert"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// ownCorpus is the project's corpus of DeploymentConfig manifests: every
// strategy, hooks, triggers, Lists, the legacy v1 form, odd and missing
// fields.
var ownCorpus = filepath.Join("..", "..", "test", "testdata", "dc-corpus")

// compatCorpusDir is the corpus of manifests to check: the project's own,
// or the one DC_COMPAT_DIR names (`make test-compat`).
func compatCorpusDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("DC_COMPAT_DIR")
	if dir == "" {
		dir = ownCorpus
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("corpus not found at %s: %v", dir, err)
	}
	return dir
}

// compatManifests lists the corpus's manifests, relative to its root.
func compatManifests(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
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

// convertedDCs returns the DeploymentConfigs of a conversion, Lists
// flattened.
func convertedDCs(res *convert.Result) []map[string]any {
	var dcs []map[string]any
	for _, doc := range res.Documents {
		objs := []any{doc}
		if doc["kind"] == "List" {
			objs, _ = doc["items"].([]any)
		}
		for _, obj := range objs {
			m, _ := obj.(map[string]any)
			if m["kind"] == "DeploymentConfig" && m["apiVersion"] == dcv1.GroupVersion.String() {
				dcs = append(dcs, m)
			}
		}
	}
	return dcs
}

// TestCompatCorpusIsAccepted converts every DeploymentConfig of the corpus,
// creates it with kubectl as a user would (strict field validation), and
// checks that the API server kept what was sent: the effective
// DeploymentConfig (every default applied) of what the server returns is
// the effective DeploymentConfig of the manifest.
func TestCompatCorpusIsAccepted(t *testing.T) {
	dir := compatCorpusDir(t)
	total := 0
	for _, rel := range compatManifests(t, dir) {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		res, err := convert.Convert(data, convert.Options{})
		if err != nil {
			t.Errorf("%s: convert: %v", rel, err)
			continue
		}
		dcs := convertedDCs(res)
		total += len(dcs)
		if len(dcs) == 0 {
			continue
		}
		t.Run(rel, func(t *testing.T) {
			ns := newNamespace(t)
			for _, dc := range dcs {
				checkAccepted(t, ns, dc)
			}
		})
	}
	if total < 20 {
		t.Errorf("only %d DeploymentConfigs in the corpus were converted", total)
	}
}

// checkAccepted creates one converted DeploymentConfig in ns and compares
// what the server kept with what was sent.
func checkAccepted(t *testing.T, ns string, manifest map[string]any) {
	t.Helper()
	meta := manifest["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	// Manifests may name their own namespace; each file gets a fresh one.
	meta["namespace"] = ns
	data, err := yaml.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t, time.Minute)
	if stdout, stderr, err := kubectlRun(ctx, string(data), "create", "-f", "-"); err != nil {
		t.Errorf("deploymentconfig %s was refused: %v\n%s%s\n%s", name, err, stdout, stderr, data)
		return
	}
	sent := effective(t, manifest)
	got := &dcv1.DeploymentConfig{}
	if err := cluster.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got); err != nil {
		t.Fatalf("get deploymentconfig %s: %v", name, err)
	}
	dcv1.SetDefaults(got)
	if !apiequality.Semantic.DeepEqual(sent.Spec, got.Spec) {
		t.Errorf("deploymentconfig %s: the server changed the spec (-sent +got):\n%s", name, diff.Diff(sent.Spec, got.Spec))
	}
	if !apiequality.Semantic.DeepEqual(sent.Labels, got.Labels) || !apiequality.Semantic.DeepEqual(sent.Annotations, got.Annotations) {
		t.Errorf("deploymentconfig %s: labels or annotations changed: sent %v %v, got %v %v", name, sent.Labels, sent.Annotations, got.Labels, got.Annotations)
	}
	checkImagesKept(t, sent, got)
}

// effective is the DeploymentConfig a manifest means, every default
// applied. replicas is the one default SetDefaults cannot apply, as an
// absent int32 reads as 0: the CRD's default of 1 is applied here.
func effective(t *testing.T, manifest map[string]any) *dcv1.DeploymentConfig {
	t.Helper()
	data, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	dc := &dcv1.DeploymentConfig{}
	if err := json.Unmarshal(data, dc); err != nil {
		t.Fatal(err)
	}
	if spec, _ := manifest["spec"].(map[string]any); spec != nil {
		if _, ok := spec["replicas"]; !ok {
			dc.Spec.Replicas = 1
		}
	}
	dcv1.SetDefaults(dc)
	return dc
}

// checkImagesKept asserts that containers without an image, or with a
// blank one, come back as they were sent: the server accepts them, and an
// image trigger (or the user) fills them in later.
func checkImagesKept(t *testing.T, sent, got *dcv1.DeploymentConfig) {
	t.Helper()
	for i, c := range sent.Spec.Template.Spec.Containers {
		if strings.TrimSpace(c.Image) != "" {
			continue
		}
		if g := got.Spec.Template.Spec.Containers[i].Image; g != c.Image {
			t.Errorf("deploymentconfig %s: container %s: image %q came back as %q", sent.Name, c.Name, c.Image, g)
		}
	}
}

// kubectlDC runs kubectl-dc in-process against the control plane, in ns,
// and returns its exit code, stdout and stderr.
func kubectlDC(ctx context.Context, ns string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := cli.Main(ctx, cli.NewFactory(streams), append([]string{"--kubeconfig", cluster.kubeconfig, "-n", ns}, args...))
	return code, out.String(), errOut.String()
}

// TestCompatConvertedDCWithTheCLI converts a manifest of the project's corpus,
// creates it, and drives its first rollout with kubectl-dc against the real
// API server and controllers: the CLI's clients, the status subresource
// and the watches work there as they do against the fakes.
func TestCompatConvertedDCWithTheCLI(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(ownCorpus, "rolling-simple.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := convert.Convert(data, convert.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dcs := convertedDCs(res)
	if len(dcs) != 1 {
		t.Fatalf("got %d DeploymentConfigs", len(dcs))
	}
	ns := newNamespace(t)
	checkAccepted(t, ns, dcs[0])
	const name = "simple"
	waitRC(t, ns, name+"-1", "created", func(*corev1.ReplicationController) bool { return true })
	ctx := testContext(t, 2*time.Minute)

	failed := func() { waitPhase(t, ns, name+"-1", dcv1.DeploymentPhaseFailed) }
	retried := func() {
		waitRC(t, ns, name+"-1", "retried", func(rc *corev1.ReplicationController) bool {
			return !deployment.IsCancelled(rc) && deployment.Phase(rc) != dcv1.DeploymentPhaseFailed
		})
	}
	steps := []struct {
		args     []string
		code     int
		contains string
		// after waits for the controllers to act on the step.
		after func()
	}{
		{args: []string{"get", name}, contains: name},
		{args: []string{"rollout", "latest", name}, code: 1, contains: "#1 is already in progress"},
		{args: []string{"rollout", "pause", name}, contains: "deploymentconfig.apps.deployconfig.io/" + name + " paused"},
		{args: []string{"rollout", "latest", name}, code: 1, contains: "cannot deploy a paused deployment config"},
		{args: []string{"rollout", "cancel", name}, code: 1, contains: "unable to cancel paused deployment"},
		{args: []string{"rollout", "resume", name}, contains: "resumed"},
		{args: []string{"rollout", "cancel", name}, contains: "cancelling rollout #1", after: failed},
		{args: []string{"rollout", "status", name, "--timeout", "1m"}, code: 1, contains: "was cancelled: cancelled by the user"},
		{args: []string{"rollout", "retry", name}, contains: "retrying rollout #1", after: retried},
		{args: []string{"rollout", "history", name}, contains: "config change"},
		{args: []string{"describe", name}, contains: "Deployment #1 (latest)"},
		{args: []string{"status"}, contains: "dc/" + name + " deploys registry.example.test/team/web:1.0"},
		{args: []string{"rollout", "undo", name}, code: 1, contains: "no complete revision before the latest"},
		{args: []string{"get", "nope"}, code: 1, contains: `deploymentconfig "nope" not found in namespace "` + ns + `"`},
	}
	for _, step := range steps {
		code, stdout, stderr := kubectlDC(ctx, ns, step.args...)
		if code != step.code || !strings.Contains(stdout+stderr, step.contains) {
			t.Fatalf("kubectl dc %s: exit %d, want %d and %q in the output:\n%s%s", strings.Join(step.args, " "), code, step.code, step.contains, stdout, stderr)
		}
		if step.after != nil {
			step.after()
		}
	}
}
