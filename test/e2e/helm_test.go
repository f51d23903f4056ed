package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// The charts the tests install, relative to this package.
const (
	chartDir  = "../../charts/deployconfig"
	appChart  = "../testdata/charts/dc-app"
	configDir = "../../config/default"
	// controllerNamespace is where config/default puts dc-controller.
	controllerNamespace = "deployconfig-system"
	// helmTimeout is the --timeout of helm install --wait: long enough for
	// a rollout with a 5 s hook on a busy machine, short enough that a
	// wait that never ends fails the test well within commandTimeout.
	helmTimeout = 100 * time.Second
)

// chartLabels are the labels the chart may put on its objects beside
// config/default's: Helm's release bookkeeping, and the name on objects
// that config/default leaves unlabelled.
var chartLabels = []string{
	"app.kubernetes.io/instance",
	"app.kubernetes.io/managed-by",
	"app.kubernetes.io/name",
	"app.kubernetes.io/part-of",
	"helm.sh/chart",
}

// helm runs bin/helm against the suite's cluster.
func helm(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, "", "helm", args...)
}

// mustHelm runs helm and fails the test unless it exits 0; it returns
// stdout.
func mustHelm(t *testing.T, args ...string) string {
	t.Helper()
	r := helm(t, args...)
	if r.code != 0 {
		t.Fatalf("helm %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// uninstall removes a release when a test ends (t.Context is done by
// then, so it runs on a context of its own).
func uninstall(t *testing.T, release, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(suite.binDir, "helm"), "uninstall", release, "--namespace", ns, "--wait")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+suite.cluster.Kubeconfig)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("helm uninstall %s --namespace %s: %v\n%s", release, ns, err, out)
	}
}

