package heapgoal

import (
	"context"
	"math"
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
	clk := clocktesting.NewFakeClock(time.Now())
	tuner := New(10, 25, 16*mib, time.Second, clk)
	var mu sync.Mutex
	live, reads := uint64(20*mib), 0
	var set []int
	tuner.read = func() Reading { mu.Lock(); defer mu.Unlock(); reads++; return Reading{Live: live} }
	tuner.setPercent = func(p int) int { mu.Lock(); defer mu.Unlock(); set = append(set, p); return 0 }
	readsSoFar := func() int { mu.Lock(); defer mu.Unlock(); return reads }

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { tuner.Run(ctx); close(done) }()

	// Each step changes the live heap, ticks once, and waits for Run to
	// read it, so that no tick is sent before Run took the last one.
	waitReads := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for readsSoFar() < n {
			if time.Now().After(deadline) {
				t.Fatalf("Run read the live heap %d times, want %d", readsSoFar(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitReads(1)
	for _, heap := range []uint64{20 * mib, 128 * mib, 130 * mib, 512 * mib} {
		for !clk.HasWaiters() {
			time.Sleep(time.Millisecond)
		}
		n := readsSoFar()
		mu.Lock()
		live = heap
		mu.Unlock()
		clk.Step(time.Second)
		waitReads(n + 1)
	}
	cancel()
	<-done
	// 25 at the start; 20 MiB and 130 MiB change nothing.
	want := []int{25, 12, 10}
	mu.Lock()
	defer mu.Unlock()
	if len(set) != len(want) || set[0] != want[0] || set[1] != want[1] || set[2] != want[2] {
		t.Fatalf("GOGC set to %v, want %v", set, want)
	}
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
	clk := clocktesting.NewFakeClock(time.Now())
	tuner := New(5, 25, 8*mib, time.Second, clk)
	tuner.Ceiling = math.MaxInt64
	var mu sync.Mutex
	reading, reads := Reading{Live: 20 * mib}, 0
	var limits []int64
	tuner.read = func() Reading { mu.Lock(); defer mu.Unlock(); reads++; return reading }
	tuner.setPercent = func(int) int { return 0 }
	tuner.setLimit = func(l int64) int64 { mu.Lock(); defer mu.Unlock(); limits = append(limits, l); return 0 }
	readsSoFar := func() int { mu.Lock(); defer mu.Unlock(); return reads }

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { tuner.Run(ctx); close(done) }()
	waitReads := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for readsSoFar() < n {
			if time.Now().After(deadline) {
				t.Fatalf("Run read the heap %d times, want %d", readsSoFar(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitReads(1)
	steps := []Reading{
		{Live: 128 * mib, Overhead: 20 * mib},         // tuned: a limit
		{Live: 128*mib + 512<<10, Overhead: 20 * mib}, // moved by less than a MiB: kept
		{Live: 140 * mib, Overhead: 20 * mib},         // moved: set
		{Live: 20 * mib, Overhead: 20 * mib},          // small again: off
	}
	for _, r := range steps {
		for !clk.HasWaiters() {
			time.Sleep(time.Millisecond)
		}
		n := readsSoFar()
		mu.Lock()
		reading = r
		mu.Unlock()
		clk.Step(time.Second)
		waitReads(n + 1)
	}
	cancel()
	<-done
	want := []int64{math.MaxInt64, tuner.Limit(steps[0], tuner.Percent(steps[0].Live)), tuner.Limit(steps[2], tuner.Percent(steps[2].Live)), math.MaxInt64}
	mu.Lock()
	defer mu.Unlock()
	if len(limits) != len(want) {
		t.Fatalf("limits set %v, want %v", limits, want)
	}
	for i := range want {
		if limits[i] != want[i] {
			t.Fatalf("limits set %v, want %v", limits, want)
		}
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
