package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// conditionOnlyWrites watches a namespace's DeploymentConfigs and returns
// a function that reports the writes that changed nothing but the kstatus
// conditions (Ready, Reconciling, Stalled): writes those conditions added.
func conditionOnlyWrites(t *testing.T, ns string) func() []string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", suite.cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	w, err := dynamic.NewForConfigOrDie(cfg).Resource(dcv1.GroupVersion.WithResource("deploymentconfigs")).Namespace(ns).
		Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watching deploymentconfigs: %v", err)
	}
	var mu sync.Mutex
	var found []string
	last := map[string]map[string]any{}
	go func() {
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			stripped := withoutKstatusConditions(u)
			mu.Lock()
			if prev, ok := last[u.GetName()]; ok && equality.Semantic.DeepEqual(prev, stripped) {
				found = append(found, u.GetName()+" at resourceVersion "+u.GetResourceVersion())
			}
			last[u.GetName()] = stripped
			mu.Unlock()
		}
	}()
	t.Cleanup(w.Stop)
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), found...)
	}
}

// withoutKstatusConditions is the object without what changes on every
// write and without the kstatus conditions.
func withoutKstatusConditions(u *unstructured.Unstructured) map[string]any {
	obj := u.DeepCopy().Object
	unstructured.RemoveNestedField(obj, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(obj, "metadata", "managedFields")
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	var kept []any
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] != "Ready" && m["type"] != "Reconciling" && m["type"] != "Stalled" {
			kept = append(kept, c)
		}
	}
	_ = unstructured.SetNestedSlice(obj, kept, "status", "conditions")
	return obj
}

// startKubectl runs kubectl with args against the suite's cluster in the
// background, bounded by timeout; the channel gets its result once it ends.
func startKubectl(t *testing.T, timeout time.Duration, args ...string) <-chan result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	cmd := exec.CommandContext(ctx, filepath.Join(suite.binDir, "kubectl"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+suite.cluster.Kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting kubectl %s: %v", strings.Join(args, " "), err)
	}
	done := make(chan result, 1)
	go func() {
		defer cancel()
		err := cmd.Wait()
		var exit *exec.ExitError
		code := 0
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			code = -1
		}
		done <- result{stdout: stdout.String(), stderr: stderr.String(), code: code}
	}()
	return done
}

// waitReady calls start, then runs `kubectl wait --for=condition=Ready
// dc/NAME` as soon as dc-controller has seen the change (before that, the
// last rollout's Ready would let kubectl return at once) and requires it to
// return 0, with rollout #version Complete by then and its pods available.
func waitReady(t *testing.T, ns, name string, version int64, replicas int32, start func()) {
	t.Helper()
	start()
	waitObserved(t, ns, name)
	done := startKubectl(t, rolloutTimeout, "wait", "--for=condition=Ready", "dc/"+name, "-n", ns, "--timeout=110s")
	r := <-done
	if r.code != 0 {
		t.Fatalf("kubectl wait --for=condition=Ready dc/%s: %s", name, r)
	}
	// Read once, right after kubectl returned: Complete cannot be undone,
	// so a wait that returned early shows an unfinished rollout here.
	rc := getRC(t, ns, deployment.Name(name, version))
	dc := getDC(t, ns, name)
	if deployment.Phase(rc) != dcv1.DeploymentPhaseComplete || dc.Status.LatestVersion != version || dc.Status.AvailableReplicas != replicas {
		t.Fatalf("kubectl wait returned with rollout #%d of %s %s (latestVersion %d, %d pods available): want Complete with %d",
			version, name, deployment.Phase(rc), dc.Status.LatestVersion, dc.Status.AvailableReplicas, replicas)
	}
}

// TestKubectlWaitForReadyFollowsTheRollout: the real `kubectl wait
// --for=condition=Ready dc/NAME` returns only once the rollout it waited
// for is Complete (from the DeploymentConfig's creation, and from a spec
// change), and does not return while a rollout fails: the failure is
// Stalled, and Ready stays False while the previous version serves.
func TestKubectlWaitForReadyFollowsTheRollout(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	addedWrites := conditionOnlyWrites(t, ns)
	// The pre hook makes every rollout last a few seconds: a wait that
	// returned at the spec change would return before it ends.
	dc := newDC("web", 2, recreate(shellHook(dcv1.LifecycleHookFailurePolicyAbort, "sleep 3"), nil, nil))
	waitReady(t, ns, "web", 1, 2, func() { createDC(t, ns, dc) })
	waitReady(t, ns, "web", 2, 2, func() {
		updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { setEnv(dc, "VERSION", "2") })
	})

	// A rollout that fails: its pods can never be scheduled.
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		timeout := int64(15)
		dc.Spec.Strategy.RecreateParams.TimeoutSeconds = &timeout
		// A hook pod asks for the container's resources too: it would wait
		// unscheduled instead of the rollout failing.
		dc.Spec.Strategy.RecreateParams.Pre = nil
		dc.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100k")}
	})
	waitObserved(t, ns, "web")
	done := startKubectl(t, rolloutTimeout, "wait", "--for=condition=Ready", "dc/web", "-n", ns, "--timeout=60s")
	requirePhase(t, ns, "web", 3, dcv1.DeploymentPhaseFailed)
	waitScaled(t, ns, map[string]int32{"web-2": 2, "web-3": 0})
	if out := kubectl(t, "wait", "--for=condition=Stalled", "dc/web", "-n", ns, "--timeout=60s"); !strings.Contains(out, "condition met") {
		t.Errorf("kubectl wait --for=condition=Stalled: %s", out)
	}
	r := <-done
	if r.code == 0 || !strings.Contains(r.stderr, "timed out") {
		t.Errorf("kubectl wait --for=condition=Ready across a failed rollout: %s; want it timed out", r)
	}
	if ready := getDC(t, ns, "web"); hasCondition(ready, dcv1.DeploymentReady, corev1.ConditionTrue, dcv1.RolloutCompleteReason) {
		t.Errorf("Ready is True after the failed rollout, while the previous version serves: %+v", ready.Status.Conditions)
	}
	// The conditions ride in the status writes the controller makes anyway,
	// with kube-controller-manager's RC manager reporting the pods.
	if added := addedWrites(); len(added) > 0 {
		t.Errorf("status writes that changed only Ready/Reconciling/Stalled: %v", added)
	}
}

// waitObserved waits until dc-controller has seen the DeploymentConfig's
// latest spec, so that its conditions are about that spec.
func waitObserved(t *testing.T, ns, name string) {
	t.Helper()
	waitDC(t, ns, name, "its generation observed", func(dc *dcv1.DeploymentConfig) bool {
		return dc.Status.ObservedGeneration == dc.Generation
	})
}
