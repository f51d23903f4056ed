package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deployconfig/deployconfig/test/clusterenv"
	"github.com/deployconfig/deployconfig/test/invariants"
)

// round is one run of a scenario in a namespace of its own, watched by the
// invariant checker, with a random source from its seed.
type round struct {
	t       *testing.T
	ctx     context.Context
	ns      string
	seed    int64
	rand    *rand.Rand
	tracker *tracker
	faults  atomic.Int64
}

// runRounds runs a scenario -count times, each round a subtest named after
// its seed.
func runRounds(t *testing.T, scenario string, fn func(r *round)) {
	test := t.Name()
	for i := range suite.sizes.count {
		seed := suite.sizes.seed + int64(i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			fmt.Printf("chaos: %s: seed %d, deployer mode %s (replay: go test ./test/chaos -run '^%s$' -args -seed=%d -count=1%s)\n",
				scenario, seed, suite.mode, test, seed, suite.mode.replayArg())
			runRound(t, scenario, seed, fn)
		})
	}
}

// runRound runs one round and tallies it: the faults it injected, the
// rollouts that completed, the invariant violations seen.
func runRound(t *testing.T, scenario string, seed int64, fn func(r *round)) {
	ctx := t.Context()
	ns := newNamespace(t)
	checker, err := invariants.Start(ctx, suite.env.Config(), ns)
	if err != nil {
		t.Fatalf("starting the invariant checker: %v", err)
	}
	tr, err := startTracker(ctx, suite.env.Clientset(), ns)
	if err != nil {
		checker.Stop()
		t.Fatalf("starting the rollout tracker: %v", err)
	}
	r := &round{t: t, ctx: ctx, ns: ns, seed: seed, rand: newRand(seed, 0), tracker: tr}
	defer func() {
		violations := checker.Stop()
		if err := invariants.Err(violations); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
		completed, inController := tr.completed()
		suite.tally.add(scenario, roundCounts{faults: r.faults.Load(), rollouts: int64(completed), controller: int64(inController), violations: int64(len(violations)), failed: t.Failed()})
		t.Logf("seed %d, deployer mode %s: %d faults, %d rollouts completed (%d in dc-controller), %d violations",
			seed, suite.mode, r.faults.Load(), completed, inController, len(violations))
	}()
	fn(r)
}

// newRand is a random source for one seed and stream (a round's walkers
// each have their own, since a source is not safe for concurrent use).
func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// fault records one injected fault.
func (r *round) fault(format string, args ...any) {
	r.faults.Add(1)
	r.t.Logf("fault: "+format, args...)
}

// between returns a random duration in [lo, hi).
func between(rnd *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rnd.Int64N(int64(hi-lo)))
}

// newNamespace creates a namespace that enforces the restricted Pod
// Security Standard, as a cautious cluster's would, and deletes it when the
// test ends (unless the test failed and the cluster is kept for a look).
func newNamespace(t *testing.T) string {
	t.Helper()
	ns, err := suite.dcs.CreateNamespace(t.Context(), "chaos-", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	if ns != "" {
		t.Cleanup(func() {
			if !t.Failed() || os.Getenv(clusterenv.KeepEnv) == "" {
				_ = suite.dcs.DeleteNamespace(context.Background(), ns)
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return ns
}
