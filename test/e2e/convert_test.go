package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
	"github.com/deployconfig/deployconfig/test/invariants"
)

// openshiftDir holds the OpenShift DeploymentConfig manifests written for
// these tests: together they use every strategy, hook point, failure
// policy and trigger type, both apiVersions, a List and a multi-document
// file.
const openshiftDir = "testdata/openshift"

// dcCreated is what `kubectl apply` says of a DeploymentConfig it created.
func dcCreated(name string) string {
	return "deploymentconfig.apps.deployconfig.io/" + name + " created"
}

// conversion is what `kubectl dc convert` printed.
type conversion struct {
	// output is standard output: the converted manifest.
	output string
	// warnings are the lines of standard error, without "Warning: ".
	warnings []string
}

// convertFile runs `kubectl dc convert -f FILE ARGS` as a user would and
// fails the test unless it exits 0 with nothing but warnings on stderr.
func convertFile(t *testing.T, file string, args ...string) conversion {
	t.Helper()
	args = append([]string{"dc", "convert", "-f", file}, args...)
	r := run(t, "", "kubectl", args...)
	if r.code != 0 {
		t.Fatalf("kubectl %s: %s", strings.Join(args, " "), r)
	}
	c := conversion{output: r.stdout}
	for line := range strings.Lines(r.stderr) {
		warning, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "Warning: ")
		if !ok {
			t.Errorf("kubectl %s: stderr line %q is not a warning", strings.Join(args, " "), line)
			continue
		}
		c.warnings = append(c.warnings, warning)
	}
	return c
}

// assertWarnings checks that the conversion warned exactly once for each
// of want (substrings of a warning each) and about nothing else.
func assertWarnings(t *testing.T, c conversion, want ...string) {
	t.Helper()
	left := slices.Clone(c.warnings)
	for _, w := range want {
		i := slices.IndexFunc(left, func(warning string) bool { return strings.Contains(warning, w) })
		if i < 0 {
			t.Errorf("no warning says %q; the warnings:\n%s", w, strings.Join(c.warnings, "\n"))
			continue
		}
		left = slices.Delete(left, i, i+1)
	}
	for _, w := range left {
		t.Errorf("unexpected warning: %s", w)
	}
}

// applyConverted pipes a converted manifest to `kubectl apply -n NS -f -`
// and fails the test unless it exits 0 and prints each of want.
func applyConverted(t *testing.T, ns, manifest string, want ...string) {
	t.Helper()
	r := run(t, manifest, "kubectl", "apply", "-n", ns, "-f", "-")
	if r.code != 0 {
		t.Fatalf("kubectl apply -n %s -f - of\n%s\n%s", ns, manifest, r)
	}
	for _, line := range want {
		if !strings.Contains(r.stdout, line+"\n") {
			t.Errorf("kubectl apply -f -: %q is missing in:\n%s", line, r.stdout)
		}
	}
}

// manifestObjects decodes every object of a YAML or JSON manifest, the
// items of Lists in place of the Lists.
func manifestObjects(t *testing.T, what, text string) []map[string]any {
	t.Helper()
	var objects []map[string]any
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objects
		}
		if err != nil {
			t.Fatalf("%s is not YAML or JSON: %v\n%s", what, err, text)
		}
		if len(obj) == 0 {
			continue
		}
		if obj["kind"] == "List" {
			items, _ := obj["items"].([]any)
			for _, item := range items {
				m, _ := item.(map[string]any)
				objects = append(objects, m)
			}
			continue
		}
		objects = append(objects, obj)
	}
}

// objectID names an object, e.g. "DeploymentConfig web".
func objectID(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	kind, _ := obj["kind"].(string)
	return kind + " " + name
}

// isDC reports whether an object is one of our DeploymentConfigs.
func isDC(obj map[string]any) bool {
	return obj["apiVersion"] == dcv1.GroupVersion.String() && obj["kind"] == "DeploymentConfig"
}

// convertedDCs returns the DeploymentConfigs among a conversion's objects.
func convertedDCs(t *testing.T, objects []map[string]any) []*dcv1.DeploymentConfig {
	t.Helper()
	var dcs []*dcv1.DeploymentConfig
	for _, obj := range objects {
		if !isDC(obj) {
			continue
		}
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		dc := &dcv1.DeploymentConfig{}
		if err := json.Unmarshal(data, dc); err != nil {
			t.Fatalf("converted %s: %v", objectID(obj), err)
		}
		dcs = append(dcs, dc)
	}
	return dcs
}

// convertedDC returns the converted DeploymentConfig of that name.
func convertedDC(t *testing.T, c conversion, name string) *dcv1.DeploymentConfig {
	t.Helper()
	for _, dc := range convertedDCs(t, manifestObjects(t, "the converted manifest", c.output)) {
		if dc.Name == name {
			return dc
		}
	}
	t.Fatalf("no DeploymentConfig %s in the converted manifest:\n%s", name, c.output)
	return nil
}

