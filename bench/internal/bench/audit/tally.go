package audit

import (
	"slices"
	"strings"
	"time"
)

// Window selects the requests about objects in one namespace that
// completed in [From, To).
type Window struct {
	Namespace string
	From, To  time.Time
}

// Contains reports whether the window selects e.
func (w Window) Contains(e Event) bool {
	return e.Namespace() == w.Namespace && !e.Completed.Before(w.From) && e.Completed.Before(w.To)
}

// ActorCount is what one actor did in a window.
type ActorCount struct {
	Actor string `json:"actor"`
	// Writes counts every write, by category.
	Objects      int `json:"objects"`
	AppPods      int `json:"appPods"`
	DeployerPods int `json:"deployerPods"`
	Events       int `json:"events"`
	// Conflicts counts writes refused with 409 (optimistic concurrency);
	// they are included in the counts above, as they cost the API server.
	Conflicts int `json:"conflicts"`
	// Reads counts gets and lists (watches are not audited).
	Reads int `json:"reads"`
	// ByResource counts writes by resource[/subresource] and verb, e.g.
	// "replicationcontrollers/scale patch"; writes of (and events about)
	// deployer and hook pods carry the suffix DeployerPodMark.
	ByResource map[string]int `json:"byResource"`
	// RolloutWrites counts, by the same keys, the writes the full-cost
	// targets count as the rollout's: every write but the application pods' own
	// (their create, binding, status, delete).
	RolloutWrites map[string]int `json:"rolloutWrites,omitempty"`
}

// DeployerPodMark ends the ByResource keys of writes of deployer and hook
// pods, and of events about them, e.g. "pods/status update (deployer pod)".
const DeployerPodMark = " (deployer pod)"

// WriteKey is the ByResource key of a write: resource[/subresource] and
// verb, marked when it is about a deployer or hook pod.
func WriteKey(e Event) string {
	key := e.Resource() + " " + e.Verb
	if aboutDeployerPod(e) {
		key += DeployerPodMark
	}
	return key
}

// RolloutWriteCount is the actor's writes of the rollout: all its writes
// but those of the application's pods.
func (c ActorCount) RolloutWriteCount() int {
	return c.Writes() - c.AppPods
}

// Writes is the actor's total number of writes.
func (c ActorCount) Writes() int {
	return c.Objects + c.AppPods + c.DeployerPods + c.Events
}

// Tally counts requests by actor in each of a set of windows.
type Tally struct {
	windows []Window
	counts  []map[string]*ActorCount
}

// NewTally returns a Tally of the windows, which may overlap.
func NewTally(windows ...Window) *Tally {
	t := &Tally{windows: windows, counts: make([]map[string]*ActorCount, len(windows))}
	for i := range t.counts {
		t.counts[i] = map[string]*ActorCount{}
	}
	return t
}

// Add counts e in every window that selects it.
func (t *Tally) Add(e Event) {
	for i, w := range t.windows {
		if w.Contains(e) {
			add(t.counts[i], e)
		}
	}
}

// add counts e in one window's counts.
func add(counts map[string]*ActorCount, e Event) {
	actor := Actor(e)
	c := counts[actor]
	if c == nil {
		c = &ActorCount{Actor: actor, ByResource: map[string]int{}, RolloutWrites: map[string]int{}}
		counts[actor] = c
	}
	if !e.IsWrite() {
		if e.Verb == "get" || e.Verb == "list" {
			c.Reads++
		}
		return
	}
	key := WriteKey(e)
	category := CategoryOf(e)
	if category != CategoryAppPods {
		c.RolloutWrites[key]++
	}
	switch category {
	case CategoryAppPods:
		c.AppPods++
	case CategoryDeployerPods:
		c.DeployerPods++
	case CategoryEvents:
		c.Events++
	default:
		c.Objects++
	}
	if e.Code() == 409 {
		c.Conflicts++
	}
	c.ByResource[key]++
}

// Counts returns the counts of window i, known actors first in
// ActorOrder, then the others by name.
func (t *Tally) Counts(i int) []ActorCount {
	out := make([]ActorCount, 0, len(t.counts[i]))
	for _, c := range t.counts[i] {
		out = append(out, *c)
	}
	order := ActorOrder()
	rank := func(a string) int {
		if i := slices.Index(order, a); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(out, func(a, b ActorCount) int {
		if ra, rb := rank(a.Actor), rank(b.Actor); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Actor, b.Actor)
	})
	return out
}

// Times records, for every request a filter selects, the first time a
// request with its key completed, e.g. when each deployer pod was created.
type Times struct {
	match func(Event) (key string, ok bool)
	times map[string]time.Time
}

// NewTimes returns a Times that keys requests with match; requests for
// which match reports false are ignored.
func NewTimes(match func(Event) (key string, ok bool)) *Times {
	return &Times{match: match, times: map[string]time.Time{}}
}

// Add records e if it is selected and its key has no earlier time.
func (t *Times) Add(e Event) {
	key, ok := t.match(e)
	if !ok {
		return
	}
	if old, seen := t.times[key]; !seen || e.Completed.Before(old) {
		t.times[key] = e.Completed
	}
}

// Get returns the time recorded for a key.
func (t *Times) Get(key string) (time.Time, bool) {
	ts, ok := t.times[key]
	return ts, ok
}

// Len is the number of keys recorded.
func (t *Times) Len() int { return len(t.times) }
