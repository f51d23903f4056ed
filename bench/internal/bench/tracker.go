package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
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
	t.markAt(name, step, time.Now(), latest)
}

// firstPod notes that the watch saw, at seen, a pod of version of name's
// rollout: the first of the phase's version is the rollout's first new pod.
func (t *tracker) firstPod(name string, version int64, seen time.Time) {
	if version != t.targetVersion() {
		return
	}
	t.markAt(name, report.StepFirstPod, seen, false)
}

// markAt records step of name at now, unless the rollout has ended or no
// phase is under way; latest replaces an earlier time.
func (t *tracker) markAt(name, step string, now time.Time, latest bool) {
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
	// The pods' informer is a factory of its own: the RCs' selects on a
	// label their pods do not carry.
	pods := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = dcv1.DeploymentSelectorLabel }))
	if _, err := pods.Core().V1().Pods().Informer().AddEventHandler(podHandler(func(pod *corev1.Pod, seen time.Time) {
		if name, version, ok := dcPodOf(pod); ok {
			t.firstPod(name, version, seen)
		}
	})); err != nil {
		return fmt.Errorf("watching pods: %w", err)
	}
	pods.Start(ctx.Done())
	return runInformer(ctx, factory, informer, handle)
}

// dcPodOf is the DC and version whose RC an application pod belongs to
// (its deployment label names the RC); deployer and hook pods are not.
func dcPodOf(pod *corev1.Pod) (string, int64, bool) {
	if _, deployer := pod.Labels[dcv1.DeployerPodForDeploymentLabel]; deployer {
		return "", 0, false
	}
	name := pod.Labels[dcv1.DeploymentConfigSelectorLabel]
	if name == "" {
		return "", 0, false
	}
	version, ok := deployment.NameVersion(name, pod.Labels[dcv1.DeploymentSelectorLabel])
	return name, version, ok
}

// podHandler calls seen with each pod the first time the watch shows it,
// and when it showed it.
func podHandler(seen func(pod *corev1.Pod, at time.Time)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*corev1.Pod); ok {
				seen(pod, time.Now())
			}
		},
	}
}

// rsPods finds the first new pod of each Deployment rollout: a pod of a
// ReplicaSet whose revision is the Deployment's generation (dc-bench's
// Deployments change nothing but their template, so the revision of
// generation g's ReplicaSet is g). Pods and ReplicaSets come on separate
// watches: a pod seen before its ReplicaSet waits for it, with the time
// it was seen.
type rsPods struct {
	t  *tracker
	mu sync.Mutex
	// owners are the ReplicaSets seen, by name: their Deployment and
	// revision.
	owners map[string]rsOwnerOf
	// early is when the first pod of a ReplicaSet not yet seen was seen.
	early map[string]time.Time
}

// rsOwnerOf is a ReplicaSet's Deployment and revision.
type rsOwnerOf struct {
	deployment string
	revision   int64
}

func newRSPods(t *tracker) *rsPods {
	return &rsPods{t: t, owners: map[string]rsOwnerOf{}, early: map[string]time.Time{}}
}

// replicaSet notes a ReplicaSet seen, with the first pod seen of it
// before it.
func (p *rsPods) replicaSet(rs *appsv1.ReplicaSet) {
	ref := metav1.GetControllerOf(rs)
	revision, err := strconv.ParseInt(rs.Annotations[deploymentRevisionAnnotation], 10, 64)
	if ref == nil || ref.Kind != "Deployment" || err != nil {
		return
	}
	owner := rsOwnerOf{deployment: ref.Name, revision: revision}
	p.mu.Lock()
	p.owners[rs.Name] = owner
	seen, early := p.early[rs.Name]
	delete(p.early, rs.Name)
	p.mu.Unlock()
	if early {
		p.t.firstPod(owner.deployment, owner.revision, seen)
	}
}

// pod notes a pod seen at seen.
func (p *rsPods) pod(pod *corev1.Pod, seen time.Time) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return
	}
	p.mu.Lock()
	owner, known := p.owners[ref.Name]
	if !known {
		if _, ok := p.early[ref.Name]; !ok {
			p.early[ref.Name] = seen
		}
	}
	p.mu.Unlock()
	if known {
		p.t.firstPod(owner.deployment, owner.revision, seen)
	}
}

// deploymentRevisionAnnotation is the Deployment controller's revision of
// a ReplicaSet.
const deploymentRevisionAnnotation = "deployment.kubernetes.io/revision"

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
	// The ReplicaSets' and pods' informers start with the factory;
	// runInformer waits for the Deployments' alone, as completion needs
	// only them.
	replicaSets := factory.Apps().V1().ReplicaSets().Informer()
	if _, err := replicaSets.AddEventHandler(scaleHandler(t, rsOwner, report.StepRSCreated)); err != nil {
		return fmt.Errorf("watching scales: %w", err)
	}
	newPods := newRSPods(t)
	if _, err := replicaSets.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if rs, ok := obj.(*appsv1.ReplicaSet); ok {
				newPods.replicaSet(rs)
			}
		},
		// The controller writes the revision annotation after the
		// create when it adopts or bumps a ReplicaSet.
		UpdateFunc: func(_, obj any) {
			if rs, ok := obj.(*appsv1.ReplicaSet); ok {
				newPods.replicaSet(rs)
			}
		},
	}); err != nil {
		return fmt.Errorf("watching ReplicaSets: %w", err)
	}
	if _, err := factory.Core().V1().Pods().Informer().AddEventHandler(podHandler(newPods.pod)); err != nil {
		return fmt.Errorf("watching pods: %w", err)
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
