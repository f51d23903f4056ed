package heapgoal

import (
	"context"
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
	tuner.liveHeap = func() uint64 { mu.Lock(); defer mu.Unlock(); reads++; return live }
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