// requireNothingRolledOut waits until the controller has seen the
// DeploymentConfig's spec and fails the test if a rollout started.
func requireNothingRolledOut(t *testing.T, ns, name string) {
	t.Helper()
	dc := waitDC(t, ns, name, "the controller to see it", func(dc *dcv1.DeploymentConfig) bool {
		return dc.Status.ObservedGeneration >= dc.Generation
	})
	if dc.Status.LatestVersion != 0 {
		t.Fatalf("deploymentconfig %s rolled out #%d by itself, want no rollout", name, dc.Status.LatestVersion)
	}
	rcs, err := clientset().CoreV1().ReplicationControllers(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs.Items {
		if rc.Annotations[dcv1.DeploymentConfigAnnotation] == name {
			t.Errorf("deploymentconfig %s has a deployment %s, want none", name, rc.Name)
		}
	}
}

// requireDeployerIgnored checks that the first deployment of a
// DeploymentConfig marked deployer-pod.ignore exists and stays New with no
// deployer pod: something other than dc-deploy is to roll it out.
func requireDeployerIgnored(t *testing.T, ns, name string) {
	t.Helper()
	rcName := name + "-1"
	waitFor(t, "replicationcontroller "+rcName, rolloutTimeout, func(ctx context.Context) (bool, error) {
		_, err := clientset().CoreV1().ReplicationControllers(ns).Get(ctx, rcName, metav1.GetOptions{})
		return err == nil, ignoreNotFound(err)
	})
	// A DeploymentConfig rolled out after it, in the same namespace, shows
	// that the deployer controller has been through the ignored
	// deployment: it made, followed and finished another one since.
	createDC(t, ns, newDC("witness", 1, recreate(nil, nil, nil)))
	requireComplete(t, ns, "witness", 1)
	if phase := deployment.Phase(getRC(t, ns, rcName)); phase != dcv1.DeploymentPhaseNew {
		t.Errorf("%s is %s, want New: the deployer pod is ignored", rcName, phase)
	}
	pod := deployment.DeployerPodName(rcName)
	if _, err := clientset().CoreV1().Pods(ns).Get(t.Context(), pod, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("deployer pod %s: want none, got err=%v", pod, err)
	}
}

// requireHistory checks the REVISION STATUS CAUSE lines of `kubectl dc
// rollout history`.
func requireHistory(t *testing.T, ns, name string, lines ...string) {
	t.Helper()
	out := mustDC(t, ns, "rollout", "history", name)
	want := "deploymentconfig.apps.deployconfig.io/" + name + "\nREVISION   STATUS     CAUSE\n" + strings.Join(lines, "\n") + "\n"
	if out != want {
		t.Errorf("kubectl dc rollout history %s:\n%s\nwant:\n%s", name, out, want)
	}
}

// Every manifest of testdata/openshift converts with the warnings a user
// needs, applies, and rolls out (or, by design, does not until told to).
func TestConvertOpenShiftManifests(t *testing.T) {
	t.Parallel()
	// Each check converts its manifest, applies it to a namespace of its
	// own and follows what it does.
	cases := []struct {
		file  string
		check func(t *testing.T, file string)
	}{
		{"rolling-hooks.yaml", checkRollingHooks},
		{"recreate-hooks.yaml", checkRecreateHooks},
		{"custom-openshift-deploy.yaml", checkCustomOpenShiftDeploy},
		{"custom-dc-deploy.yaml", checkCustomDCDeploy},
		{"tag-images.yaml", checkTagImages},
		{"image-change-config.yaml", checkImageChangeWithConfigChange},
		{"image-change-manual.yaml", checkManualImageChange},
		{"image-registry.yaml", checkImageRegistry},
		{"list.yaml", checkList},
		{"multi-doc.yaml", checkMultiDocument},
		{"deployer-ignore.yaml", checkDeployerIgnore},
		{"test-deployment.yaml", checkTestDeployment},
	}
	files, err := filepath.Glob(filepath.Join(openshiftDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, tc := range cases {
		checked[tc.file] = true
	}
	for _, f := range files {
		if !checked[filepath.Base(f)] {
			t.Errorf("%s has no check", f)
		}
	}
	for _, tc := range cases {
		t.Run(strings.TrimSuffix(tc.file, ".yaml"), func(t *testing.T) {
			t.Parallel()
			tc.check(t, filepath.Join(openshiftDir, tc.file))
		})
	}
}

// Rolling with pre and post hooks: both run around the first rollout, and
// a config change rolls the new version in while the old one goes.
func checkRollingHooks(t *testing.T, file string) {
	ns := convertNamespace(t)
	c := convertFile(t, file)
	assertWarnings(t, c)
	applyConverted(t, ns, c.output, dcCreated("frontend"))
	requireRolledOut(t, ns, "frontend", "frontend-1")
	assertInOrder(t, deployerLog(t, ns, "frontend"),
		"--> pre: Running hook pod ...",
		"frontend pre hook: warm-up for frontend-1",
		"--> pre: Success",
		"--> post: Running hook pod ...",
		"frontend post hook: caches purged",
		"--> post: Success",
		"--> Success")

	kubectl(t, "patch", "dc", "frontend", "-n", ns, "--type=json",
		"-p", `[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"quay.io/example/frontend:1.5"}]`)
	requireRolledOut(t, ns, "frontend", "frontend-2")
	assertInOrder(t, deployerLog(t, ns, "frontend"),
		"frontend pre hook: warm-up for frontend-2",
		"--> Scaling up frontend-2 from 0 to 2, scaling down frontend-1 from 2 to 0",
		"frontend post hook: caches purged",
		"--> Success")
	waitScaled(t, ns, map[string]int32{"frontend-1": 0, "frontend-2": 2})
}

// Recreate runs its pre, mid and post hooks in order, each policy
// (Abort, Retry, Ignore) going on when its hook succeeds.
func checkRecreateHooks(t *testing.T, file string) {
	ns := convertNamespace(t)
	c := convertFile(t, file)
	assertWarnings(t, c)
	applyConverted(t, ns, c.output, dcCreated("database"))
	requireRolledOut(t, ns, "database", "database-1")
	assertInOrder(t, deployerLog(t, ns, "database"),
		"--> pre: Running hook pod ...",
		"database pre hook: backing up",
		"--> pre: Success",
		"--> mid: Running hook pod ...",
		"database mid hook: migrating to schema 42",
		"--> mid: Success",
		"--> Scaling database-1 to 1",
		"--> post: Running hook pod ...",
		"database post hook: analyzing tables",
		"--> post: Success",
		"--> Success")
	waitScaled(t, ns, map[string]int32{"database-1": 1})
}

// A Custom strategy calling OpenShift's deployer by its name: the warning
// says dc-deploy answers to it, and the two steps run.
func checkCustomOpenShiftDeploy(t *testing.T, file string) {
	ns := convertNamespace(t)
	c := convertFile(t, file)
	assertWarnings(t, c, "deploymentconfig/canary: spec.strategy.customParams.command runs openshift-deploy: the deployer here is dc-deploy")
	applyConverted(t, ns, c.output, dcCreated("canary"))
	requireRolledOut(t, ns, "canary", "canary-1")
	assertInOrder(t, deployerLog(t, ns, "canary"),
		"--> Reached 50%",
		"canary: running smoke-test on half of canary-1",
		"--> Success")
	waitScaled(t, ns, map[string]int32{"canary-1": 2})
}

// A Custom strategy over Recreate that stops dc-deploy after the pre hook,
// does its own step, and has dc-deploy finish the rollout, which does not
// run the hook again.
func checkCustomDCDeploy(t *testing.T, file string) {
	ns := convertNamespace(t)
	c := convertFile(t, file)
	assertWarnings(t, c)
	applyConverted(t, ns, c.output, dcCreated("batch"))
	requireRolledOut(t, ns, "batch", "batch-1")
	assertInOrder(t, deployerLog(t, ns, "batch"),
		"batch pre hook: queue drained",
		"--> pre: Success",
		"--> Reached pre",
		"batch: pre hook done, handing over to dc-deploy",
		"--> pre: Hook pod already succeeded",
		"--> Scaling batch-1 to 2",
		"--> Success")
	waitScaled(t, ns, map[string]int32{"batch-1": 2})
}

// tagImages into ImageStreamTags cannot carry over: a hook that only tags
// is dropped, one that also runs a command keeps the command.
func checkTagImages(t *testing.T, file string) {
	ns := convertNamespace(t)
	c := convertFile(t, file)
	assertWarnings(t, c,
		"deploymentconfig/release: spec.strategy.recreateParams.mid.tagImages[0]: dropped: it tags into ImageStreamTag release:staged",
		"deploymentconfig/release: spec.strategy.recreateParams.mid: the hook had only tagImages into ImageStreamTags and was dropped",
		"deploymentconfig/release: spec.strategy.recreateParams.post.tagImages[0]: dropped: it tags into ImageStreamTag production/release:deployed")
	params := convertedDC(t, c, "release").Spec.Strategy.RecreateParams
	if params == nil || params.Mid != nil || params.Post == nil || params.Post.ExecNewPod == nil || len(params.Post.TagImages) != 0 {
		t.Errorf("converted recreateParams %+v: want no mid hook and a post hook with execNewPod only", params)
	}
	applyConverted(t, ns, c.output, dcCreated("release"))
	requireRolledOut(t, ns, "release", "release-1")
	log := deployerLog(t, ns, "release")
	assertInOrder(t, log, "--> post: Running hook pod ...", "release post hook: notifying the release channel", "--> post: Success", "--> Success")
	if strings.Contains(log, "--> mid:") {
		t.Errorf("a mid hook ran:\n%s", log)
	}
}

// An ImageStreamTag trigger beside a ConfigChange one is kept but manual;
// the config change rolls the template's image out.
func checkImageChangeWithConfigChange(t *testing.T, file string) {
	ns := convertNamespace(t)
	c := convertFile(t, file)
	assertWarnings(t, c, "deploymentconfig/api: spec.triggers[1]: ImageChange trigger on ImageStreamTag api:latest kept with automatic=false")
	triggers := convertedDC(t, c, "api").Spec.Triggers
	if len(triggers) != 2 || triggers[1].ImageChangeParams == nil || triggers[1].ImageChangeParams.Automatic {
		t.Errorf("converted triggers %+v: want the ImageChange trigger kept, not automatic", triggers)
	}
	applyConverted(t, ns, c.output, dcCreated("api"))
	requireRolledOut(t, ns, "api", "api-1")
	requireHistory(t, ns, "api", "1          Complete   config change")
	waitScaled(t, ns, map[string]int32{"api-1": 2})
}

// A DeploymentConfig whose only trigger is an ImageStreamTag one does
// nothing by itself once converted; `kubectl dc rollout latest` rolls out
// the template as it is.
func checkManualImageChange(t *testing.T, file string) {
	ns := convertNamespace(t)
	c := convertFile(t, file)
	assertWarnings(t, c, "deploymentconfig/reports: spec.triggers[0]: ImageChange trigger on ImageStreamTag shared-images/reports:stable kept with automatic=false")
	applyConverted(t, ns, c.output, dcCreated("reports"))
	requireNothingRolledOut(t, ns, "reports")

	if out := mustDC(t, ns, "rollout", "latest", "reports"); out != "deploymentconfig.apps.deployconfig.io/reports rolled out\n" {
		t.Errorf("kubectl dc rollout latest reports: %q", out)
	}
	requireRolledOut(t, ns, "reports", "reports-1")
	requireHistory(t, ns, "reports", "1          Complete   manual change")
	waitScaled(t, ns, map[string]int32{"reports-1": 1})
}

// --image-registry maps an ImageStreamTag trigger to the registry its
// images were mirrored to: the trigger stays automatic, dc-controller
// resolves the tag, and the first rollout runs the image by digest.
func checkImageRegistry(t *testing.T, file string) {
	ns := convertNamespace(t)
	reg := registrytest.New(t)
	digest := reg.Push(t, "images/shop:prod")

	// Without a registry the blank image can never be filled in.
	assertWarnings(t, convertFile(t, file),
		"deploymentconfig/shop: spec.triggers[1]: ImageChange trigger on ImageStreamTag images/shop:prod kept with automatic=false",
		`deploymentconfig/shop: container "shop" has no image and no DockerImage trigger to set one`)

	c := convertFile(t, file, "--image-registry="+reg.Host)
	tag := reg.Ref("images/shop:prod")
	assertWarnings(t, c, "deploymentconfig/shop: spec.triggers[1]: ImageChange trigger on ImageStreamTag images/shop:prod now watches the DockerImage "+tag)
	p := convertedDC(t, c, "shop").Spec.Triggers[1].ImageChangeParams
	if p == nil || !p.Automatic || p.From.Kind != "DockerImage" || p.From.Name != tag {
		t.Errorf("converted trigger %+v: want an automatic trigger on the DockerImage %s", p, tag)
	}
	applyConverted(t, ns, c.output, dcCreated("shop"))
	requireRolledOut(t, ns, "shop", "shop-1")
	want := reg.Ref("images/shop@" + digest.String())
	if image := getRC(t, ns, "shop-1").Spec.Template.Spec.Containers[0].Image; image != want {
		t.Errorf("shop-1 runs %q, want the tag's digest %s", image, want)
	}
	requireHistory(t, ns, "shop", "1          Complete   image change")
	waitScaled(t, ns, map[string]int32{"shop-1": 2})
}

// A List keeps its Kubernetes objects, which apply beside the
// DeploymentConfig (whose hook reads the ConfigMap), and loses its
// OpenShift-only ones.
func checkList(t *testing.T, file string) {
	ns := convertNamespace(t)
	c := convertFile(t, file)
	assertWarnings(t, c,
		"configmap/greeter-settings: not a DeploymentConfig: passed through unchanged",
		"service/greeter: not a DeploymentConfig: passed through unchanged",
		"imagestream/greeter: image.openshift.io/v1 is an OpenShift-only kind with no equivalent on Kubernetes: dropped",
		"route/greeter: route.openshift.io/v1 is an OpenShift-only kind with no equivalent on Kubernetes: dropped")
	var ids []string
	for _, obj := range manifestObjects(t, "the converted List", c.output) {
		ids = append(ids, objectID(obj))
	}
	if want := []string{"ConfigMap greeter-settings", "Service greeter", "DeploymentConfig greeter"}; !slices.Equal(ids, want) {
		t.Errorf("the converted List holds %v, want %v", ids, want)
	}
	applyConverted(t, ns, c.output, "configmap/greeter-settings created", "service/greeter created", dcCreated("greeter"))
	requireRolledOut(t, ns, "greeter", "greeter-1")
	assertInOrder(t, deployerLog(t, ns, "greeter"), "greeter pre hook: hello from the list", "--> pre: Success", "--> Success")
	waitScaled(t, ns, map[string]int32{"greeter-1": 2})
}

// A multi-document file keeps its ServiceAccount, which both converted
// DeploymentConfigs' pods run as, and loses its BuildConfig.
func checkMultiDocument(t *testing.T, file string) {
	ns := convertNamespace(t)
	c := convertFile(t, file)
	assertWarnings(t, c,
		"serviceaccount/queue: not a DeploymentConfig: passed through unchanged",
		"buildconfig/queue-worker: build.openshift.io/v1 is an OpenShift-only kind with no equivalent on Kubernetes: dropped")
	if n := strings.Count(c.output, "\n---\n"); n != 2 {
		t.Errorf("the converted file has %d document separators, want 2 (3 documents):\n%s", n, c.output)
	}
	applyConverted(t, ns, c.output, "serviceaccount/queue created", dcCreated("queue-worker"), dcCreated("queue-scheduler"))
	requireRolledOut(t, ns, "queue-worker", "queue-worker-1")
	requireRolledOut(t, ns, "queue-scheduler", "queue-scheduler-1")
	waitScaled(t, ns, map[string]int32{"queue-worker-1": 2, "queue-scheduler-1": 1})
	for _, rc := range []string{"queue-worker-1", "queue-scheduler-1"} {
		pods, err := podsOf(t.Context(), ns, rc)
		if err != nil {
			t.Fatal(err)
		}
		for _, pod := range pods {
			if pod.Spec.ServiceAccountName != "queue" {
				t.Errorf("pod %s runs as %q, want the converted file's service account queue", pod.Name, pod.Spec.ServiceAccountName)
			}
		}
	}
}

// OpenShift's deployer-pod.ignore annotation becomes ours: the deployment
// is made and waits, New, for something else to roll it out.
func checkDeployerIgnore(t *testing.T, file string) {
	ns := convertNamespace(t)
	c := convertFile(t, file)
	assertWarnings(t, c)
	annotations := convertedDC(t, c, "external").Annotations
	if annotations[dcv1.DeployerPodIgnoreAnnotation] != "true" || annotations[dcv1.OpenShiftDeployerPodIgnoreAnnotation] != "" {
		t.Errorf("converted annotations %v: want %s and not %s", annotations, dcv1.DeployerPodIgnoreAnnotation, dcv1.OpenShiftDeployerPodIgnoreAnnotation)
	}
	applyConverted(t, ns, c.output, dcCreated("external"))
	requireDeployerIgnored(t, ns, "external")
}

// A test DeploymentConfig rolls out, runs its hook and ends at zero pods.
func checkTestDeployment(t *testing.T, file string) {
	ns := convertNamespace(t)
	c := convertFile(t, file)
	assertWarnings(t, c)
	applyConverted(t, ns, c.output, dcCreated("smoke"))
	requireRolledOut(t, ns, "smoke", "smoke-1")
	assertInOrder(t, deployerLog(t, ns, "smoke"), "--> Scaling smoke-1 to 2", "smoke post hook: all checks passed", "--> Success")
	waitScaled(t, ns, map[string]int32{"smoke-1": 0})
}

// corpus is the corpus of DeploymentConfig manifests to convert and roll
// out, and what becomes of each: the project's own (test/testdata/dc-corpus),
// or, when DC_COMPAT_DIR names it (`make test-compat`), a corpus of real
// OpenShift manifests from public repositories, whose SOURCES.md says where
// each comes from and what it exercises.
func corpus() (string, []corpusFile) {
	if dir := os.Getenv("DC_COMPAT_DIR"); dir != "" {
		return dir, sharedCorpusFiles
	}
	return ownCorpusDir, ownCorpusFiles
}

// ownCorpusDir is the project's corpus of DeploymentConfig manifests.
const ownCorpusDir = "../testdata/dc-corpus"

// corpusOutcome is what a converted DeploymentConfig of the corpus does
// once applied.
type corpusOutcome int

const (
	// rollsOut: its ConfigChange trigger rolls it out to Complete.
	rollsOut corpusOutcome = iota
	// rollsOutWhenStarted: no trigger fires (triggers: [] or a manual
	// ImageChange one); `kubectl dc rollout latest` rolls it out.
	rollsOutWhenStarted
	// rollsOutWhenResumed: it is paused; `kubectl dc rollout resume`
	// rolls it out.
	rollsOutWhenResumed
	// waitsForImage: a container has no image (an ImageStreamTag trigger
	// filled it in on OpenShift), so nothing rolls out.
	waitsForImage
	// deployerIgnored: deployer-pod.ignore; its deployment stays New.
	deployerIgnored
	// failsByDesign: a hook fails under failurePolicy Abort.
	failsByDesign
	// retriesByDesign: a hook fails under failurePolicy Retry, so it is
	// retried until the rollout's deadline.
	retriesByDesign
	// notRolledOut: only accepted by the API server; why says why the
	// playground cannot show its rollout.
	notRolledOut
)

// corpusDC is what a converted DeploymentConfig of the corpus is expected
// to do.
type corpusDC struct {
	outcome corpusOutcome
	// why explains outcomes other than the rollouts.
	why string
	// log are lines of the deployer log, in order.
	log []string
}

// corpusFile is a manifest of the corpus and what becomes of it.
type corpusFile struct {
	path string
	// dcs are its DeploymentConfigs by name: every one it has.
	dcs map[string]corpusDC
	// setup creates what the manifest expects to find in its namespace.
	setup func(t *testing.T, ns string)
}

// ownCorpusFiles is every manifest of the project's corpus, those with the
// slowest rollouts first so that they start first.
var ownCorpusFiles = []corpusFile{
	{path: "custom-strategy.yaml", dcs: map[string]corpusDC{
		// Its command calls openshift-deploy twice, which dc-deploy
		// answers to.
		"staged": {log: []string{"--> Reached 50%", "half of the pods run the new version", "--> Success", "all pods run the new version"}},
	}},
	{path: "recreate-hooks.yaml", dcs: map[string]corpusDC{
		"ledger": {log: []string{"backing up the ledger", "--> pre: Success", "old pods are gone", "--> mid: Success",
			"--> post: Warning: the hook failed and its failurePolicy is Ignore", "--> Success"}},
	}},
	{path: "rolling-full-params.yaml", dcs: map[string]corpusDC{
		// The pre hook's own environment reaches its command.
		"orders": {log: []string{"migrating the schema of orders", "--> pre: Success", "orders are live", "--> post: Success", "--> Success"}},
	}},
	{path: "json-form.json", dcs: map[string]corpusDC{
		"search": {log: []string{"reindex requested", "--> post: Success", "--> Success"}},
	}},
	{path: "test-mode.yaml", dcs: map[string]corpusDC{
		"smoke-test": {log: []string{"smoke test starting", "--> pre: Success", "--> Success"}},
	}},
	{path: "recreate-failing-hook.yaml", dcs: map[string]corpusDC{
		"broken-migration": {outcome: failsByDesign, why: "its Abort pre hook runs /bin/false", log: []string{"--> pre: Running hook pod ...", "--> pre: Failed"}},
	}},
	{path: "already-converted.yaml", dcs: map[string]corpusDC{"converted": {}}},
	{path: "custom-openshift-deployer-image.yaml", dcs: map[string]corpusDC{
		"custom-image": {outcome: notRolledOut, why: "its custom strategy is OpenShift's deployer image with no command, and the playground runs a custom strategy's command as a local process"},
	}},
	{path: "deployer-pod-ignored.yaml", dcs: map[string]corpusDC{
		"externally-deployed": {outcome: deployerIgnored, why: "deploy.openshift.io/deployer-pod.ignore"},
	}},
	{path: "exported-with-status.yaml", dcs: map[string]corpusDC{"billing": {}}},
	{path: "image-change-triggers.yaml", dcs: map[string]corpusDC{
		"frontend": {outcome: waitsForImage, why: "its containers' images come only from ImageStreamTag triggers"},
	}},
	{path: "image-trigger-with-image.yaml", dcs: map[string]corpusDC{"reports": {}}},
	{path: "legacy-v1-list.yaml", dcs: map[string]corpusDC{"guestbook": {}}},
	{path: "legacy-v1-minimal.yaml", dcs: map[string]corpusDC{"legacy": {}}},
	{path: "multi-document.yaml", dcs: map[string]corpusDC{"cache": {}, "worker": {}}},
	{path: "no-triggers.yaml", dcs: map[string]corpusDC{"manual": {outcome: rollsOutWhenStarted}}},
	{path: "not-a-deploymentconfig.yaml"},
	{path: "odd-fields.yaml", dcs: map[string]corpusDC{"quirky": {}}},
	{path: "paused.yaml", dcs: map[string]corpusDC{"on-hold": {outcome: rollsOutWhenResumed}}},
	{path: "recreate-tag-images.yaml", dcs: map[string]corpusDC{
		// Its only hook (tagImages into an ImageStreamTag) was dropped.
		"promoter": {},
	}},
	{path: "rolling-percent-and-counts.yaml", dcs: map[string]corpusDC{"catalog": {}}},
	{path: "rolling-simple.yaml", dcs: map[string]corpusDC{"simple": {}}},
	{path: "sidecars-and-volumes.yaml", dcs: map[string]corpusDC{"gateway": {}}},
}

// sharedCorpusFiles is every manifest of the shared corpus of real
// manifests, those with the slowest rollouts first so that they start
// first.
var sharedCorpusFiles = []corpusFile{
	{path: "openshift-origin/deployment-min-ready-seconds.yaml", dcs: map[string]corpusDC{
		// minReadySeconds: 60 holds its rollout for a minute.
		"minreadytest": {},
	}},
	{path: "community/openshift__verification-tests__hook-inheritance-secret-volume.json", dcs: map[string]corpusDC{
		// The pre hook sleeps 20 s; the post hook runs /bin/false under
		// Ignore. The runtime runs hooks as local processes and does not
		// mount volumes, so the missing secret my-secret does not matter.
		"hooks": {log: []string{"--> pre: Success", "--> post: Warning: the hook failed and its failurePolicy is Ignore", "--> Success"}},
	}},
	{path: "openshift-origin/custom-deployment.yaml", dcs: map[string]corpusDC{
		// Its command sleeps 15 s, then calls openshift-deploy, which
		// dc-deploy answers to.
		"custom-deployment": {log: []string{"test pre hook executed", "--> pre: Success", "--> Reached 50%", "Halfway", "--> Success", "Finished"}},
	}},
	{path: "community/openshift__verification-tests__dc-with-pre-mid-post.yaml", dcs: map[string]corpusDC{
		// Three hooks of 5 s each.
		"hooks": {log: []string{"--> pre: Success", "--> mid: Success", "--> post: Success", "--> Success"}},
	}},
	{path: "openshift-origin/deployment-example.yaml", dcs: map[string]corpusDC{
		"example": {outcome: waitsForImage, why: "its containers' images come only from ImageStreamTag triggers"},
	}},
	{path: "openshift-origin/deployment-history-limit.yaml", dcs: map[string]corpusDC{"history-limit": {}}},
	{path: "openshift-origin/deployment-ignores-deployer.yaml", dcs: map[string]corpusDC{
		"database": {outcome: deployerIgnored, why: "deploy.openshift.io/deployer-pod.ignore"},
	}},
	{path: "openshift-origin/deployment-image-resolution-is.yaml"},
	{path: "openshift-origin/deployment-image-resolution.yaml", dcs: map[string]corpusDC{
		"deployment-image-resolution": {outcome: waitsForImage, why: "its images are blank, for ImageStreamTag triggers to fill in"},
	}},
	{path: "openshift-origin/deployment-shutdown-graceful.yaml", dcs: map[string]corpusDC{"nettest": {}}},
	{path: "openshift-origin/deployment-simple-sleep.yaml"},
	{path: "openshift-origin/deployment-simple.yaml", dcs: map[string]corpusDC{"deployment-simple": {}}},
	{path: "openshift-origin/deployment-trigger.yaml", dcs: map[string]corpusDC{
		"example": {outcome: waitsForImage, why: "its container's image comes only from an ImageStreamTag trigger"},
	}},
	{path: "openshift-origin/deployment-with-ref-env.yaml", dcs: map[string]corpusDC{
		// triggers: []; its pre hook reads the ConfigMap test, which the
		// origin test creates beside it, as a user would.
		"deployment-simple": {outcome: rollsOutWhenStarted, log: []string{"hello world", "--> pre: Success", "--> Success"}},
	}, setup: func(t *testing.T, ns string) {
		kubectl(t, "create", "configmap", "test", "-n", ns, "--from-literal=foo=world")
	}},
	{path: "openshift-origin/deployment-withouttrigger.yaml", dcs: map[string]corpusDC{
		"deployment-withouttrigger": {outcome: rollsOutWhenStarted},
	}},
	{path: "openshift-origin/failing-pre-hook.yaml", dcs: map[string]corpusDC{
		"hook": {outcome: retriesByDesign, why: "its Retry pre hook always exits 1"},
	}},
	{path: "openshift-origin/generation-test.yaml", dcs: map[string]corpusDC{
		"generation-test": {log: []string{"test pre hook executed", "--> pre: Success", "--> Success"}},
	}},
	{path: "openshift-origin/multi-ict-deployment.yaml", dcs: map[string]corpusDC{
		"example": {outcome: waitsForImage, why: "its containers' images come only from an ImageStreamTag trigger"},
	}},
	{path: "openshift-origin/paused-deployment.yaml", dcs: map[string]corpusDC{"paused": {outcome: rollsOutWhenResumed}}},
	{path: "openshift-origin/readiness-test.yaml", dcs: map[string]corpusDC{
		"readiness": {outcome: notRolledOut, why: "its readinessProbe (/bin/false) never passes, so on a real cluster the rollout times out by design; kwok does not run probes, so the playground cannot show that"},
	}},
	{path: "openshift-origin/tag-images-deployment.yaml", dcs: map[string]corpusDC{
		// A test DeploymentConfig whose only hook (tagImages into an
		// ImageStreamTag) was dropped.
		"tag-images": {},
	}},
	{path: "openshift-origin/test-deployment-broken.yaml", dcs: map[string]corpusDC{
		"brokendeployment": {outcome: failsByDesign, why: "its Abort pre hook runs /bin/false", log: []string{"--> pre: Running hook pod ...", "--> pre: Failed"}},
	}},
	{path: "openshift-origin/test-deployment-hook.yaml", dcs: map[string]corpusDC{
		// ExecNewPodHook has no args, on OpenShift as here (convert warns
		// that it drops them): the hook runs `/bin/sh -c` with no script,
		// which fails under Abort.
		"deployment-test": {outcome: failsByDesign, why: "its Abort pre hook is `/bin/sh -c` with no script", log: []string{"--> pre: Running hook pod ...", "--> pre: Failed"}},
	}},
	{path: "openshift-origin/test-deployment-test.yaml", dcs: map[string]corpusDC{
		"deployment-test": {log: []string{"test pre hook executed", "--> pre: Success", "--> Success"}},
	}},
	{path: "community/Jmainguy__docker_minecraft__dc.yaml", dcs: map[string]corpusDC{"dockerminecraft": {}}, setup: withClaims("minecraft")},
	{path: "community/SZFelixHuang__openshift-mysql__deploymentconfig.yaml", dcs: map[string]corpusDC{"mysql": {}}, setup: withClaims("mysql-pvc")},
	{path: "community/argoproj__argo-cd__healthy.yaml", dcs: map[string]corpusDC{"example": {}}},
	{path: "community/bakito__code-server-openshift__dc.yaml", dcs: map[string]corpusDC{"coder": {}}, setup: withClaims("local", "cache")},
	{path: "community/camarguinho__spring-boot-datagrid-challenge__openshift.yaml", dcs: map[string]corpusDC{"challenge3": {}}},
	{path: "community/chmouel__openshift-mysql-job-backup__dc.yaml", dcs: map[string]corpusDC{"mysql": {}}},
	{path: "community/domenicbove__openshift-ssl-server__dc.yaml", dcs: map[string]corpusDC{"ssl": {}}},
	{path: "community/eformat__intra-pod-startup-sync__deploymentconfig.yaml", dcs: map[string]corpusDC{"intra-pod-startup": {}}},
	{path: "community/fabiankuhn__openshift-skills__deployment-config.yaml", dcs: map[string]corpusDC{
		// Its only trigger is a manual ImageChange one.
		"java-backend": {outcome: rollsOutWhenStarted},
	}},
	{path: "community/glennswest__winoperator__deploymentconfig.yaml", dcs: map[string]corpusDC{"winoperator": {}}},
	{path: "community/gnunn1__gitops-dc-test__dc.yaml", dcs: map[string]corpusDC{"httpd": {}}},
	{path: "community/jfchevrette__devshift-fileserve__deploymentconfig.yaml", dcs: map[string]corpusDC{"devshift-fileserve": {}}},
	{path: "community/openshift-eng__art-dashboard-ui__deploymentconfig.yaml", dcs: map[string]corpusDC{"art-build-history": {}}},
	{path: "community/openshift__verification-tests__dc-with-two-containers.yaml", dcs: map[string]corpusDC{"dctest": {}}},
	{path: "community/schen1__grafana-openshift__dc.yaml", dcs: map[string]corpusDC{"grafana": {}}, setup: func(t *testing.T, ns string) {
		// Its pods run as the service account grafana-ocp: without it the
		// ReplicationController cannot create them.
		kubectl(t, "create", "serviceaccount", "grafana-ocp", "-n", ns)
		withClaims("grafana-data")(t, ns)
	}},
	{path: "community/scureq__openshift-artifacts__deployment-config.yaml", dcs: map[string]corpusDC{"openam": {}}, setup: withClaims("openam")},
	{path: "community/wadebee__DO288-apps__dc.yaml", dcs: map[string]corpusDC{"quotesapi": {}, "quotesdb": {}}, setup: withClaims("quotesdb-claim")},
	{path: "community/zvigrinberg__deployment-config-custom-strategy__deployment-config.yaml", dcs: map[string]corpusDC{
		"dc-custom-strategy-test": {outcome: notRolledOut, why: "its custom strategy's script runs `oc`, OpenShift's CLI, which the playground does not have (custom-strategy commands run as local processes)"},
	}},
}

// withClaims is the setup of a manifest whose pods mount
// PersistentVolumeClaims it does not define: as a user provides them, it
// creates each claim bound to a volume of its own (the scheduler does not
// place a pod whose claim is missing or unbound; kwok then only pretends to
// mount it).
func withClaims(claims ...string) func(t *testing.T, ns string) {
	return func(t *testing.T, ns string) {
		t.Helper()
		for _, claim := range claims {
			createBoundClaim(t, ns, claim)
		}
	}
}

// createBoundClaim creates a PersistentVolume reserved for the claim and
// the claim, and waits until they are bound.
func createBoundClaim(t *testing.T, ns, claim string) {
	t.Helper()
	size := resource.MustParse("1Gi")
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + claim},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   modes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: claim},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/volumes/" + ns + "/" + claim},
			},
		},
	}
	if _, err := clientset().CoreV1().PersistentVolumes().Create(t.Context(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating persistentvolume %s: %v", pv.Name, err)
	}
	t.Cleanup(func() {
		_ = clientset().CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			StorageClassName: new(""),
			VolumeName:       pv.Name,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if _, err := clientset().CoreV1().PersistentVolumeClaims(ns).Create(t.Context(), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating persistentvolumeclaim %s: %v", claim, err)
	}
	waitFor(t, "persistentvolumeclaim "+claim+" to be bound", podTimeout, func(ctx context.Context) (bool, error) {
		c, err := clientset().CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		return err == nil && c.Status.Phase == corev1.ClaimBound, err
	})
}

// serverSetFields are metadata fields the old cluster set, which a
// converted manifest must not carry.
var serverSetFields = []string{"resourceVersion", "uid", "selfLink", "managedFields"}

// Every manifest of the corpus converts, keeps what Kubernetes knows and
// drops what it cannot, is accepted by the API server, and rolls out as far
// as the playground can show; each runs in a namespace of its own, all at
// once.
func TestConvertCorpus(t *testing.T) {
	t.Parallel()
	dir, files := corpus()
	var onDisk []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
			rel, err := filepath.Rel(dir, path)
			onDisk = append(onDisk, rel)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing the corpus: %v", err)
	}
	var listed []string
	for _, f := range files {
		listed = append(listed, f.path)
	}
	slices.Sort(onDisk)
	slices.Sort(listed)
	if !slices.Equal(onDisk, listed) {
		t.Errorf("the corpus holds %v;\nthe test expects %v", onDisk, listed)
	}
	for _, f := range files {
		t.Run(f.path, func(t *testing.T) {
			t.Parallel()
			checkCorpusFile(t, dir, f)
		})
	}
}

// checkCorpusFile converts one corpus manifest, checks the output against
// the input, applies it and follows its DeploymentConfigs.
func checkCorpusFile(t *testing.T, dir string, f corpusFile) {
	file := filepath.Join(dir, f.path)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	in := manifestObjects(t, file, string(data))
	c := convertFile(t, file)
	out := manifestObjects(t, "the converted manifest", c.output)
	checkConvertedObjects(t, in, out, c.warnings)

	dcs := convertedDCs(t, out)
	var names []string
	for _, dc := range dcs {
		names = append(names, dc.Name)
	}
	var want []string
	for name := range f.dcs {
		want = append(want, name)
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("converted DeploymentConfigs %v, want %v", names, want)
	}
	if len(dcs) == 0 {
		// Nothing of it is for this API server: the corpus's files
		// without a DeploymentConfig hold an ImageStream, and a Deployment
		// written with DeploymentConfig fields, which apps/v1 refuses.
		return
	}

	ns := corpusNamespace(t, dcs)
	if f.setup != nil {
		f.setup(t, ns)
	}
	var created []string
	for _, name := range names {
		created = append(created, dcCreated(name))
	}
	applyConverted(t, ns, c.output, created...)
	for _, dc := range dcs {
		checkCorpusDC(t, ns, dc, f.dcs[dc.Name])
	}
}

// checkConvertedObjects checks a conversion against its input: no
// server-set fields or status anywhere; each DeploymentConfig converted;
// OpenShift-only objects dropped with a warning; every other object
// passed through as it was.
func checkConvertedObjects(t *testing.T, in, out []map[string]any, warnings []string) {
	t.Helper()
	for _, obj := range out {
		meta, _ := obj["metadata"].(map[string]any)
		for _, field := range serverSetFields {
			if _, ok := meta[field]; ok {
				t.Errorf("converted %s keeps metadata.%s", objectID(obj), field)
			}
		}
		if _, ok := obj["status"]; ok {
			t.Errorf("converted %s keeps its status", objectID(obj))
		}
	}
	byID := map[string]map[string]any{}
	for _, obj := range out {
		byID[objectID(obj)] = obj
	}
	kept := 0
	for _, obj := range in {
		id := objectID(obj)
		apiVersion, _ := obj["apiVersion"].(string)
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			t.Errorf("input %s has apiVersion %q: %v", id, apiVersion, err)
			continue
		}
		converted, found := byID[id]
		switch {
		case obj["kind"] == "DeploymentConfig":
			kept++
			if !found || !isDC(converted) {
				t.Errorf("%s (%s) was not converted to %s", id, apiVersion, dcv1.GroupVersion)
			}
		case strings.HasSuffix(gv.Group, "openshift.io"):
			if found {
				t.Errorf("%s (%s) is OpenShift-only but was kept", id, apiVersion)
			}
			// Warnings name objects as kind/name, e.g. route/web.
			ref := strings.ToLower(strings.Replace(id, " ", "/", 1))
			if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, ref+": ") && strings.Contains(w, "dropped") }) {
				t.Errorf("no warning says %s was dropped; the warnings:\n%s", ref, strings.Join(warnings, "\n"))
			}
		default:
			kept++
			if !found {
				t.Errorf("%s (%s) was dropped, want it passed through", id, apiVersion)
			} else if !reflect.DeepEqual(converted, obj) {
				t.Errorf("%s was changed:\n%v\nwant it as it was:\n%v", id, converted, obj)
			}
		}
	}
	if len(out) != kept {
		t.Errorf("the conversion holds %d objects, want the %d kept from the input", len(out), kept)
	}
}

