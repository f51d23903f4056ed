package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

const (
	// fanOutConfigMap is the ConfigMap every DC of the fan-out follows.
	fanOutConfigMap = "shared"
	// fanOutPolicy is the fan-out's RolloutPolicy.
	fanOutPolicy = "fleet"
	// fanOutReplicas: one pod each, so that the figures are about when
	// rollouts start, not about kube-controller-manager's pod writes.
	fanOutReplicas = 1
	// fanOutMaxConcurrent is the policy's maxConcurrent: 20 of 200.
	fanOutMaxConcurrent = "10%"
	// fanOutSample is how often the policy's waiting count is read to
	// integrate the waiting DC-minutes.
	fanOutSample = 250 * time.Millisecond
	// fanOutSelectTimeout bounds the wait for the policy to count the
	// DCs it selects.
	fanOutSelectTimeout = 2 * time.Minute
	// dcReconciles is the DeploymentConfig controller's reconcile counter.
	dcReconciles = `controller_runtime_reconcile_total{controller="deploymentconfig"}`
)

// fanOutCase is one way the fan-out's change goes: without a policy (the
// peer), or under a policy's spec.
type fanOutCase struct {
	name, slug string
	policy     *dcv1.RolloutPolicySpec
}

// fanOutCases are the cases of a run, the peer first; the last one also
// measures what waiting costs, under a freeze.
func fanOutCases() []fanOutCase {
	size := func(v string) *intstr.IntOrString { s := intstr.Parse(v); return &s }
	selector := metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "a"}}
	return []fanOutCase{
		{name: "no policy", slug: "none"},
		{name: "maxConcurrent: " + fanOutMaxConcurrent, slug: "cap",
			policy: &dcv1.RolloutPolicySpec{Selector: selector, MaxConcurrent: size(fanOutMaxConcurrent)}},
		{name: "maxConcurrent: " + fanOutMaxConcurrent + ", waves [1, 10%, rest]", slug: "waves",
			policy: &dcv1.RolloutPolicySpec{Selector: selector, MaxConcurrent: size(fanOutMaxConcurrent),
				Waves: []dcv1.RolloutWave{{Size: size("1")}, {Size: size("10%")}, {}}}},
	}
}

// fanOutDC is a DC of the fan-out: the benchmark's, labelled fleet=a,
// whose configuration snapshots follow the ConfigMap shared.
func fanOutDC(namespace, name string) *dcv1.DeploymentConfig {
	dc := newDC(namespace, name, fanOutReplicas)
	dc.Labels["fleet"] = "a"
	dc.Spec.ConfigSnapshots = &dcv1.ConfigSnapshots{}
	dc.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: fanOutConfigMap}}}}
	return dc
}

// fanOut measures one change of a ConfigMap that N DCs follow, in each
// case: the most rollouts at once, the time until the first and the last
// completes, and the DeploymentConfig controller's reconciles against
// the DC-minutes spent waiting; then, under a freeze, what waiting alone
// costs. Each case has a namespace and a dc-controller process of its own,
// so that its counters are its own.
func (r *runner) fanOut(ctx context.Context, rep *report.Report) error {
	stopRuntime, err := startRuntime(ctx, r.e, filepath.Join(r.e.dir, "dc-bench-runtime-fanout.log"))
	if err != nil {
		return err
	}
	defer stopRuntime()
	for _, n := range r.o.FanOutSizes {
		var peer *report.FanOut
		cases := fanOutCases()
		for i, fc := range cases {
			f, held, err := r.fanOutOne(ctx, n, fc, i == len(cases)-1)
			if err != nil {
				return err
			}
			if peer == nil {
				peer = &f
			}
			f.SetRatio(*peer)
			rep.FanOut = append(rep.FanOut, f)
			fmt.Fprintln(r.o.Log, "  "+f.Line())
			if held != nil {
				rep.FanOutHeld = append(rep.FanOutHeld, *held)
				fmt.Fprintln(r.o.Log, "  "+held.Line())
			}
		}
	}
	return nil
}

