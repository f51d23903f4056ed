package chaos

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// tally counts what the run did, in total and per scenario.
type tally struct {
	rounds     atomic.Int64
	faults     atomic.Int64
	rollouts   atomic.Int64
	violations atomic.Int64
	failures   atomic.Int64

	mu        sync.Mutex
	scenarios map[string]*scenarioTally
}

// scenarioTally is one scenario's share of the counts.
type scenarioTally struct {
	rounds, faults, rollouts, violations, failures int64
}

func newTally() *tally {
	return &tally{scenarios: map[string]*scenarioTally{}}
}

// add records one finished round of a scenario.
func (t *tally) add(scenario string, faults, rollouts, violations int64, failed bool) {
	t.rounds.Add(1)
	t.faults.Add(faults)
	t.rollouts.Add(rollouts)
	t.violations.Add(violations)
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.scenarios[scenario]
	if s == nil {
		s = &scenarioTally{}
		t.scenarios[scenario] = s
	}
	s.rounds++
	s.faults += faults
	s.rollouts += rollouts
	s.violations += violations
	if failed {
		s.failures++
		t.failures.Add(1)
	}
}

// summary is the report `make chaos` ends with.
func (t *tally) summary(took time.Duration) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := make([]string, 0, len(t.scenarios))
	for name := range t.scenarios {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "\nchaos summary (%s):\n", took.Round(time.Second))
	fmt.Fprintf(&b, "  %-28s %7s %7s %9s %11s %9s\n", "scenario", "rounds", "faults", "rollouts", "violations", "failures")
	for _, name := range names {
		s := t.scenarios[name]
		fmt.Fprintf(&b, "  %-28s %7d %7d %9d %11d %9d\n", name, s.rounds, s.faults, s.rollouts, s.violations, s.failures)
	}
	fmt.Fprintf(&b, "scenarios run: %d (%d rounds)\n", len(names), t.rounds.Load())
	fmt.Fprintf(&b, "faults injected: %d\n", t.faults.Load())
	fmt.Fprintf(&b, "rollouts completed: %d\n", t.rollouts.Load())
	fmt.Fprintf(&b, "violations found: %d\n", t.violations.Load())
	fmt.Fprintf(&b, "rounds failed: %d\n", t.failures.Load())
	fmt.Fprintf(&b, "chaos: scenarios run %d, faults injected %d, rollouts completed %d, violations found %d\n",
		len(names), t.faults.Load(), t.rollouts.Load(), t.violations.Load())
	return b.String()
}
