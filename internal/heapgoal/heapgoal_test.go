package heapgoal

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

const mib = 1 << 20

func TestPercent(t *testing.T) {
	tuner := New(10, 25, 16*mib, time.Second, clocktesting.NewFakeClock(time.Now()))
	tests := []struct {
		name string
		live uint64
		want int
	}{
		{name: "before the first collection", live: 0, want: 25},
		{name: "small heap keeps the maximum", live: 20 * mib, want: 25},
		{name: "headroom is exactly the maximum's", live: 64 * mib, want: 25},
		{name: "larger heap, fixed headroom", live: 128 * mib, want: 12},
		{name: "very large heap stops at the minimum", live: 1024 * mib, want: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tuner.Percent(tt.live); got != tt.want {
				t.Errorf("Percent(%d MiB) = %d, want %d", tt.live/mib, got, tt.want)
			}
		})
	}
}

func TestRunSetsPercentWhenItChanges(t *testing.T) {
	tuner := New(10, 25, 16*mib, time.Second, clocktesting.NewFakeClock(time.Now()))
	percents, _ := runThrough(t, tuner, []Reading{{Live: 20 * mib}, {Live: 20 * mib}, {Live: 128 * mib}, {Live: 130 * mib}, {Live: 512 * mib}})
	// 25 at the start; 20 MiB and 130 MiB change nothing.
	if want := []int{25, 12, 10}; !slices.Equal(percents, want) {
		t.Fatalf("GOGC set to %v, want %v", percents, want)
	}
}

// runThrough runs tuner over readings, the first read at its start and
// each of the others after one tick, and returns the GOGC values and
// memory limits it set. Each tick waits for Run to have read the one
// before, so that no reading is skipped.
func runThrough(t *testing.T, tuner *Tuner, readings []Reading) (percents []int, limits []int64) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Now())
	tuner.Clock = clk
	var mu sync.Mutex
	next := 0
	tuner.read = func() Reading { mu.Lock(); defer mu.Unlock(); next++; return readings[next-1] }
	tuner.setPercent = func(p int) int { mu.Lock(); defer mu.Unlock(); percents = append(percents, p); return 0 }
	tuner.setLimit = func(l int64) int64 { mu.Lock(); defer mu.Unlock(); limits = append(limits, l); return 0 }
	read := func() int { mu.Lock(); defer mu.Unlock(); return next }
	waitReads := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for read() < n {
			if time.Now().After(deadline) {
				t.Fatalf("Run read the heap %d times, want %d", read(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { tuner.Run(ctx); close(done) }()
	waitReads(1)
	for n := 2; n <= len(readings); n++ {
		for !clk.HasWaiters() {
			time.Sleep(time.Millisecond)
		}
		clk.Step(time.Second)
		waitReads(n)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return percents, limits
}

func TestLimit(t *testing.T) {
	tuner := New(5, 25, 8*mib, time.Second, clocktesting.NewFakeClock(time.Now()))
	tuner.Ceiling = 1024 * mib
	tests := []struct {
		name    string
		reading Reading
		want    int64
	}{
		{name: "small heap: the ceiling", reading: Reading{Live: 20 * mib, Overhead: 10 * mib}, want: 1024 * mib},
		// GOGC 6: a goal of 135.68 MiB, 20 MiB beside it, 4 MiB to grow.
		{name: "tuned heap", reading: Reading{Live: 128 * mib, Overhead: 20 * mib}, want: over95(128*mib + 128*mib*6/100 + 20*mib + 4*mib)},
		// GOGC 5 at the minimum: 537.6 MiB of goal.
		{name: "heap at the minimum percent", reading: Reading{Live: 512 * mib, Overhead: 40 * mib}, want: over95(512*mib + 512*mib*5/100 + 40*mib + 4*mib)},
		// GOMEMLIMIT is never raised.
		{name: "above the ceiling", reading: Reading{Live: 1024 * mib, Overhead: 40 * mib}, want: 1024 * mib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tuner.Limit(tt.reading, tuner.Percent(tt.reading.Live))
			if got != tt.want {
				t.Errorf("Limit = %d, want %d", got, tt.want)
			}
			if tt.want != tuner.Ceiling {
				// What the runtime holds the process to, 95 % of the
				// limit, covers the goal, the overhead and growth.
				held := float64(got) * 0.95
				goal := float64(tt.reading.Live) * (1 + float64(tuner.Percent(tt.reading.Live))/100)
				if held < goal+float64(tt.reading.Overhead) {
					t.Errorf("95%% of the limit, %.0f MiB, is below the goal and overhead, %.0f MiB", held/mib, (goal+float64(tt.reading.Overhead))/mib)
				}
			}
		})
	}
}

// over95 is the limit of which the runtime holds the process to n bytes.
func over95(n uint64) int64 { return int64(float64(n) / 0.95) }

func TestRunSetsLimitWhenItMoves(t *testing.T) {
	tuner := New(5, 25, 8*mib, time.Second, clocktesting.NewFakeClock(time.Now()))
	tuner.Ceiling = math.MaxInt64
	steps := []Reading{
		{Live: 20 * mib},                              // small: the ceiling
		{Live: 128 * mib, Overhead: 20 * mib},         // tuned: a limit
		{Live: 128*mib + 512<<10, Overhead: 20 * mib}, // moved by less than a MiB: kept
		{Live: 140 * mib, Overhead: 20 * mib},         // moved: set
		{Live: 20 * mib, Overhead: 20 * mib},          // small again: the ceiling
		{Live: 21 * mib, Overhead: 20 * mib},          // still small: the ceiling, kept
	}
	_, limits := runThrough(t, tuner, steps)
	limitAt := func(r Reading) int64 { return tuner.Limit(r, tuner.Percent(r.Live)) }
	if want := []int64{math.MaxInt64, limitAt(steps[1]), limitAt(steps[3]), math.MaxInt64}; !slices.Equal(limits, want) {
		t.Fatalf("limits set %v, want %v", limits, want)
	}
}

func TestReadMemory(t *testing.T) {
	// The runtime's own figures: a heap exists, and beside it at least
	// the stacks of this test's goroutines.
	r := readMemory()
	if r.Overhead == 0 || r.Overhead > 1<<30 {
		t.Errorf("overhead %d bytes, want some, and less than 1 GiB", r.Overhead)
	}
}
