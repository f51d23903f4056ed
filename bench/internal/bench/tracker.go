package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// progressEvery is how often a waiting phase reports its progress.
const progressEvery = 30 * time.Second

// tracker records when each rollout of a phase completed, as dc-bench's
// watch sees it: a DC's deployment (RC) of the expected version reaching
// Complete (or Failed), a Deployment of the expected generation becoming
// complete as `kubectl rollout status` judges it. It also notes which
// rollouts have started (a DC's deployer pod exists, a Deployment's
// controller has seen the change), so that probes can wait until a phase's
// rollouts are all under way.
type tracker struct {
	mu sync.Mutex
	// target is the DC version or Deployment generation of the phase.
	target  int64
	started map[string]bool
	done    map[string]time.Time
	failed  map[string]time.Time
	// steps are when the watch saw steps of each rollout's critical path
	// (report.Step*): its phase Running, its new ReplicaSet, its first
	// and last scale.
	steps map[string]map[string]time.Time
	// changed is signalled (without blocking) on every new result.
	changed chan struct{}
}

func newTracker() *tracker {
	return &tracker{started: map[string]bool{}, done: map[string]time.Time{}, failed: map[string]time.Time{},
		steps: map[string]map[string]time.Time{}, changed: make(chan struct{}, 1)}
}

// expect starts a phase: rollouts to target from now on.
func (t *tracker) expect(target int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.target = target
	t.started = map[string]bool{}
	t.done = map[string]time.Time{}
	t.failed = map[string]time.Time{}
	t.steps = map[string]map[string]time.Time{}
}

// step notes the first time the watch saw a step of name's rollout, while
// it is in flight.
func (t *tracker) step(name, step string) {
	t.mark(name, step, false)
}

// scaled notes a scale of one of name's RCs or RSs while its rollout is in
// flight: the first is its first scale, the latest its last.
func (t *tracker) scaled(name string) {
	t.mark(name, report.StepFirstScale, false)
	t.mark(name, report.StepLastScale, true)
}

// mark records step of name now, unless the rollout has ended or no phase
// is under way; latest replaces an earlier time.
func (t *tracker) mark(name, step string, latest bool) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.target == 0 {
		return
	}
	if _, ok := t.done[name]; ok {
		return
	}
	if _, ok := t.failed[name]; ok {
		return
	}
	steps := t.steps[name]
	if steps == nil {
		steps = map[string]time.Time{}
		t.steps[name] = steps
	}
	if _, seen := steps[step]; !seen || latest {
		steps[step] = now
	}
}

// stepsSeen returns a copy of the steps seen so far.
func (t *tracker) stepsSeen() map[string]map[string]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]map[string]time.Time, len(t.steps))
	for name, steps := range t.steps {
		out[name] = make(map[string]time.Time, len(steps))
		for k, v := range steps {
			out[name][k] = v
		}
	}
	return out
}

// observe records a rollout of name to version that ended (failed or not).
func (t *tracker) observe(name string, version int64, failed bool) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if version != t.target {
		return
	}
	if _, ok := t.done[name]; ok {
		return
	}
	if _, ok := t.failed[name]; ok {
		return
	}
	if failed {
		t.failed[name] = now
	} else {
		t.done[name] = now
	}
	t.signal()
}

// targetVersion is the version of the phase under way.
func (t *tracker) targetVersion() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.target
}

// begin records that the rollout of name to version has started.
func (t *tracker) begin(name string, version int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if version != t.target || t.started[name] {
		return
	}
	t.started[name] = true
	t.signal()
}

// signal wakes a waiter without blocking; t.mu is held.
func (t *tracker) signal() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// results returns copies of the phase's results so far.
func (t *tracker) results() (done, failed map[string]time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	done, failed = make(map[string]time.Time, len(t.done)), make(map[string]time.Time, len(t.failed))
	for k, v := range t.done {
		done[k] = v
	}
	for k, v := range t.failed {
		failed[k] = v
	}
	return done, failed
}

// ended reports whether the named rollouts have all ended.
func (t *tracker) ended(names ...string) (int, bool) {
	return t.count(names, false)
}

// begun reports whether the named rollouts have all started (or ended:
// a rollout can end before its start was seen).
func (t *tracker) begun(names ...string) (int, bool) {
	return t.count(names, true)
}

// count counts the named rollouts that have ended, or, with started, that
// have started or ended; and whether that is all of them.
func (t *tracker) count(names []string, started bool) (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, name := range names {
		_, d := t.done[name]
		_, f := t.failed[name]
		if d || f || started && t.started[name] {
			n++
		}
	}
	return n, n == len(names)
}

