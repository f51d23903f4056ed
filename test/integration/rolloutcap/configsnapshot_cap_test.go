// Package rolloutcap tests dc-controller's concurrency limits against a real
// kube-apiserver: a change of one ConfigMap that many DeploymentConfigs
// follow does not start all their rollouts at once, and a failure halts
// the rest. It runs a control plane and a dc-controller of its own, with
// the limits set: the shared suite's controller has none.
package rolloutcap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/integration/controlplane"
)

const (
	// maxRollouts is the controller's --max-rollouts.
	maxRollouts = 2
	// followers is how many DeploymentConfigs follow the ConfigMap.
	followers = 6
	// waitTimeout bounds every wait.
	waitTimeout = 60 * time.Second
)

// c is the suite's admin client; TestMain sets it once.
var c client.WithWatch

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	plane, err := controlplane.Start(controlplane.Options{Root: filepath.Join("..", "..", "..")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer plane.Stop()
	stop, err := controlplane.RunManager(plane.Config, controller.Options{
		DeployerImage: controlplane.DeployerImage, Workers: 2, MetricsAddr: "0", HealthAddr: "0",
		RolloutLimits: controller.RolloutLimits{Max: maxRollouts, HaltOnFailure: true},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	c = plane.Client
	return m.Run()
}

// runningWatch records, from a watch of a namespace's RCs, the most
// deployments that ran (were not Complete or Failed) at once.
type runningWatch struct {
	mu      sync.Mutex
	phases  map[string]dcv1.DeploymentPhase
	most    int
	stopped chan struct{}
}

func watchRunning(ctx context.Context, t *testing.T, ns string) *runningWatch {
	t.Helper()
	w, err := c.Watch(ctx, &corev1.ReplicationControllerList{}, client.InNamespace(ns))
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
			if ev.Type == watch.Deleted {
				delete(rw.phases, rc.Name)
			} else {
				rw.phases[rc.Name] = deployment.Phase(rc)
			}
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

// running returns the deployments running now, by the watch.
func (rw *runningWatch) running() []string {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	var out []string
	for name, p := range rw.phases {
		if !deployment.IsTerminal(p) {
			out = append(out, name)
		}
	}
	return out
}

func (rw *runningWatch) max() int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.most
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

// queuedCount is how many of the DeploymentConfigs say their rollout is
// queued.
func queuedCount(ctx context.Context, ns string) (int, error) {
	list := &dcv1.DeploymentConfigList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	n := 0
	for _, dc := range list.Items {
		for _, cond := range dc.Status.Conditions {
			if cond.Type == dcv1.DeploymentProgressing && cond.Reason == dcv1.RolloutQueuedReason && cond.Status == corev1.ConditionUnknown {
				n++
			}
		}
	}
	return n, nil
}

// TestConfigMapChangeRollsOutUnderTheCap: six DeploymentConfigs follow one
// ConfigMap. Its change starts two rollouts; the others wait, saying so,
// and start one by one as rollouts end. A failure halts the rest until the
// failed DeploymentConfig is deleted.
func TestConfigMapChangeRollsOutUnderTheCap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cap-"}}
	if err := c.Create(ctx, nsObj); err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}, Data: map[string]string{"v": "1"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	rw := watchRunning(ctx, t, ns)
	names := make([]string, followers)
	for i := range names {
		names[i] = fmt.Sprintf("f%d", i)
		dc := &dcv1.DeploymentConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names[i]},
			Spec: dcv1.DeploymentConfigSpec{
				Replicas:        1,
				ConfigSnapshots: &dcv1.ConfigSnapshots{},
				Template: &corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": names[i]}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1",
						EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}}}}}}},
				},
			},
		}
		if err := c.Create(ctx, dc); err != nil {
			t.Fatal(err)
		}
	}
	// The first rollouts of all six go through the cap, two at a time.
	done := map[string]bool{}
	for len(done) < followers {
		var next string
		waitFor(t, "a running first rollout", func(ctx context.Context) (bool, string, error) {
			for _, rc := range rw.running() {
				if !done[rc] {
					next = rc
					return true, "", nil
				}
			}
			return false, fmt.Sprintf("running %v, done %v", rw.running(), done), nil
		})
		if n, err := queuedCount(ctx, ns); err != nil || (len(done) == 0 && n == 0) {
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "queued rollouts", func(ctx context.Context) (bool, string, error) {
				n, err := queuedCount(ctx, ns)
				return n > 0, fmt.Sprint(n), err
			})
		}
		finish(t, ns, next, corev1.PodSucceeded)
		done[next] = true
	}
	if got := rw.max(); got > maxRollouts {
		t.Fatalf("%d rollouts ran at once; the cap is %d", got, maxRollouts)
	}

	// One change, six rollouts: the first two that start, one fails.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
			return err
		}
		cm.Data["v"] = "2"
		return c.Update(ctx, cm)
	})
	if err != nil {
		t.Fatal(err)
	}
	var started []string
	waitFor(t, "two second rollouts", func(ctx context.Context) (bool, string, error) {
		started = rw.running()
		return len(started) == maxRollouts, fmt.Sprint(started), nil
	})
	finish(t, ns, started[0], corev1.PodFailed)
	finish(t, ns, started[1], corev1.PodSucceeded)
	// Halted: the four others wait, and say why.
	waitFor(t, "the halt to show", func(ctx context.Context) (bool, string, error) {
		n, err := queuedCount(ctx, ns)
		return n == followers-maxRollouts && len(rw.running()) == 0, fmt.Sprintf("%d queued, running %v", n, rw.running()), err
	})
	failedDC := started[0][:len(started[0])-2] // <dc>-2
	if err := c.Delete(ctx, &dcv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: failedDC}}); err != nil {
		t.Fatal(err)
	}
	// Deleted, the failure halts nothing: the rest roll out, two at a time.
	for remaining := followers - maxRollouts; remaining > 0; remaining-- {
		var next string
		waitFor(t, "the next rollout", func(ctx context.Context) (bool, string, error) {
			for _, rc := range rw.running() {
				next = rc
				return true, "", nil
			}
			return false, "none running", nil
		})
		finish(t, ns, next, corev1.PodSucceeded)
	}
	if got := rw.max(); got > maxRollouts {
		t.Fatalf("%d rollouts ran at once; the cap is %d", got, maxRollouts)
	}
	list := &dcv1.DeploymentConfigList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, dc := range list.Items {
		if dc.Status.LatestVersion != 2 {
			t.Errorf("%s is at version %d, want 2", dc.Name, dc.Status.LatestVersion)
		}
	}
	if len(list.Items) != followers-1 {
		t.Errorf("%d DeploymentConfigs, want %d", len(list.Items), followers-1)
	}
}
