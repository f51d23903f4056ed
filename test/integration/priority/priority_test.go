// Package priority tests, against a real kube-apiserver, that dc-controller
// starts a new rollout before the queued bookkeeping of the rollouts in
// flight. It runs a control plane and a dc-controller of its own: the
// package next door shares one among tests that must not see this one's
// stalled clients.
package priority

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/integration/controlplane"
)

const (
	// busy is the number of rollouts in flight whose bookkeeping queues up.
	busy = 20
	// waitTimeout bounds every wait.
	waitTimeout = 60 * time.Second
	// slowQPS is the controllers' rate once the gate opens: slow enough
	// that the queued bookkeeping takes seconds, not the order under test.
	slowQPS = 5
	// rolloutPriority is the workqueue priority of work that starts a
	// rollout (internal/controller's priorityRollout); the rest is at 0.
	rolloutPriority = 100
)

// gate is the controllers' client rate limiter: shut, every request waits;
// open, requests pass at the limiter's rate. The test shuts it to queue
// work while no sync can finish, then opens it and watches the order the
// work is done in.
type gate struct {
	mu sync.Mutex
	// limiter is nil while the gate is shut.
	limiter flowcontrol.RateLimiter
	// changed is closed (and replaced) on every change.
	changed chan struct{}
}

func newGate() *gate {
	return &gate{limiter: flowcontrol.NewFakeAlwaysRateLimiter(), changed: make(chan struct{})}
}

// set opens the gate at a limiter's rate, or shuts it (nil).
func (g *gate) set(l flowcontrol.RateLimiter) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.limiter = l
	close(g.changed)
	g.changed = make(chan struct{})
}

func (g *gate) state() (flowcontrol.RateLimiter, chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limiter, g.changed
}