// wait waits until the named rollouts have all ended, reporting progress
// to log under label.
func (t *tracker) wait(ctx context.Context, timeout time.Duration, log io.Writer, label string, names ...string) error {
	return t.waitFor(ctx, timeout, log, label, "ended", func() (int, bool) { return t.ended(names...) }, len(names))
}

// waitStarted waits until the named rollouts have all started.
func (t *tracker) waitStarted(ctx context.Context, timeout time.Duration, log io.Writer, label string, names ...string) error {
	return t.waitFor(ctx, timeout, log, label, "started", func() (int, bool) { return t.begun(names...) }, len(names))
}

// waitFor waits until count says all of total rollouts are what verb
// says, reporting progress to log under label.
func (t *tracker) waitFor(ctx context.Context, timeout time.Duration, log io.Writer, label, verb string, count func() (int, bool), total int) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	start := time.Now()
	for {
		n, all := count()
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %d of %d rollouts %s before the timeout (%s)", label, n, total, verb, timeout)
		case <-tick.C:
			fmt.Fprintf(log, "  %s: %d/%d %s after %.0f s\n", label, n, total, verb, time.Since(start).Seconds())
		case <-t.changed:
		}
	}
}

// watchDCs feeds the tracker from the namespace's RCs; it runs until ctx
// ends.
func watchDCs(ctx context.Context, kube kubernetes.Interface, namespace string, t *tracker) error {
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = dcv1.DeploymentConfigLabel }))
	handle := func(obj any) {
		rc, ok := obj.(*corev1.ReplicationController)
		if !ok {
			return
		}
		switch deployment.Phase(rc) {
		case dcv1.DeploymentPhasePending, dcv1.DeploymentPhaseRunning:
			// The deployer controller writes Pending once it has
			// created the deployer pod.
			name, version := rc.Labels[dcv1.DeploymentConfigLabel], deployment.Version(rc)
			t.begin(name, version)
			if deployment.Phase(rc) == dcv1.DeploymentPhaseRunning && version == t.targetVersion() {
				t.step(name, report.StepPhaseRunning)
			}
		case dcv1.DeploymentPhaseComplete:
			t.observe(rc.Labels[dcv1.DeploymentConfigLabel], deployment.Version(rc), false)
		case dcv1.DeploymentPhaseFailed:
			t.observe(rc.Labels[dcv1.DeploymentConfigLabel], deployment.Version(rc), true)
		}
	}
	informer := factory.Core().V1().ReplicationControllers().Informer()
	if _, err := informer.AddEventHandler(scaleHandler(t, rcOwner, "")); err != nil {
		return fmt.Errorf("watching scales: %w", err)
	}
	return runInformer(ctx, factory, informer, handle)
}

// watchDeployments feeds the tracker from the namespace's Deployments.
func watchDeployments(ctx context.Context, kube kubernetes.Interface, namespace string, t *tracker) error {
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace))
	handle := func(obj any) {
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return
		}
		if d.Status.ObservedGeneration >= d.Generation {
			t.begin(d.Name, d.Generation)
		}
		if deploymentComplete(d) {
			t.observe(d.Name, d.Generation, false)
		}
	}
	informer := factory.Apps().V1().Deployments().Informer()
	// The ReplicaSets' informer starts with the factory; runInformer
	// waits for the Deployments' alone, as completion needs only them.
	if _, err := factory.Apps().V1().ReplicaSets().Informer().AddEventHandler(scaleHandler(t, rsOwner, report.StepRSCreated)); err != nil {
		return fmt.Errorf("watching scales: %w", err)
	}
	return runInformer(ctx, factory, informer, handle)
}

// runInformer registers handle for adds and updates, starts the factory
// and waits for its cache.
func runInformer(ctx context.Context, factory informers.SharedInformerFactory, informer cache.SharedIndexInformer, handle func(any)) error {
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj any) { handle(obj) },
	}); err != nil {
		return fmt.Errorf("watching rollouts: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return fmt.Errorf("watching rollouts: the cache did not sync")
	}
	return nil
}

// deploymentComplete is `kubectl rollout status`'s test: the controller
// saw the current generation and every replica is updated and available,
// with no old ones left.
func deploymentComplete(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation &&
		s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want
}

// curve turns completion times into the chart's points, in seconds since
// start.
func curve(start time.Time, done map[string]time.Time) []report.Point {
	times := make([]float64, 0, len(done))
	for _, t := range done {
		times = append(times, t.Sub(start).Seconds())
	}
	slices.Sort(times)
	points := make([]report.Point, len(times))
	for i, s := range times {
		points[i] = report.Point{Seconds: s, Count: i + 1}
	}
	return points
}
