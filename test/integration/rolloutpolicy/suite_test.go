// Package rolloutpolicy tests RolloutPolicies against a real
// kube-apiserver: waves, maxConcurrent, freezes, the line across a restart
// of dc-controller and a paused DeploymentConfig in line. It runs a
// dc-controller of its own, under the shipped RBAC, on a clock the tests
// move, and restarts it when a test asks.
package rolloutpolicy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/integration/controlplane"
)

// waitTimeout bounds every wait.
const waitTimeout = 60 * time.Second

var (
	// c is the suite's admin client.
	c client.WithWatch
	// controllerCfg is how dc-controller reaches the API server: as its
	// ServiceAccount, under config/rbac.
	controllerCfg *rest.Config
	// clk is dc-controller's clock; tests step it.
	clk = testingclock.NewFakeClock(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	// stopController stops the running dc-controller.
	stopController func()
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	plane, err := controlplane.Start(controlplane.Options{Root: filepath.Join("..", "..", ".."), RBAC: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer plane.Stop()
	c, controllerCfg = plane.Client, plane.ControllerConfig()
	if stopController, err = startController(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if stopController != nil {
			stopController()
		}
	}()
	return m.Run()
}

// startController runs dc-controller in this process until the returned
// function is called.
func startController() (func(), error) {
	return controlplane.RunManager(controllerCfg, controller.Options{
		DeployerImage: controlplane.DeployerImage, Workers: 2, MetricsAddr: "0", HealthAddr: "0",
		Clock: clk, SkipNameValidation: true,
	})
}

// restartController stops dc-controller and starts a new one, which knows
// only what the cluster holds.
func restartController(t *testing.T) {
	t.Helper()
	stopController()
	stop, err := startController()
	if err != nil {
		stopController = nil
		t.Fatal(err)
	}
	stopController = stop
}

func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	last := ""
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, state, err := cond(ctx)
		last = state
		return ok, err
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last seen: %s", what, err, last)
	}
}

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "policy-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// follower is a DeploymentConfig labelled fleet=a whose configuration
// snapshots follow the ConfigMap cm.
func follower(ns, name, cm string) *dcv1.DeploymentConfig {
	return &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"fleet": "a"}},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas:        1,
			ConfigSnapshots: &dcv1.ConfigSnapshots{},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1",
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}}}},
			},
		},
	}
}

// createFollowers creates the ConfigMaps and DeploymentConfigs (each DC
// name follows the ConfigMap cms(name)) and plays their first rollouts to
// Complete, before any policy governs them.
func createFollowers(t *testing.T, ns string, names []string, cms func(string) string) *runningWatch {
	t.Helper()
	ctx := context.Background()
	made := map[string]bool{}
	for _, n := range names {
		cm := cms(n)
		if !made[cm] {
			made[cm] = true
			if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cm}, Data: map[string]string{"v": "1"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	rw := watchRunning(t, ns)
	for _, n := range names {
		if err := c.Create(ctx, follower(ns, n, cms(n))); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names {
		finish(t, ns, deployment.Name(n, 1), corev1.PodSucceeded)
	}
	return rw
}

// changeConfigMap changes a ConfigMap's data, which its followers roll out.
func changeConfigMap(t *testing.T, ns, name, value string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil {
			return err
		}
		cm.Data["v"] = value
		return c.Update(context.Background(), cm)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// finish plays a deployment's deployer pod to its end, as a kubelet would.
func finish(t *testing.T, ns, rc string, phase corev1.PodPhase) {
	t.Helper()
	pod := types.NamespacedName{Namespace: ns, Name: deployment.DeployerPodName(rc)}
	waitFor(t, "deployer pod of "+rc, func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, pod, &corev1.Pod{})
		return err == nil, fmt.Sprint(err), client.IgnoreNotFound(err)
	})
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := c.Get(context.Background(), pod, p); err != nil {
			return err
		}
		p.Status.Phase = phase
		return c.Status().Update(context.Background(), p)
	})
	if err != nil {
		t.Fatalf("set the phase of %s: %v", pod.Name, err)
	}
	waitFor(t, rc+" finished", func(ctx context.Context) (bool, string, error) {
		got := &corev1.ReplicationController{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: rc}, got); err != nil {
			return false, "", err
		}
		return deployment.IsTerminal(deployment.Phase(got)), string(deployment.Phase(got)), nil
	})
}

// runningWatch records, from a watch of a namespace's RCs, which
// deployments run, the most that ran at once, and the order in which
// deployments were created.
type runningWatch struct {
	mu      sync.Mutex
	phases  map[string]dcv1.DeploymentPhase
	created []string
	most    int
	stopped chan struct{}
}

func watchRunning(t *testing.T, ns string) *runningWatch {
	t.Helper()
	w, err := c.Watch(context.Background(), &corev1.ReplicationControllerList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatalf("watch rcs: %v", err)
	}
	rw := &runningWatch{phases: map[string]dcv1.DeploymentPhase{}, stopped: make(chan struct{})}
	go func() {
		defer close(rw.stopped)
		for ev := range w.ResultChan() {
			rc, ok := ev.Object.(*corev1.ReplicationController)
			if !ok {
				continue
			}
			rw.mu.Lock()
			if _, seen := rw.phases[rc.Name]; !seen && ev.Type != watch.Deleted {
				rw.created = append(rw.created, rc.Name)
			}
			rw.phases[rc.Name] = deployment.Phase(rc)
			running := 0
			for _, p := range rw.phases {
				if !deployment.IsTerminal(p) {
					running++
				}
			}
			rw.most = max(rw.most, running)
			rw.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-rw.stopped })
	return rw
}

// running returns the deployments running now, by name.
func (rw *runningWatch) running() []string {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	var out []string
	for name, p := range rw.phases {
		if !deployment.IsTerminal(p) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// resetMax starts counting the most at once afresh.
func (rw *runningWatch) resetMax() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.most = 0
}

func (rw *runningWatch) max() int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.most
}

// dcOf is the DeploymentConfig of a deployment's name.
func dcOf(rc string) string { return rc[:strings.LastIndex(rc, "-")] }

// policyStatus reads a policy's status.
func policyStatus(ctx context.Context, ns, name string) (dcv1.RolloutPolicyStatus, error) {
	p := &dcv1.RolloutPolicy{}
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, p)
	return p.Status, err
}

// lineOf is the names in a policy's line, in order.
func lineOf(s dcv1.RolloutPolicyStatus) []string {
	var out []string
	for _, w := range s.Line {
		out = append(out, w.Name)
	}
	return out
}

// progressing returns a DeploymentConfig's Progressing condition.
func progressing(ctx context.Context, ns, name string) (dcv1.DeploymentCondition, error) {
	dc := &dcv1.DeploymentConfig{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, dc); err != nil {
		return dcv1.DeploymentCondition{}, err
	}
	for _, cond := range dc.Status.Conditions {
		if cond.Type == dcv1.DeploymentProgressing {
			return cond, nil
		}
	}
	return dcv1.DeploymentCondition{}, nil
}

// waitWaiting waits until each named DeploymentConfig says, in its
// Progressing condition, that it waits for the policy for reason.
func waitWaiting(t *testing.T, ns, policy, reason string, names ...string) {
	t.Helper()
	for _, n := range names {
		waitFor(t, n+" "+reason, func(ctx context.Context) (bool, string, error) {
			cond, err := progressing(ctx, ns, n)
			ok := cond.Status == corev1.ConditionUnknown && cond.Reason == reason && strings.Contains(cond.Message, "RolloutPolicy "+policy)
			return ok, fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message), err
		})
	}
}