// convertNamespace is the namespace a converted manifest is applied to.
// Converted templates are the users' own, written for OpenShift without the
// restricted Pod Security settings, so it does not enforce them.
func convertNamespace(t *testing.T) string {
	t.Helper()
	return dcNamespaceAt(t, podSecurityPrivileged)
}

// corpusNamespace is the namespace to apply converted DeploymentConfigs
// to: a fresh one, or the one their manifest names. `kubectl dc convert`
// keeps metadata.namespace, and kubectl refuses to apply an object of
// another namespace than -n, so a user creates that namespace, as this
// does (the suite's cluster is new, so only "default" exists already).
func corpusNamespace(t *testing.T, dcs []*dcv1.DeploymentConfig) string {
	t.Helper()
	name := dcs[0].Namespace
	for _, dc := range dcs[1:] {
		if dc.Namespace != name {
			t.Fatalf("the DeploymentConfigs are in namespaces %q and %q", name, dc.Namespace)
		}
	}
	if name == "" {
		return convertNamespace(t)
	}
	return namedDCNamespace(t, name, dcs)
}

// namedDCNamespace is dcNamespace for a namespace a manifest names: it is
// created unless it exists, watched by an invariants.Checker, and deleted
// at the end when this created it; in a namespace that existed before,
// the DeploymentConfigs are deleted instead.
func namedDCNamespace(t *testing.T, name string, dcs []*dcv1.DeploymentConfig) string {
	t.Helper()
	_, err := clientset().CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	switch {
	case err == nil:
		t.Cleanup(func() {
			_ = clientset().CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	case apierrors.IsAlreadyExists(err):
		t.Cleanup(func() {
			for _, dc := range dcs {
				_ = deleteDC(name, dc.Name)
			}
		})
	default:
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	waitFor(t, "the default service account of "+name, podTimeout, func(ctx context.Context) (bool, error) {
		_, err := clientset().CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, ignoreNotFound(err)
	})
	checker, err := invariants.Start(context.Background(), suite.cluster.Config, name)
	if err != nil {
		t.Fatalf("watching namespace %s for broken invariants: %v", name, err)
	}
	t.Cleanup(func() {
		if err := invariants.Err(checker.Stop()); err != nil {
			t.Errorf("namespace %s: %v", name, err)
		}
	})
	return name
}

// deleteDC deletes a DeploymentConfig, its deployments with it.
func deleteDC(ns, name string) error {
	c, err := dcClient()
	if err != nil {
		return err
	}
	dc := &dcv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return c.Delete(context.Background(), dc)
}

// checkCorpusDC follows one converted DeploymentConfig to its expected
// outcome.
func checkCorpusDC(t *testing.T, ns string, dc *dcv1.DeploymentConfig, want corpusDC) {
	t.Helper()
	name, rc := dc.Name, dc.Name+"-1"
	switch want.outcome {
	case rollsOut:
	case rollsOutWhenStarted:
		requireNothingRolledOut(t, ns, name)
		if out := mustDC(t, ns, "rollout", "latest", name); out != "deploymentconfig.apps.deployconfig.io/"+name+" rolled out\n" {
			t.Errorf("kubectl dc rollout latest %s: %q", name, out)
		}
	case rollsOutWhenResumed:
		waitDC(t, ns, name, "the controller to see it paused", func(dc *dcv1.DeploymentConfig) bool {
			return dc.Status.ObservedGeneration >= dc.Generation &&
				hasCondition(dc, dcv1.DeploymentProgressing, corev1.ConditionUnknown, dcv1.PausedConfigReason)
		})
		requireNothingRolledOut(t, ns, name)
		if out := mustDC(t, ns, "rollout", "resume", name); out != "deploymentconfig.apps.deployconfig.io/"+name+" resumed\n" {
			t.Errorf("kubectl dc rollout resume %s: %q", name, out)
		}
	case waitsForImage:
		requireNothingRolledOut(t, ns, name)
		return
	case deployerIgnored:
		requireDeployerIgnored(t, ns, name)
		return
	case failsByDesign:
		r := kubectlDC(t, ns, statusWait(name)...)
		if r.code == 0 || !strings.Contains(r.stderr, `error: rollout #1 of deploymentconfig "`+name+`" failed`) {
			t.Errorf("kubectl dc rollout status %s -w: want a failure (%s), got %s", name, want.why, r)
		}
		requirePhase(t, ns, name, 1, dcv1.DeploymentPhaseFailed)
		assertInOrder(t, deployerLog(t, ns, name), want.log...)
		return
	case retriesByDesign:
		// The runtime restarts the hook's container, then the deployer
		// says so.
		hook := deployment.HookPodName(rc, "pre")
		waitFor(t, "hook pod "+hook+" to restart", rolloutTimeout, func(ctx context.Context) (bool, error) {
			pod, err := clientset().CoreV1().Pods(ns).Get(ctx, hook, metav1.GetOptions{})
			if err != nil {
				return false, ignoreNotFound(err)
			}
			status := pod.Status.ContainerStatuses
			return len(status) > 0 && status[0].RestartCount > 0, nil
		})
		var log string
		err := wait.PollUntilContextTimeout(t.Context(), time.Second, rolloutTimeout, true, func(context.Context) (bool, error) {
			log = kubectlDC(t, ns, "logs", name).stdout
			return strings.Contains(log, "--> pre: Retrying hook pod (retry #1)"), nil
		})
		if err != nil {
			t.Errorf("the deployer of %s did not retry its hook (%s): %v; log:\n%s", name, want.why, err, log)
		}
		return
	case notRolledOut:
		t.Logf("deploymentconfig %s: accepted; its rollout is not checked: %s", name, want.why)
		return
	}
	requireRolledOut(t, ns, name, rc)
	if len(want.log) > 0 {
		assertInOrder(t, deployerLog(t, ns, name), want.log...)
	}
}
