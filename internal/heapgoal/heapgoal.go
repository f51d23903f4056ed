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
//
// The heap's goal bounds the objects, not the memory the process holds:
// Go keeps pages freed by a collection for later allocations, returning
// them to the operating system only slowly, up to a tenth of the heap
// more. On a large heap the Tuner also sets a soft memory limit just above
// the goal and what the runtime needs beside the heap, which makes Go
// return those pages at once; the limit follows the heap at each reading.
package heapgoal

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"k8s.io/utils/clock"
)

// The runtime's metrics the Tuner reads: the heap the last collection
// found reachable, and what the process holds (total less released), of
// which heap objects and free pages.
const (
	liveHeapMetric    = "/gc/heap/live:bytes"
	totalMetric       = "/memory/classes/total:bytes"
	releasedMetric    = "/memory/classes/heap/released:bytes"
	freeMetric        = "/memory/classes/heap/free:bytes"
	heapObjectsMetric = "/memory/classes/heap/objects:bytes"
)

// Reading is what the Tuner reads of the runtime's memory.
type Reading struct {
	// Live is the heap the last collection found reachable.
	Live uint64
	// Overhead is what the process holds beside heap objects and free
	// pages: goroutine stacks, the runtime's own structures, and the
	// unused ends of the heap's spans.
	Overhead uint64
}

// scavengeShare is the share of a memory limit the runtime returns free
// pages to stay under (it aims at 95 %).
const scavengeShare = 0.95

// limitStep is how much the limit must move before it is set again:
// setting it stops the world briefly.
const limitStep = 1 << 20

// Tuner sets GOGC and the memory limit from the heap at a fixed interval.
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
	// Ceiling is the memory limit the process started with (GOMEMLIMIT,
	// math.MaxInt64 without one): the Tuner sets the limit lower than
	// that, never higher.
	Ceiling int64

	// read, setPercent and setLimit are the runtime's, replaced in tests.
	read       func() Reading
	setPercent func(int) int
	setLimit   func(int64) int64
}

// New returns a Tuner that reads the runtime's live heap and sets its GOGC.
func New(minPercent, maxPercent int, headroom uint64, interval time.Duration, clk clock.WithTicker) *Tuner {
	return &Tuner{
		MaxPercent: maxPercent,
		MinPercent: minPercent,
		Headroom:   headroom,
		Interval:   interval,
		Clock:      clk,
		read:       readMemory,
		Ceiling:    debug.SetMemoryLimit(-1),
		setPercent: debug.SetGCPercent,
		setLimit:   debug.SetMemoryLimit,
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

// Limit is the memory limit for a reading and GOGC percent: the heap's
// goal and the overhead beside it, plus half the headroom for the heap's
// growth until the next reading, over the share of the limit the runtime
// returns free pages to stay under. Below it the collector is paced by
// GOGC, as without a limit. A small heap, whose GOGC is MaxPercent, keeps
// the Ceiling: what the runtime keeps there is a few megabytes, and a
// limit that lags a heap growing from nothing would only make the
// collector run more.
func (t *Tuner) Limit(r Reading, percent int) int64 {
	if percent >= t.MaxPercent {
		return t.Ceiling
	}
	goal := r.Live + r.Live*uint64(percent)/100
	return min(t.Ceiling, int64(float64(goal+r.Overhead+t.Headroom/2)/scavengeShare))
}

// Run sets GOGC and the memory limit now and again whenever the heap calls
// for other values, until ctx ends. Setting either stops the world
// briefly, so each is set only when it changes.
func (t *Tuner) Run(ctx context.Context) {
	var percent int
	var limit int64
	apply := func(first bool) {
		r := t.read()
		if p := t.Percent(r.Live); first || p != percent {
			t.setPercent(p)
			percent = p
		}
		if l := t.Limit(r, percent); first || moved(l, limit) {
			t.setLimit(l)
			limit = l
		}
	}
	apply(true)
	ticker := t.Clock.NewTicker(t.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
		apply(false)
	}
}

// moved reports whether a memory limit differs from the last one set by
// more than limitStep. Both are at least 0, so their difference cannot
// overflow, where the last one plus limitStep would at math.MaxInt64.
func moved(limit, last int64) bool {
	d := limit - last
	return d > limitStep || d < -limitStep
}

// readMemory reads the runtime's metrics; the live heap is 0 before the
// first collection.
func readMemory() Reading {
	samples := []metrics.Sample{{Name: liveHeapMetric}, {Name: totalMetric}, {Name: releasedMetric}, {Name: freeMetric}, {Name: heapObjectsMetric}}
	metrics.Read(samples)
	v := make([]uint64, len(samples))
	for i, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	live, total, released, free, objects := v[0], v[1], v[2], v[3], v[4]
	held := total - min(total, released)
	return Reading{Live: live, Overhead: held - min(held, free+objects)}
}
