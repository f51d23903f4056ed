package bench

import (
	"context"
	"fmt"
	"time"
)

// Probes measure how soon a rollout starts while a throughput phase's N
// rollouts are in flight: N triggers made at once cannot all get a
// deployer pod quickly (each needs writes through dc-controller's 20-QPS
// clients), but one trigger made while they run should. The probes are
// objects of their own, in a namespace of their own, so that the phase's N,
// its API cost per rollout and its completion times stay the phase's; their
// pods do add to kube-controller-manager's work, which the floor counts.

// probeVersion is what each probe rolls out to: every probe is changed
// once, in the one phase it belongs to.
const probeVersion = 2

// prober runs a system's probes for one throughput scenario.
type prober struct {
	r         *runner
	sys       system
	namespace string
	// tr follows the probes' rollouts.
	tr *tracker
}

// newProber creates, in a namespace of their own, the probes of both
// throughput phases and waits for their first rollouts; watchCtx bounds
// the watch of their rollouts.
func (r *runner) newProber(ctx, watchCtx context.Context, sys system, n, repeat int) (*prober, error) {
	ns := namespaceFor(sys.slug(), fmt.Sprintf("%d-r%d-probes", n, repeat))
	tr, err := r.watchNamespace(watchCtx, sys, ns)
	if err != nil {
		return nil, err
	}
	pr := &prober{r: r, sys: sys, namespace: ns, tr: tr}
	var names []string
	for phase := range 2 {
		names = append(names, probeNames(phase, r.o.Probes)...)
	}
	fmt.Fprintf(r.o.Log, "%s: rolling out %d probes for the phases of %d...\n", sys.name, len(names), n)
	setup := &phaseRecord{System: sys.name, Phase: "probe setup", N: len(names), Namespace: ns, Version: 1, TriggerVerb: "create", Names: names}
	create := func(ctx context.Context, name string) error { return sys.create(ctx, r.e, ns, name) }
	if err := triggerAll(ctx, setup, tr, create); err != nil {
		return nil, err
	}
	if err := finish(ctx, r.o, setup, tr); err != nil {
		return nil, err
	}
	return pr, nil
}

// probeNames are the names of the probes of the phase-th throughput phase.
func probeNames(phase, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("probe%d-%05d", phase+1, i)
	}
	return names
}

// probePhase names the probe record of a throughput phase.
func probePhase(phase string) string {
	return "probes during " + phase
}

// run waits until every rollout of the throughput phase has started (its
// triggers are no longer queued: what follows is the work of rollouts in
// flight), then changes the phase's probes one every ProbeInterval, noting
// how many of the phase's rollouts were still in flight at each. It
// returns the probes' record; collect waits for their end.
func (pr *prober) run(ctx context.Context, phase *phaseRecord, main *tracker, index int) (*phaseRecord, error) {
	o := pr.r.o
	label := fmt.Sprintf("%s %s N=%d", phase.System, phase.Phase, phase.N)
	if err := main.waitStarted(ctx, o.PhaseTimeout, o.Log, label, phase.Names...); err != nil {
		return nil, err
	}
	names := probeNames(index, o.Probes)
	fmt.Fprintf(o.Log, "  %s: all started; %d probes, one every %s...\n", label, len(names), o.ProbeInterval)
	p := &phaseRecord{System: phase.System, Mode: phase.Mode, Phase: probePhase(phase.Phase), N: len(names), Namespace: pr.namespace,
		Version: probeVersion, TriggerVerb: "patch", Names: names, InFlight: phase.N, Probe: true, StillInFlight: phase.N, Repeat: phase.Repeat, First: phase.First,
		Load: probeLoad(phase.N, phase.N, phase.Phase)}
	pr.r.records = append(pr.r.records, p)
	pr.tr.expect(p.Version)
	p.Triggers = make(map[string]time.Time, len(names))
	tick := time.NewTicker(o.ProbeInterval)
	defer tick.Stop()
	p.Start = time.Now()
	for i, name := range names {
		if i > 0 {
			select {
			case <-ctx.Done():
				return p, ctx.Err()
			case <-tick.C:
			}
		}
		ended, _ := main.ended(phase.Names...)
		p.StillInFlight = min(p.StillInFlight, phase.N-ended)
		if err := pr.sys.change(ctx, pr.r.e, pr.namespace, name); err != nil {
			return p, fmt.Errorf("changing probe %s/%s: %w", pr.namespace, name, err)
		}
		p.Triggers[name] = time.Now()
	}
	p.Load = probeLoad(phase.N, p.StillInFlight, phase.Phase)
	return p, nil
}

// probeLoad describes probes for the latency table.
func probeLoad(inFlight, still int, phase string) string {
	return fmt.Sprintf("probes while %d in flight (%s; ≥ %d still in flight at each probe)", inFlight, phase, still)
}
