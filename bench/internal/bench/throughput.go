package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
)

// system is one side of the comparison: how to create its objects, change
// their template and watch their rollouts.
type system struct {
	name string
	// mode is a DeploymentConfig's deployer mode (ModePod or
	// ModeController); "" for the Deployment.
	mode   string
	create func(ctx context.Context, e *env, namespace, name string) error
	change func(ctx context.Context, e *env, namespace, name string) error
	watch  func(ctx context.Context, e *env, namespace string, t *tracker) error
}

// dcSystem is deployconfig in pod mode.
func dcSystem() system {
	return dcSystemIn(ModePod)
}

// dcSystemIn is deployconfig with dc-controller in a deployer mode.
func dcSystemIn(mode string) system {
	return system{
		name: report.SystemDC,
		mode: mode,
		create: func(ctx context.Context, e *env, namespace, name string) error {
			return e.client.Create(ctx, newDC(namespace, name, e.opts.Replicas))
		},
		change: func(ctx context.Context, e *env, namespace, name string) error {
			dc := &dcv1.DeploymentConfig{}
			dc.Namespace, dc.Name = namespace, name
			return e.client.Patch(ctx, dc, templateChange(2))
		},
		watch: func(ctx context.Context, e *env, namespace string, t *tracker) error {
			return watchDCs(ctx, e.kube, namespace, t)
		},
	}
}

// deploymentSystem is the Kubernetes Deployment controller.
func deploymentSystem() system {
	return system{
		name: report.SystemDeployment,
		create: func(ctx context.Context, e *env, namespace, name string) error {
			return e.client.Create(ctx, newDeployment(namespace, name, e.opts.Replicas))
		},
		change: func(ctx context.Context, e *env, namespace, name string) error {
			d := &appsv1.Deployment{}
			d.Namespace, d.Name = namespace, name
			return e.client.Patch(ctx, d, templateChange(2))
		},
		watch: func(ctx context.Context, e *env, namespace string, t *tracker) error {
			return watchDeployments(ctx, e.kube, namespace, t)
		},
	}
}

// label names the system and its mode in progress lines and orders,
// e.g. "DC (controller)".
func (s system) label() string {
	if s.mode == "" {
		return s.name
	}
	return report.ModeLabel(s.mode)
}

// slug names the system in namespaces: pod-mode DCs keep the name they
// always had, e.g. bench-deploymentconfig-200, other modes add theirs.
func (s system) slug() string {
	if s.mode == "" || s.mode == ModePod {
		return s.name
	}
	return s.name + "-" + s.mode
}

// systems are the systems the throughput scenario compares: DCs in each
// of the run's deployer modes, and the Deployment.
func (r *runner) systems() []system {
	var out []system
	if r.o.compares(report.SystemDC) {
		for _, mode := range r.o.DCModes {
			out = append(out, dcSystemIn(mode))
		}
	}
	if r.o.compares(report.SystemDeployment) {
		out = append(out, deploymentSystem())
	}
	return out
}

// primarySystems are the systems of the scenarios that run DCs in one
// mode only: the primary mode's DCs and the Deployment.
func (r *runner) primarySystems() []system {
	var out []system
	for _, sys := range []system{dcSystemIn(r.o.primaryMode()), deploymentSystem()} {
		if r.o.compares(sys.name) {
			out = append(out, sys)
		}
	}
	return out
}

// namespaceFor is a scenario's namespace, e.g. bench-deploymentconfig-200.
func namespaceFor(sys, scenario string) string {
	return "bench-" + strings.ToLower(sys) + "-" + scenario
}

// throughput runs, Repeat times, the first rollout and a template change
// of n objects of each system, one system after the other, each in a
// namespace of its own that is deleted afterwards; the system that goes
// first alternates from one repeat to the next.
func (r *runner) throughput(ctx context.Context, n int) error {
	for k := 1; k <= r.o.Repeat; k++ {
		order := repeatOrder(r.systems(), k)
		for _, sys := range order {
			if err := r.ctrl.use(ctx, sys.mode); err != nil {
				return err
			}
			if err := r.rollAll(ctx, sys, n, k, order[0].label()); err != nil {
				return err
			}
		}
	}
	return nil
}

// repeatOrder is the order the systems run in repeat k (from 1): as given
// in the first, rotated by one more in each repeat after it (with two
// systems: reversed in even repeats), so that none always meets a cluster
// another has just worked (caches, etcd compaction, the API server's
// memory) or always the fresh one.
func repeatOrder(systems []system, k int) []system {
	if len(systems) == 0 {
		return nil
	}
	shift := (k - 1) % len(systems)
	return append(slices.Clone(systems[shift:]), systems[:shift]...)
}

