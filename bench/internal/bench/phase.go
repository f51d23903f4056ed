package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
)

// phaseRecord is what dc-bench saw of one phase: a set of rollouts of one
// system in one namespace, triggered together (or one at a time).
type phaseRecord struct {
	System string
	// Mode is a DeploymentConfig phase's deployer mode, "" for the
	// Deployment's.
	Mode      string
	Phase     string
	N         int
	Namespace string
	// Repeat numbers the repeat of a throughput phase (from 1); First is
	// the system that ran first in it.
	Repeat int
	First  string
	// Load describes the phase for the latency table.
	Load string
	// InFlight is the number of rollouts in flight the phase's rollouts
	// were triggered among: N for a phase triggered at once, 1 at idle,
	// and for probes the N of the throughput phase they ran in.
	InFlight int
	// Probe marks probe rollouts: triggered one at a time while the
	// InFlight rollouts of a throughput phase were under way.
	// StillInFlight is then the fewest of those not yet ended at any
	// probe's trigger.
	Probe         bool
	StillInFlight int
	// Version is the DC version (or Deployment generation) the phase
	// rolls out.
	Version int64
	// TriggerVerb is the audited verb of the triggers: create or patch.
	TriggerVerb string
	Names       []string
	// Start is just before the first trigger; End is after the last
	// rollout ended and the phase settled: the phase's audit window.
	Start, End time.Time
	// Triggers are when each trigger's response arrived (dc-bench's clock),
	// used when the audit log lacks the request.
	Triggers     map[string]time.Time
	Done, Failed map[string]time.Time
	// Steps are the steps of each rollout's critical path the watch saw
	// (see tracker.steps).
	Steps map[string]map[string]time.Time
	// CPU is the CPU seconds of each control-plane process over the phase
	// (see report.Run.ControlPlaneCPU).
	CPU map[string]float64
}

// Seconds is from the phase's start to its last completion.
func (p *phaseRecord) Seconds() float64 {
	var last time.Time
	for _, t := range p.Done {
		if t.After(last) {
			last = t
		}
	}
	for _, t := range p.Failed {
		if t.After(last) {
			last = t
		}
	}
	if last.IsZero() {
		return 0
	}
	return last.Sub(p.Start).Seconds()
}

// run returns the phase as the report's Run.
func (p *phaseRecord) run() report.Run {
	return report.Run{System: p.System, Seconds: p.Seconds(), Completed: len(p.Done), Failed: len(p.Failed), Curve: curve(p.Start, p.Done), ControlPlaneCPU: p.CPU}
}

// triggerAll starts the phase: it triggers every rollout, at most
// createWorkers at once, and records when each trigger was answered.
func triggerAll(ctx context.Context, p *phaseRecord, tr *tracker, trigger func(ctx context.Context, name string) error) error {
	tr.expect(p.Version)
	p.Triggers = make(map[string]time.Time, len(p.Names))
	var mu sync.Mutex
	p.Start = time.Now()
	return parallel(ctx, len(p.Names), createWorkers, func(ctx context.Context, i int) error {
		name := p.Names[i]
		if err := trigger(ctx, name); err != nil {
			return fmt.Errorf("%s %s/%s: %w", p.TriggerVerb, p.Namespace, name, err)
		}
		mu.Lock()
		p.Triggers[name] = time.Now()
		mu.Unlock()
		return nil
	})
}

// finish waits for every rollout of the phase to end, then for the phase
// to settle, and records the results.
func finish(ctx context.Context, o Options, p *phaseRecord, tr *tracker) error {
	if err := collect(ctx, o, p, tr); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(o.Settle):
	}
	p.End = time.Now()
	return nil
}

// collect waits for every rollout of the phase to end and records the
// results; the phase ends there.
func collect(ctx context.Context, o Options, p *phaseRecord, tr *tracker) error {
	label := fmt.Sprintf("%s %s N=%d", p.System, p.Phase, p.N)
	err := tr.wait(ctx, o.PhaseTimeout, o.Log, label, p.Names...)
	p.Done, p.Failed = tr.results()
	p.Steps = tr.stepsSeen()
	fmt.Fprintf(o.Log, "  %s: %d complete, %d failed in %.1f s\n", label, len(p.Done), len(p.Failed), p.Seconds())
	p.End = time.Now()
	return err
}