// fanOutOne runs one case: N DCs rolled out, the policy (if any) made,
// one change of the ConfigMap measured; with hold, a second change under a
// freeze is held for HoldWindow.
func (r *runner) fanOutOne(ctx context.Context, n int, fc fanOutCase, hold bool) (report.FanOut, *report.FanOutHeld, error) {
	ns := fmt.Sprintf("bench-fanout-%s-%d", fc.slug, n)
	c, err := startControllerArgs(ctx, r.e, filepath.Join(r.e.dir, fmt.Sprintf("dc-controller-fanout-%s-%d.log", fc.slug, n)))
	if err != nil {
		return report.FanOut{}, nil, err
	}
	defer c.stop()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := r.e.createNamespace(ctx, ns); err != nil {
		return report.FanOut{}, nil, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fanOutConfigMap}, Data: map[string]string{"v": "1"}}
	if err := r.e.client.Create(ctx, cm); err != nil {
		return report.FanOut{}, nil, fmt.Errorf("create the fan-out's ConfigMap: %w", err)
	}
	tr := newTracker()
	if err := watchDCs(watchCtx, r.e.kube, ns, tr); err != nil {
		return report.FanOut{}, nil, err
	}
	at := newAtOnce()
	if err := watchAtOnce(watchCtx, r.e.kube, ns, at); err != nil {
		return report.FanOut{}, nil, err
	}
	names := objectNames(n)
	fmt.Fprintf(r.o.Log, "Fan-out (%s): %d DCs follow one ConfigMap...\n", fc.name, n)
	first := &phaseRecord{System: report.SystemDC, Phase: "fan-out, first rollout", N: n, Namespace: ns, Version: 1, TriggerVerb: "create", Names: names}
	create := func(ctx context.Context, name string) error { return r.e.client.Create(ctx, fanOutDC(ns, name)) }
	if err := r.rollOutAtRest(ctx, first, tr, create); err != nil {
		return report.FanOut{}, nil, err
	}
	if fc.policy != nil {
		p := &dcv1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fanOutPolicy}, Spec: *fc.policy}
		if err := r.e.client.Create(ctx, p); err != nil {
			return report.FanOut{}, nil, fmt.Errorf("create the fan-out's policy: %w", err)
		}
		if err := r.waitPolicy(ctx, ns, fanOutSelectTimeout, func(s dcv1.RolloutPolicyStatus) bool { return int(s.Selected) == n }); err != nil {
			return report.FanOut{}, nil, err
		}
	}
	f, err := r.fanOutChange(ctx, c, ns, fc, names, tr, at)
	if err != nil {
		return f, nil, err
	}
	var held *report.FanOutHeld
	if hold {
		if held, err = r.fanOutHold(ctx, c, ns, n); err != nil {
			return f, nil, err
		}
	}
	// The controller goes first: it would otherwise work through the
	// namespace's deletion for nothing.
	c.stop()
	stopWatch()
	return f, held, r.cleanUp(ctx, ns)
}

// fanOutChange changes the ConfigMap's data and waits for every DC's
// rollout of it to end.
func (r *runner) fanOutChange(ctx context.Context, c *controllerProcess, ns string, fc fanOutCase, names []string, tr *tracker, at *atOnce) (report.FanOut, error) {
	p := &phaseRecord{System: report.SystemDC, Phase: "fan-out", N: len(names), Namespace: ns, Version: 2, Names: names}
	before, err := c.scrape(ctx)
	if err != nil {
		return report.FanOut{}, err
	}
	waiting := &waitingMinutes{}
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	if fc.policy != nil {
		go func() {
			defer close(sampled)
			r.sampleWaiting(sampleCtx, ns, waiting)
		}()
	} else {
		close(sampled)
	}
	tr.expect(2)
	at.expect(2)
	p.Start = time.Now()
	if err := r.setConfigData(ctx, ns, "2"); err != nil {
		stopSampling()
		return report.FanOut{}, err
	}
	err = collect(ctx, r.o, p, tr)
	stopSampling()
	<-sampled
	if err != nil {
		return report.FanOut{}, err
	}
	after, err := c.scrape(ctx)
	if err != nil {
		return report.FanOut{}, err
	}
	return report.FanOut{
		Case: fc.name, N: len(names), MostAtOnce: at.most(), FirstDone: firstDone(p), AllDone: p.Seconds(), Failed: len(p.Failed),
		Reconciles: after[dcReconciles] - before[dcReconciles], WaitingDCMinutes: waiting.total(),
	}, nil
}

// fanOutHold measures what waiting costs: the policy gets a freeze, the
// ConfigMap a change, and once all N wait in line the DeploymentConfig
// controller's reconciles are counted over HoldWindow.
func (r *runner) fanOutHold(ctx context.Context, c *controllerProcess, ns string, n int) (*report.FanOutHeld, error) {
	p := &dcv1.RolloutPolicy{}
	if err := r.e.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: fanOutPolicy}, p); err != nil {
		return nil, fmt.Errorf("read the fan-out's policy: %w", err)
	}
	patch := client.MergeFrom(p.DeepCopy())
	now := time.Now()
	p.Spec.Freezes = []dcv1.RolloutFreeze{{Name: "bench", Start: metav1.NewTime(now.Add(-time.Minute)), End: metav1.NewTime(now.Add(24 * time.Hour))}}
	if err := r.e.client.Patch(ctx, p, patch); err != nil {
		return nil, fmt.Errorf("freeze the fan-out's policy: %w", err)
	}
	fmt.Fprintf(r.o.Log, "Fan-out held: a change of %d DCs under a freeze, watched for %s...\n", n, r.o.HoldWindow)
	if err := r.setConfigData(ctx, ns, "3"); err != nil {
		return nil, err
	}
	if err := r.waitPolicy(ctx, ns, r.o.PhaseTimeout, func(s dcv1.RolloutPolicyStatus) bool { return int(s.Waiting) == n }); err != nil {
		return nil, err
	}
	// Those in line were just woken to say why they wait; the window
	// starts once the controller has settled.
	if err := c.waitIdle(ctx, inFlightSettleTimeout); err != nil && ctx.Err() != nil {
		return nil, err
	}
	before, err := c.scrape(ctx)
	if err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(r.o.HoldWindow):
	}
	after, err := c.scrape(ctx)
	if err != nil {
		return nil, err
	}
	held := report.NewFanOutHeld(n, r.o.HoldWindow.Seconds(), after[dcReconciles]-before[dcReconciles])
	return &held, nil
}

