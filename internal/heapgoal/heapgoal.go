// Package heapgoal sizes dc-controller's garbage-collection headroom to its
// live heap.
//
// Go lets the heap grow by GOGC percent of the live heap between
// collections. dc-controller's live heap is mostly its informer cache, which
// grows with the number of DeploymentConfigs and lives as long as the
// process, so a fixed percentage is a few megabytes on a small cluster and
// tens of megabytes on a large one, where that headroom becomes the largest
// part of the process that is not the cache itself. The Tuner keeps the
// headroom near a fixed size instead: GOGC stays at its maximum while the
// live heap is small and falls towards its minimum as the heap grows, so the
// collector runs more often only where the memory it saves is large.
package heapgoal

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"k8s.io/utils/clock"
)

// liveHeapMetric is the heap the last collection found reachable.
const liveHeapMetric = "/gc/heap/live:bytes"

// Tuner sets GOGC from the live heap at a fixed interval.
type Tuner struct {
	// MaxPercent is GOGC while the live heap is small.
	MaxPercent int
	// MinPercent bounds how often the collector runs on a large heap.
	MinPercent int
	// Headroom is how far, in bytes, the heap may grow past its live
	// size between collections, as long as GOGC stays within its bounds.
	Headroom uint64
	// Interval is how often the live heap is read.
	Interval time.Duration
	// Clock drives the interval.
	Clock clock.WithTicker

	// liveHeap and setPercent are the runtime's, replaced in tests.
	liveHeap   func() uint64
	setPercent func(int) int
}

// New returns a Tuner that reads the runtime's live heap and sets its GOGC.
func New(minPercent, maxPercent int, headroom uint64, interval time.Duration, clk clock.WithTicker) *Tuner {
	return &Tuner{
		MaxPercent: maxPercent,
		MinPercent: minPercent,
		Headroom:   headroom,
		Interval:   interval,
		Clock:      clk,
		liveHeap:   readLiveHeap,
		setPercent: debug.SetGCPercent,
	}
}

// Percent is GOGC for a live heap of live bytes: the percentage that lets
// the heap grow by Headroom, within [MinPercent, MaxPercent].
func (t *Tuner) Percent(live uint64) int {
	if live == 0 {
		return t.MaxPercent
	}
	p := t.Headroom * 100 / live
	switch {
	case p >= uint64(t.MaxPercent):
		return t.MaxPercent
	case p <= uint64(t.MinPercent):
		return t.MinPercent
	}
	return int(p)
}

// Run sets GOGC now and again whenever the live heap calls for another
// value, until ctx ends. Setting GOGC stops the world briefly, so it is
// set only when it changes.
func (t *Tuner) Run(ctx context.Context) {
	current := t.Percent(t.liveHeap())
	t.setPercent(current)
	ticker := t.Clock.NewTicker(t.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
		if p := t.Percent(t.liveHeap()); p != current {
			t.setPercent(p)
			current = p
		}
	}
}

// readLiveHeap reads the live heap from the runtime's metrics; 0 before
// the first collection.
func readLiveHeap() uint64 {
	sample := []metrics.Sample{{Name: liveHeapMetric}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}