// rollAll runs both phases for one system, each with its probes when the
// run has any.
func (r *runner) rollAll(ctx context.Context, sys system, n, repeat int, first string) error {
	ns := namespaceFor(sys.slug(), fmt.Sprintf("%d-r%d", n, repeat))
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	tr, err := r.watchNamespace(watchCtx, sys, ns)
	if err != nil {
		return err
	}
	var probes *prober
	if r.o.Probes > 0 {
		if probes, err = r.newProber(ctx, watchCtx, sys, n, repeat); err != nil {
			return err
		}
	}
	names := objectNames(n)
	phases := []struct {
		phase, verb string
		version     int64
		trigger     func(ctx context.Context, e *env, namespace, name string) error
	}{
		{report.PhaseFirst, "create", 1, sys.create},
		{report.PhaseChange, "patch", 2, sys.change},
	}
	for i, ph := range phases {
		fmt.Fprintf(r.o.Log, "%s: %s of %d (repeat %d of %d, %s first)...\n", sys.label(), ph.phase, n, repeat, r.o.Repeat, first)
		p := &phaseRecord{System: sys.name, Mode: sys.mode, Phase: ph.phase, N: n, Namespace: ns, Version: ph.version, TriggerVerb: ph.verb, Repeat: repeat, First: first,
			Names: names, Load: fmt.Sprintf("%d triggered at once (%s)", n, ph.phase), InFlight: n}
		r.records = append(r.records, p)
		trigger := func(ctx context.Context, name string) error { return ph.trigger(ctx, r.e, ns, name) }
		cpuBefore := r.e.controlPlaneCPU()
		if err := triggerAll(ctx, p, tr, trigger); err != nil {
			return err
		}
		var probed *phaseRecord
		if probes != nil {
			if probed, err = probes.run(ctx, p, tr, i); err != nil {
				return err
			}
		}
		if err := finish(ctx, r.o, p, tr); err != nil {
			return err
		}
		p.CPU = cpuSince(cpuBefore, r.e.controlPlaneCPU())
		if probed != nil {
			if err := collect(ctx, r.o, probed, probes.tr); err != nil {
				return err
			}
		}
	}
	stopWatch()
	if probes != nil {
		if err := r.cleanUp(ctx, probes.namespace); err != nil {
			return err
		}
	}
	return r.cleanUp(ctx, ns)
}

// watchNamespace creates a scenario's namespace and starts a tracker of
// the system's rollouts there, until ctx ends.
func (r *runner) watchNamespace(ctx context.Context, sys system, ns string) (*tracker, error) {
	if err := r.e.createNamespace(ctx, ns); err != nil {
		return nil, err
	}
	tr := newTracker()
	if err := sys.watch(ctx, r.e, ns, tr); err != nil {
		return nil, err
	}
	return tr, nil
}

// latency rolls out LatencySamples objects of each system one at a time:
// each template change waits for the previous rollout to end.
func (r *runner) latency(ctx context.Context) error {
	for _, sys := range r.primarySystems() {
		if err := r.oneAtATime(ctx, sys); err != nil {
			return err
		}
	}
	return nil
}

// oneAtATime creates the objects, waits for their first rollouts, then
// changes them one after the other.
func (r *runner) oneAtATime(ctx context.Context, sys system) error {
	k := r.o.LatencySamples
	ns := namespaceFor(sys.slug(), "latency")
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	tr, err := r.watchNamespace(watchCtx, sys, ns)
	if err != nil {
		return err
	}
	names := objectNames(k)
	fmt.Fprintf(r.o.Log, "%s: latency at idle, %d rollouts one at a time...\n", sys.name, k)
	setup := &phaseRecord{System: sys.name, Phase: "setup", N: k, Namespace: ns, Version: 1, TriggerVerb: "create", Names: names}
	if err := triggerAll(ctx, setup, tr, func(ctx context.Context, name string) error { return sys.create(ctx, r.e, ns, name) }); err != nil {
		return err
	}
	if err := finish(ctx, r.o, setup, tr); err != nil {
		return err
	}
	p := &phaseRecord{System: sys.name, Mode: sys.mode, Phase: "idle", N: k, Namespace: ns, Version: 2, TriggerVerb: "patch", Names: names,
		Load: "idle (one at a time)", InFlight: 1}
	r.records = append(r.records, p)
	if err := r.sequential(ctx, sys, p, tr); err != nil {
		return err
	}
	stopWatch()
	return r.cleanUp(ctx, ns)
}

// sequential triggers the phase's rollouts one at a time.
func (r *runner) sequential(ctx context.Context, sys system, p *phaseRecord, tr *tracker) error {
	tr.expect(p.Version)
	p.Triggers = map[string]time.Time{}
	p.Start = time.Now()
	for _, name := range p.Names {
		if err := sys.change(ctx, r.e, p.Namespace, name); err != nil {
			return fmt.Errorf("changing %s/%s: %w", p.Namespace, name, err)
		}
		p.Triggers[name] = time.Now()
		if err := tr.wait(ctx, r.o.PhaseTimeout, r.o.Log, sys.name+" idle", name); err != nil {
			return err
		}
	}
	return finish(ctx, r.o, p, tr)
}