// objects parses a multi-document manifest into objects keyed by
// kind/namespace/name.
func objects(t *testing.T, what string, manifest []byte) map[string]map[string]any {
	t.Helper()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	objs := map[string]map[string]any{}
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("reading %s: %v", what, err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("parsing %s: %v", what, err)
		}
		if obj == nil {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		key := obj["kind"].(string) + "/" + str(meta["namespace"]) + "/" + str(meta["name"])
		objs[key] = obj
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// withoutChartLabels drops from the chart's object the chartLabels that
// config/default's object does not have.
func withoutChartLabels(chart, config map[string]any) map[string]any {
	meta, _ := chart["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	configMeta, _ := config["metadata"].(map[string]any)
	configLabels, _ := configMeta["labels"].(map[string]any)
	for _, l := range chartLabels {
		if _, ok := configLabels[l]; !ok {
			delete(labels, l)
		}
	}
	if len(labels) == 0 {
		delete(meta, "labels")
	}
	return chart
}

// kustomize renders config/default as a user would.
func kustomize(t *testing.T) []byte {
	t.Helper()
	r := run(t, "", "kubectl", "kustomize", configDir)
	if r.code != 0 {
		t.Fatalf("kubectl kustomize %s: %s", configDir, r)
	}
	return []byte(r.stdout)
}

// The chart with its default values renders the same CRD, RBAC and
// controller Deployment as config/default, apart from Helm's labels; it
// leaves the namespace to `helm install --create-namespace` (config/default
// makes one) and adds the metrics Service.
func TestHelmChartMatchesConfigDefault(t *testing.T) {
	t.Parallel()
	chart := objects(t, "helm template", []byte(mustHelm(t, "template", "deployconfig", chartDir, "--namespace", controllerNamespace, "--include-crds")))
	config := objects(t, "config/default", kustomize(t))
	for key, want := range config {
		if strings.HasPrefix(key, "Namespace/") {
			if _, ok := chart[key]; ok {
				t.Errorf("the chart makes %s: helm install --create-namespace does", key)
			}
			continue
		}
		got, ok := chart[key]
		if !ok {
			t.Errorf("config/default has %s, the chart does not", key)
			continue
		}
		gotYAML, _ := yaml.Marshal(withoutChartLabels(got, want))
		wantYAML, _ := yaml.Marshal(want)
		if !bytes.Equal(gotYAML, wantYAML) {
			t.Errorf("%s differs from config/default's:\n--- chart\n%s\n--- config/default\n%s", key, gotYAML, wantYAML)
		}
	}
	var extra []string
	for key := range chart {
		if _, ok := config[key]; !ok {
			extra = append(extra, key)
		}
	}
	slices.Sort(extra)
	if want := []string{"Service/" + controllerNamespace + "/dc-controller-metrics"}; !slices.Equal(extra, want) {
		t.Errorf("the chart has %v beside config/default's objects, want %v", extra, want)
	}
}

// chartContainer renders the chart into namespace dc with extra helm
// arguments and returns its controller Deployment's container.
func chartContainer(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out := mustHelm(t, append([]string{"template", "deployconfig", chartDir, "--namespace", "dc"}, args...)...)
	d, ok := objects(t, "helm template", []byte(out))["Deployment/dc/dc-controller"]
	if !ok {
		t.Fatalf("helm template %v has no Deployment dc/dc-controller:\n%s", args, out)
	}
	spec := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	return spec["containers"].([]any)[0].(map[string]any)
}

// Each setting of values.yaml reaches dc-controller as the flag that
// cmd/dc-controller reads, and values the schema refuses fail with the
// field named.
func TestHelmChartValues(t *testing.T) {
	t.Parallel()
	t.Run("settings", func(t *testing.T) {
		c := chartContainer(t, "-f", "testdata/helm-values.yaml")
		wantArgs := []any{
			"--deployer-image=registry.example.com/dc-deploy:v1",
			"--zap-log-level=debug",
			"--image-poll-interval=30s",
			"--allow-registry-networks=10.88.0.1/32,192.168.0.0/16",
			"--deny-registry-networks=10.96.0.0/12",
			"--workers=3",
			"--namespaces=team-a,team-b",
			"--kube-api-qps=50",
			"--kube-api-burst=100",
			"--pprof-bind-address=127.0.0.1:6060",
		}
		if args := c["args"].([]any); !slices.Equal(args, wantArgs) {
			t.Errorf("args = %q, want %q (no leader election)", args, wantArgs)
		}
		if c["image"] != "registry.example.com/dc-controller:v1" || c["imagePullPolicy"] != "IfNotPresent" {
			t.Errorf("image %v, pull policy %v; want registry.example.com/dc-controller:v1, IfNotPresent", c["image"], c["imagePullPolicy"])
		}
	})
	refused := []struct {
		name, set, field string
	}{
		{"duration", "imagePollInterval=soon", "imagePollInterval"},
		{"CIDR", "registryNetworks.allow={10.0.0.1}", "registryNetworks/allow/0"},
		{"log level", "logLevel=verbose", "logLevel"},
		{"unknown value", "replica=3", "replica"},
		{"pull policy", "image.pullPolicy=Sometimes", "image/pullPolicy"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			r := helm(t, "template", "deployconfig", chartDir, "--set", tc.set)
			if r.code == 0 || !strings.Contains(r.stderr, "values don't meet the specifications of the schema") || !strings.Contains(r.stderr, tc.field) {
				t.Errorf("helm template --set %s: want a schema error naming %s, got %s", tc.set, tc.field, r)
			}
		})
	}
	t.Run("service monitor without service", func(t *testing.T) {
		r := helm(t, "template", "deployconfig", chartDir, "--set", "metrics.serviceMonitor.enabled=true,metrics.service.enabled=false")
		if r.code == 0 || !strings.Contains(r.stderr, "metrics.serviceMonitor.enabled needs metrics.service.enabled") {
			t.Errorf("want the chart to refuse a ServiceMonitor without its Service, got %s", r)
		}
	})
}

// helm lint --strict passes on the chart, with its default values and with
// every setting given, and on the application chart the tests install.
func TestHelmLint(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{chartDir},
		{chartDir, "-f", "testdata/helm-values.yaml", "--set", "metrics.serviceMonitor.enabled=true"},
		{appChart},
	} {
		r := helm(t, append([]string{"lint", "--strict"}, args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, "0 chart(s) failed") {
			t.Errorf("helm lint --strict %s: %s", strings.Join(args, " "), r)
		}
	}
}

// The API server accepts everything the chart renders, with its default
// values and with every setting given (kubectl apply --dry-run=server runs
// the API server's validation and admission, Pod Security included, without
// keeping anything). The objects get a name of their own, so that their
// cluster-wide ones do not meet TestHelmInstallController's.
func TestHelmTemplateServerDryRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	for _, args := range [][]string{nil, {"-f", "testdata/helm-values.yaml"}} {
		args = append(args, "--set", "fullnameOverride=dc-controller-dry-run")
		manifest := mustHelm(t, append([]string{"template", "deployconfig", chartDir, "--namespace", ns, "--include-crds"}, args...)...)
		r := run(t, manifest, "kubectl", "apply", "--server-side", "--dry-run=server", "-f", "-")
		if r.code != 0 || r.stderr != "" {
			t.Errorf("kubectl apply --dry-run=server of helm template %v: %s", args, r)
			continue
		}
		for _, want := range []string{"customresourcedefinition.apiextensions.k8s.io/deploymentconfigs.apps.deployconfig.io serverside-applied (server dry run)",
			"deployment.apps/dc-controller-dry-run serverside-applied (server dry run)",
			"clusterrole.rbac.authorization.k8s.io/dc-controller-dry-run serverside-applied (server dry run)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("kubectl apply --dry-run=server of helm template %v: no %q in\n%s", args, want, r.stdout)
			}
		}
	}
}

