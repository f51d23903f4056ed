package e2e

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

// gcTimeout bounds how long the garbage collector takes to remove what a
// deleted DeploymentConfig owned. It watches a resource installed after it
// started, as the CRD is, only from its next discovery (every 30 s), and
// notices a DeploymentConfig deleted before then only at that discovery.
const gcTimeout = 2 * time.Minute

// The sample of config/samples, applied as `make run` does, gets its first
// deployment: the RC <dc>-1 controlled by the DeploymentConfig, the
// deployer pod <rc>-deploy owned by the RC, and then the sample's replicas.
func TestSampleDeploymentConfigRollsOut(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	kubectl(t, "apply", "-n", ns, "-k", samplesDir)

	r, err := suite.cluster.WaitRollout(t.Context(), ns, "hello", rolloutTimeout, playground.Rollout.Started)
	if err != nil {
		t.Fatal(err)
	}
	dc := getDC(t, ns, "hello")
	if r.Version != 1 || r.RC.Name != "hello-1" {
		t.Fatalf("first rollout is #%d (%s), want #1 (hello-1)", r.Version, r.RC.Name)
	}
	assertControlledBy(t, r.RC, "DeploymentConfig", dc.Name, dc.UID)
	if got := r.RC.Labels[dcv1.DeploymentConfigLabel]; got != "hello" {
		t.Errorf("rc label %s=%q, want hello", dcv1.DeploymentConfigLabel, got)
	}
	// The deployer pod is owned by the RC, but not controlled: the RC
	// manager would take a pod it controls for one of its replicas.
	deployer := getPod(t, ns, "hello-1-deploy")
	if refs := deployer.OwnerReferences; len(refs) != 1 || refs[0].Kind != "ReplicationController" || refs[0].Name != "hello-1" ||
		refs[0].UID != r.RC.UID || metav1.GetControllerOf(deployer) != nil {
		t.Errorf("deployer pod owners %+v, want the RC hello-1 (uid %s) alone, as a plain owner", refs, r.RC.UID)
	}
	if deployer.Labels[dcv1.DeployerPodForDeploymentLabel] != "hello-1" || deployer.Spec.ServiceAccountName != "deployer" {
		t.Errorf("deployer pod: labels %v, service account %q; want it labelled for hello-1, run as deployer",
			deployer.Labels, deployer.Spec.ServiceAccountName)
	}

	requireComplete(t, ns, "hello", 1)
	waitScaled(t, ns, map[string]int32{"hello-1": 3})
	waitDC(t, ns, "hello", "3 available replicas", settled(3))
}

// assertControlledBy checks that obj's controller is the object of that
// kind, name and UID, and that it blocks the owner's deletion.
func assertControlledBy(t *testing.T, obj metav1.Object, kind, name string, uid types.UID) {
	t.Helper()
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != kind || ref.Name != name || ref.UID != uid || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("%s: controller %+v, want %s %s (uid %s) blocking owner deletion", obj.GetName(), ref, kind, name, uid)
	}
}

// Deleting a DeploymentConfig, as kubectl does, removes all it made through
// owner references: its RCs, their application pods, and the deployer and
// hook pods, also those of a rollout still running.
func TestDeletingADeploymentConfigRemovesItsObjects(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	// The pre hook of rollout #2 runs until it is stopped.
	pre := shellHook(dcv1.LifecycleHookFailurePolicyAbort, `echo "pre hook of $DC_DEPLOYMENT_NAME"; [ "$DC_DEPLOYMENT_NAME" = web-1 ] || exec sleep 300`)
	createDC(t, ns, newDC("web", 2, recreate(pre, nil, nil)))
	requireComplete(t, ns, "web", 1)
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { setEnv(dc, "VERSION", "2") })
	waitPodRunning(t, ns, deployment.HookPodName("web-2", "pre"))

	pods := podNames(t, ns)
	for _, name := range []string{"web-1-deploy", "web-1-hook-pre", "web-2-deploy", "web-2-hook-pre"} {
		if !slices.Contains(pods, name) {
			t.Fatalf("pods %v, want %s among them", pods, name)
		}
	}
	if app, _ := podsOf(t.Context(), ns, "web-1"); len(app) != 2 {
		t.Fatalf("web-1 has %d pods, want 2", len(app))
	}

	kubectl(t, "delete", "dc", "web", "-n", ns)
	waitFor(t, "the RCs and pods to be removed", gcTimeout, func(ctx context.Context) (bool, error) {
		rcs, err := clientset().CoreV1().ReplicationControllers(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods, err := clientset().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(rcs.Items) == 0 && len(pods.Items) == 0, nil
	})
}

// podNames lists the names of the pods in ns.
func podNames(t *testing.T, ns string) []string {
	t.Helper()
	list, err := clientset().CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	return names
}

// A DeploymentConfig deleted with its RCs orphaned, and created again from
// the same manifest, adopts its RCs again and carries on where it was: its
// latest version comes back, and nothing rolls out again (the same pods
// keep running).
func TestOrphanedDeploymentsAreAdoptedAgain(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	manifest := newDC("web", 2, rolling(intstr.FromString("25%"), intstr.FromString("25%")))
	createDC(t, ns, manifest)
	requireComplete(t, ns, "web", 1)
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { setEnv(dc, "VERSION", "2") })
	requireComplete(t, ns, "web", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 2})
	before := podUIDs(t, ns, "web-2")

	kubectl(t, "delete", "dc", "web", "-n", ns, "--cascade=orphan")
	waitGone(t, "deploymentconfig web", func(ctx context.Context) error {
		return dcs(t).Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, &dcv1.DeploymentConfig{})
	})
	for _, name := range []string{"web-1", "web-2"} {
		if rc := getRC(t, ns, name); len(rc.OwnerReferences) != 0 {
			t.Errorf("orphaned rc %s still has owners %+v", name, rc.OwnerReferences)
		}
	}

	setEnv(manifest, "VERSION", "2")
	createDC(t, ns, manifest)
	dc := waitDC(t, ns, "web", "its RCs adopted and its latest version back", func(dc *dcv1.DeploymentConfig) bool {
		return dc.Status.LatestVersion == 2 && settled(2)(dc) &&
			hasCondition(dc, dcv1.DeploymentProgressing, corev1.ConditionTrue, dcv1.NewReplicationControllerAvailableReason)
	})
	rcs, err := clientset().CoreV1().ReplicationControllers(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range rcs.Items {
		names = append(names, rcs.Items[i].Name)
		assertControlledBy(t, &rcs.Items[i], "DeploymentConfig", "web", dc.UID)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"web-1", "web-2"}) {
		t.Errorf("rcs %v, want web-1 and web-2 only", names)
	}
	if after := podUIDs(t, ns, "web-2"); !maps.Equal(before, after) {
		t.Errorf("web-2's pods changed from %v to %v; want them left alone", before, after)
	}
}

// podUIDs maps the names of a deployment's pods to their UIDs.
func podUIDs(t *testing.T, ns, rc string) map[string]types.UID {
	t.Helper()
	pods, err := podsOf(t.Context(), ns, rc)
	if err != nil {
		t.Fatalf("listing the pods of %s: %v", rc, err)
	}
	out := map[string]types.UID{}
	for _, p := range pods {
		out[p.Name] = p.UID
	}
	return out
}
