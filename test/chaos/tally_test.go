package chaos

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// tally counts what the run did, in its deployer mode, in total and per
// scenario.
type tally struct {
	mode       deployerMode
	rounds     atomic.Int64
	faults     atomic.Int64
	rollouts   atomic.Int64
	controller atomic.Int64
	violations atomic.Int64
	failures   atomic.Int64

	mu        sync.Mutex
	scenarios map[string]*scenarioTally
}

// scenarioTally is one scenario's share of the counts.
type scenarioTally struct {
	rounds, faults, rollouts, controller, violations, failures int64
}

func newTally(mode deployerMode) *tally {
	return &tally{mode: mode, scenarios: map[string]*scenarioTally{}}
}

// roundCounts are what one round did.
type roundCounts struct {
	faults int64
	// rollouts completed, and of those the ones that ran in dc-controller.
	rollouts, controller int64
	violations           int64
	failed               bool
}

// add records one finished round of a scenario.
func (t *tally) add(scenario string, c roundCounts) {
	t.rounds.Add(1)
	t.faults.Add(c.faults)
	t.rollouts.Add(c.rollouts)
	t.controller.Add(c.controller)
	t.violations.Add(c.violations)
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.scenarios[scenario]
	if s == nil {
		s = &scenarioTally{}
		t.scenarios[scenario] = s
	}
	s.rounds++
	s.faults += c.faults
	s.rollouts += c.rollouts
	s.controller += c.controller
	s.violations += c.violations
	if c.failed {
		s.failures++
		t.failures.Add(1)
	}
}

// summary is the report `make chaos` ends each deployer mode's run with.
// "in ctrl" counts the completed rollouts that ran in dc-controller rather
// than in a deployer pod.
func (t *tally) summary(took time.Duration) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := make([]string, 0, len(t.scenarios))
	for name := range t.scenarios {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "\nchaos summary, deployer mode %s (%s):\n", t.mode, took.Round(time.Second))
	fmt.Fprintf(&b, "  %-28s %7s %7s %9s %8s %11s %9s\n", "scenario", "rounds", "faults", "rollouts", "in ctrl", "violations", "failures")
	for _, name := range names {
		s := t.scenarios[name]
		fmt.Fprintf(&b, "  %-28s %7d %7d %9d %8d %11d %9d\n", name, s.rounds, s.faults, s.rollouts, s.controller, s.violations, s.failures)
	}
	fmt.Fprintf(&b, "deployer mode: %s\n", t.mode)
	fmt.Fprintf(&b, "scenarios run: %d (%d rounds)\n", len(names), t.rounds.Load())
	fmt.Fprintf(&b, "faults injected: %d\n", t.faults.Load())
	fmt.Fprintf(&b, "rollouts completed: %d (%d in dc-controller)\n", t.rollouts.Load(), t.controller.Load())
	fmt.Fprintf(&b, "violations found: %d\n", t.violations.Load())
	fmt.Fprintf(&b, "rounds failed: %d\n", t.failures.Load())
	fmt.Fprintf(&b, "chaos (%s): scenarios run %d, faults injected %d, rollouts completed %d, violations found %d\n",
		t.mode.label(), len(names), t.faults.Load(), t.rollouts.Load(), t.violations.Load())
	return b.String()
}