// setConfigData changes the fan-out's ConfigMap, which every DC follows.
func (r *runner) setConfigData(ctx context.Context, ns, v string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fanOutConfigMap}}
	data := fmt.Sprintf(`{"data":{"v":%q}}`, v)
	if err := r.e.client.Patch(ctx, cm, client.RawPatch(types.MergePatchType, []byte(data))); err != nil {
		return fmt.Errorf("change the fan-out's ConfigMap: %w", err)
	}
	return nil
}

// waitPolicy polls the fan-out policy's status until ok, for at most
// timeout.
func (r *runner) waitPolicy(ctx context.Context, ns string, timeout time.Duration, ok func(dcv1.RolloutPolicyStatus) bool) error {
	p := &dcv1.RolloutPolicy{}
	err := wait.PollUntilContextTimeout(ctx, fanOutSample, timeout, true, func(ctx context.Context) (bool, error) {
		if err := r.e.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: fanOutPolicy}, p); err != nil {
			return false, nil
		}
		return ok(p.Status), nil
	})
	if err != nil {
		return fmt.Errorf("fan-out: waiting for the policy's status (selected %d, running %d, waiting %d): %w",
			p.Status.Selected, p.Status.Running, p.Status.Waiting, err)
	}
	return nil
}

// sampleWaiting integrates the policy's status.waiting over time until
// ctx ends.
func (r *runner) sampleWaiting(ctx context.Context, ns string, w *waitingMinutes) {
	tick := time.NewTicker(fanOutSample)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			p := &dcv1.RolloutPolicy{}
			if err := r.e.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: fanOutPolicy}, p); err == nil {
				w.add(float64(p.Status.Waiting) * now.Sub(last).Minutes())
			}
			last = now
		}
	}
}

// waitingMinutes is the DC-minutes spent waiting, summed by one sampler.
type waitingMinutes struct {
	mu  sync.Mutex
	sum float64
}

func (w *waitingMinutes) add(v float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sum += v
}

func (w *waitingMinutes) total() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sum
}

// firstDone is from the phase's start to its first completion, in seconds.
func firstDone(p *phaseRecord) float64 {
	var first time.Time
	for _, t := range p.Done {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	if first.IsZero() {
		return 0
	}
	return first.Sub(p.Start).Seconds()
}

// atOnce counts the deployments of one version that exist and have not
// ended, and the most there were.
type atOnce struct {
	mu      sync.Mutex
	version int64
	running map[string]bool
	ended   map[string]bool
	peak    int
}

func newAtOnce() *atOnce {
	return &atOnce{running: map[string]bool{}, ended: map[string]bool{}}
}

// expect starts counting the deployments of version.
func (a *atOnce) expect(version int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.version, a.running, a.ended, a.peak = version, map[string]bool{}, map[string]bool{}, 0
}

// observe counts one RC as the watch saw it.
func (a *atOnce) observe(rc *corev1.ReplicationController) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if deployment.Version(rc) != a.version || a.ended[rc.Name] {
		return
	}
	if deployment.IsTerminal(deployment.Phase(rc)) {
		delete(a.running, rc.Name)
		a.ended[rc.Name] = true
		return
	}
	a.running[rc.Name] = true
	a.peak = max(a.peak, len(a.running))
}

// most is the most deployments that ran at once.
func (a *atOnce) most() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.peak
}

// watchAtOnce feeds a from the namespace's RCs until ctx ends.
func watchAtOnce(ctx context.Context, kube kubernetes.Interface, namespace string, a *atOnce) error {
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = dcv1.DeploymentConfigLabel }))
	informer := factory.Core().V1().ReplicationControllers().Informer()
	return runInformer(ctx, factory, informer, func(obj any) {
		if rc, ok := obj.(*corev1.ReplicationController); ok {
			a.observe(rc)
		}
	})
}