// Wait returns once the gate is open and its limiter lets a request pass.
func (g *gate) Wait(ctx context.Context) error {
	for {
		l, changed := g.state()
		if l != nil {
			return l.Wait(ctx)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Accept waits without a deadline.
func (g *gate) Accept() { _ = g.Wait(context.Background()) }

// TryAccept lets a request pass only when the gate is open and has a token.
func (g *gate) TryAccept() bool {
	l, _ := g.state()
	return l != nil && l.TryAccept()
}

// Stop does nothing: the gate outlives its limiters.
func (g *gate) Stop() {}

// QPS is the open gate's rate; 0 while shut.
func (g *gate) QPS() float32 {
	if l, _ := g.state(); l != nil {
		return l.QPS()
	}
	return 0
}

// TestNewRolloutJumpsTheQueues: with the bookkeeping of many rollouts in
// flight queued in both controllers, a template change gets its deployment
// and deployer pod before that bookkeeping is done, and the bookkeeping is
// done afterwards all the same.
func TestNewRolloutJumpsTheQueues(t *testing.T) {
	c, g := plane.client, plane.gate
	// Open the gate whatever happens, for the next test and the end.
	t.Cleanup(func() { g.set(flowcontrol.NewFakeAlwaysRateLimiter()) })
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, c)

	// Setup, at full speed: the busy rollouts have their deployer pods,
	// which never run (there is no kubelet), the probe has rolled out, and
	// both controllers have gone idle.
	names := make([]string, busy)
	for i := range names {
		names[i] = fmt.Sprintf("busy-%02d", i)
	}
	for _, name := range append(names, "probe") {
		if err := c.Create(ctx, newDC(ns, name)); err != nil {
			t.Fatalf("create dc %s: %v", name, err)
		}
	}
	for _, name := range append(names, "probe") {
		waitFor(t, "the deployer pod of "+name, func(ctx context.Context) (bool, error) {
			return exists(ctx, c, ns, deployment.DeployerPodName(deployment.Name(name, 1)))
		})
	}
	// A deployer pod that has not started moves its deployment to Pending
	// only after a grace (the controller's delayed requeue, which the queue
	// depth does not show): wait for it, so that what follows is the
	// bookkeeping of running rollouts and not their start.
	for _, name := range names {
		waitFor(t, "deployment "+name+" Pending", func(ctx context.Context) (bool, error) {
			rc := &corev1.ReplicationController{}
			err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: deployment.Name(name, 1)}, rc)
			return err == nil && deployment.Phase(rc) == dcv1.DeploymentPhasePending, err
		})
	}
	setPodPhase(ctx, t, c, ns, deployment.DeployerPodName(deployment.Name("probe", 1)), corev1.PodSucceeded)
	waitFor(t, "the probe's first rollout", func(ctx context.Context) (bool, error) {
		rc := &corev1.ReplicationController{}
		err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: deployment.Name("probe", 1)}, rc)
		return err == nil && deployment.Phase(rc) == dcv1.DeploymentPhaseComplete, client.IgnoreNotFound(err)
	})
	waitFor(t, "the controllers to go idle", idle)

	// Shut the gate: the bookkeeping of every busy rollout (its RC
	// reports a replica, its deployer pod runs, its owner changes its
	// history limit), then the probe's template change, queue up behind
	// one sync of each controller waiting for its first write. A running
	// rollout's counts alone are not written to its DC (its deployments
	// carry them), so the DC controller's write here is the observed
	// generation.
	// The DeploymentConfig controller queues an RC's count change a
	// second late (to fold it with the next), so the bookkeeping is waited
	// for before the probe's change.
	g.set(nil)
	for _, name := range names {
		reportReplica(ctx, t, c, ns, deployment.Name(name, 1))
		setPodPhase(ctx, t, c, ns, deployment.DeployerPodName(deployment.Name(name, 1)), corev1.PodRunning)
		changeHistoryLimit(ctx, t, c, ns, name)
	}
	waitFor(t, "the bookkeeping to be queued", func(context.Context) (bool, error) {
		return queued("deploymentconfig", 0) >= busy-1 && queued("deployer", 0) >= busy-1, nil
	})
	changeTemplate(ctx, t, c, ns, "probe")
	waitFor(t, "the probe's change to be queued", func(context.Context) (bool, error) {
		return queued("deploymentconfig", rolloutPriority) == 1, nil
	})

	// Open it slowly: the probe's deployer pod comes before most of the
	// bookkeeping, which each controller then does.
	g.set(flowcontrol.NewTokenBucketRateLimiter(slowQPS, 1))
	probePod := deployment.DeployerPodName(deployment.Name("probe", 2))
	waitFor(t, "the probe's new deployer pod", func(ctx context.Context) (bool, error) { return exists(ctx, c, ns, probePod) })
	reported, running := bookkeepingDone(ctx, t, c, ns, names)
	t.Logf("when the probe's deployer pod was created: %d of %d DCs had their status updated, %d of %d deployments were Running", reported, busy, running, busy)
	if reported >= busy || running >= busy {
		t.Errorf("the probe's deployer pod waited for the bookkeeping of every rollout in flight (%d DC statuses, %d phases of %d)", reported, running, busy)
	}

	g.set(flowcontrol.NewFakeAlwaysRateLimiter())
	waitFor(t, "the bookkeeping of every busy rollout", func(ctx context.Context) (bool, error) {
		reported, running := bookkeepingDone(ctx, t, c, ns, names)
		return reported == busy && running == busy, nil
	})
}

// controlPlane is what the package's tests share: one per process, as
// controller-runtime allows one controller of a name in a process.
type controlPlane struct {
	// client has no rate limit.
	client client.Client
	// gate is the controllers' rate limiter.
	gate *gate
}

// plane is set once by TestMain and only read afterwards.
var plane *controlPlane

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