// A user installs the controller with helm install into a namespace that
// enforces the restricted Pod Security Standard, and the chart's pods are
// admitted and become ready. On kwok no container runs: the pods are
// simulated, and the controller that rolls out DeploymentConfigs here is the
// one the suite runs on the host (dc-local serve). test/node's
// TestHelmChartController runs the chart's controller as real pods.
func TestHelmInstallController(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	mustHelm(t, "install", "deployconfig", chartDir, "--namespace", ns, "--wait", "--timeout", helmTimeout.String())
	t.Cleanup(func() { uninstall(t, "deployconfig", ns) })
	d, err := clientset().AppsV1().Deployments(ns).Get(t.Context(), "dc-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ReadyReplicas != 2 {
		t.Errorf("dc-controller has %d ready replicas after helm install --wait, want 2", d.Status.ReadyReplicas)
	}
	args := d.Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--leader-election-namespace="+ns) {
		t.Errorf("args %q: the leader election Lease is not in the release's namespace %s", args, ns)
	}
	// The installed ServiceAccount may do what dc-controller does.
	sa := "system:serviceaccount:" + ns + ":dc-controller"
	for _, check := range [][]string{
		{"update", "deploymentconfigs.apps.deployconfig.io/status", "--all-namespaces"},
		{"create", "pods", "--all-namespaces"},
		{"update", "leases.coordination.k8s.io/dc-controller.deployconfig.io", "-n", ns},
	} {
		r := run(t, "", "kubectl", append([]string{"auth", "can-i", "--as", sa}, check...)...)
		if strings.TrimSpace(r.stdout) != "yes" {
			t.Errorf("kubectl auth can-i --as %s %v: %s", sa, check, r)
		}
	}
	// The CRD was there already (the suite installed it): helm install
	// left it alone, and a DC rolls out.
	app := dcNamespace(t)
	createDC(t, app, newDC("web", 1, recreate(nil, nil, nil)))
	requireComplete(t, app, "web", 1)
}

// helm install --wait of an application chart holding a DeploymentConfig
// returns once the rollout is Complete, and helm upgrade --wait once the
// next one is: Helm 4 waits by kstatus, which reads the DeploymentConfig's
// status.observedGeneration and Ready condition.
func TestHelmInstallWaitsForTheRollout(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	mustHelm(t, "install", "app", appChart, "--namespace", ns, "--wait", "--timeout", helmTimeout.String())
	requireLatestComplete(t, ns, "app", 1)
	mustHelm(t, "upgrade", "app", appChart, "--namespace", ns, "--set", "version=2", "--wait", "--timeout", helmTimeout.String())
	requireLatestComplete(t, ns, "app", 2)
}

// helm install --wait fails, before its --timeout, when the rollout fails:
// the pre hook exits 1 with failurePolicy Abort.
func TestHelmInstallFailsWhenTheRolloutFails(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	start := time.Now()
	r := helm(t, "install", "app", appChart, "--namespace", ns, "--set", "hook.fail=true", "--wait", "--timeout", helmTimeout.String())
	took := time.Since(start)
	if r.code == 0 {
		t.Fatalf("helm install --wait of a rollout that fails succeeded: %s", r)
	}
	if !strings.Contains(r.stderr, "DeploymentConfig/"+ns+"/app not ready. status: Failed") {
		t.Errorf("helm install --wait: want the DeploymentConfig reported Failed, got %s", r)
	}
	if took >= helmTimeout {
		t.Errorf("helm install --wait took %s: it waited for its --timeout (%s) instead of failing with the rollout", took, helmTimeout)
	}
	requirePhase(t, ns, "app", 1, dcv1.DeploymentPhaseFailed)
}

// requireLatestComplete fails the test unless, right now, the
// DeploymentConfig's latest rollout is #version and Complete: what helm
// --wait promised when it returned.
func requireLatestComplete(t *testing.T, ns, name string, version int64) {
	t.Helper()
	dc := getDC(t, ns, name)
	if dc.Status.LatestVersion != version {
		t.Fatalf("after helm --wait, %s is at rollout #%d, want #%d", name, dc.Status.LatestVersion, version)
	}
	rc := getRC(t, ns, deployment.Name(name, version))
	if phase := deployment.Phase(rc); phase != dcv1.DeploymentPhaseComplete {
		t.Errorf("helm --wait returned while rollout #%d of %s is %s, want Complete", version, name, phase)
	}
	if ready := rc.Status.ReadyReplicas; ready != dc.Spec.Replicas {
		t.Errorf("helm --wait returned with %d of %d pods of %s ready", ready, dc.Spec.Replicas, rc.Name)
	}
}