// runSuite starts kube-apiserver and etcd with the CRD, and dc-controller
// (one worker per controller) writing through a gate, open, runs the
// tests and stops them all.
func runSuite(m *testing.M) int {
	p, err := controlplane.Start(controlplane.Options{Root: filepath.Join("..", "..", "..")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer p.Stop()
	g := newGate()
	stop, err := startControllers(p.Config, g)
	if err != nil {
		fmt.Fprintf(os.Stderr, "start controllers: %v\n", err)
		return 1
	}
	defer stop()
	admin := rest.CopyConfig(p.Config)
	admin.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	c, err := client.New(admin, client.Options{Scheme: p.Client.Scheme()})
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		return 1
	}
	plane = &controlPlane{client: c, gate: g}
	return m.Run()
}

// startControllers runs dc-controller's manager in this process, every
// client of its controllers writing through the gate, and returns what
// stops it.
func startControllers(cfg *rest.Config, g *gate) (func(), error) {
	ctrlCfg := rest.CopyConfig(cfg)
	// No QPS: every client of the controllers shares the gate.
	ctrlCfg.QPS, ctrlCfg.Burst, ctrlCfg.RateLimiter = 0, 0, g
	stop, err := controlplane.RunManager(ctrlCfg, controller.Options{
		DeployerImage: controlplane.DeployerImage, Workers: 1, MetricsAddr: "0", HealthAddr: "0",
	})
	if err != nil {
		return nil, err
	}
	return func() {
		// Open the gate so that nothing waits on it while stopping.
		g.set(flowcontrol.NewFakeAlwaysRateLimiter())
		stop()
	}, nil
}

func createNamespace(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "prio-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

// newDC is a DeploymentConfig with one container and a config-change
// trigger (the default).
func newDC(ns, name string) *dcv1.DeploymentConfig {
	return &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: 1,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example.com/web:1"}}},
			},
		},
	}
}

// waitFor polls cond until it holds, failing the test after waitTimeout.
func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// exists reports whether a pod exists.
func exists(ctx context.Context, c client.Client, ns, name string) (bool, error) {
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &corev1.Pod{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// idle reports whether both rollout controllers have nothing queued and
// no sync running.
func idle(context.Context) (bool, error) {
	for _, name := range []string{"deploymentconfig", "deployer"} {
		if gauge("workqueue_depth", map[string]string{"name": name}) > 0 || gauge("controller_runtime_active_workers", map[string]string{"controller": name}) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// queued is the depth of a controller's workqueue at a priority.
func queued(name string, priority int) int {
	return int(gauge("workqueue_depth", map[string]string{"name": name, "priority": strconv.Itoa(priority)}))
}

// gauge sums the gauges of a metric whose labels include want.
func gauge(metric string, want map[string]string) float64 {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return 0
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue next
				}
			}
			sum += m.GetGauge().GetValue()
		}
	}
	return sum
}

// reportReplica writes an RC's status as the RC manager would once it has
// made a pod.
func reportReplica(ctx context.Context, t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rc := &corev1.ReplicationController{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, rc); err != nil {
			return err
		}
		rc.Status.Replicas, rc.Status.ObservedGeneration = 1, rc.Generation
		return c.Status().Update(ctx, rc)
	})
	if err != nil {
		t.Fatalf("report a replica of %s: %v", name, err)
	}
}

// setPodPhase writes a pod's phase, as its kubelet would.
func setPodPhase(ctx context.Context, t *testing.T, c client.Client, ns, name string, phase corev1.PodPhase) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, pod); err != nil {
			return err
		}
		pod.Status.Phase = phase
		return c.Status().Update(ctx, pod)
	})
	if err != nil {
		t.Fatalf("set the phase of pod %s to %s: %v", name, phase, err)
	}
}

// changeTemplate changes a DeploymentConfig's image, which its
// config-change trigger rolls out.
func changeTemplate(ctx context.Context, t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"registry.example.com/web:2"}]}}}}`)
	dc := &dcv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Patch(ctx, dc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("change the template of %s: %v", name, err)
	}
}

// changeHistoryLimit changes a DeploymentConfig's revision history limit,
// which is a new generation its status must observe but no rollout.
func changeHistoryLimit(ctx context.Context, t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	patch := []byte(`{"spec":{"revisionHistoryLimit":3}}`)
	dc := &dcv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Patch(ctx, dc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("change the history limit of %s: %v", name, err)
	}
}

// bookkeepingDone counts the busy DeploymentConfigs whose status has
// observed their latest generation, and their deployments the deployer
// controller has moved to Running.
func bookkeepingDone(ctx context.Context, t *testing.T, c client.Client, ns string, names []string) (reported, running int) {
	t.Helper()
	for _, name := range names {
		dc := &dcv1.DeploymentConfig{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, dc); err != nil {
			t.Fatal(err)
		}
		if dc.Status.ObservedGeneration == dc.Generation {
			reported++
		}
		rc := &corev1.ReplicationController{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: deployment.Name(name, 1)}, rc); err != nil {
			t.Fatal(err)
		}
		if deployment.Phase(rc) == dcv1.DeploymentPhaseRunning {
			running++
		}
	}
	return reported, running
}
