package report

import (
	"slices"

	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

// ThroughputSpread is one phase at one size over the run's repeats: the
// min / median / max of each system's time and of their ratio, and which
// system went first in each repeat.
type ThroughputSpread struct {
	N     int    `json:"n"`
	Phase string `json:"phase"`
	// Mode is the DCs' deployer mode.
	Mode       string       `json:"mode,omitempty"`
	Repeats    int          `json:"repeats"`
	DC         stats.Spread `json:"dc"`
	Deployment stats.Spread `json:"deployment"`
	Ratio      stats.Spread `json:"ratio"`
	// First names, per repeat in order, the system that ran first.
	First []string `json:"first"`
	// Failed counts the failed rollouts of both systems over all repeats.
	Failed int `json:"failed"`
}

// WritesSpread is the writes of the rollout (the full-cost targets' definition: every
// write but the application pods') per rollout, over the repeats.
type WritesSpread struct {
	N     int    `json:"n"`
	Phase string `json:"phase"`
	// Mode is the DCs' deployer mode.
	Mode       string       `json:"mode,omitempty"`
	DC         stats.Spread `json:"dc"`
	Deployment stats.Spread `json:"deployment"`
	Ratio      stats.Spread `json:"ratio"`
}

// phaseKey identifies a phase at a size, and the DCs' deployer mode.
type phaseKey struct {
	n     int
	phase string
	mode  string
}

// ThroughputSpreads groups the throughput results of every repeat by size
// and phase, in the order they first appear.
func ThroughputSpreads(ts []Throughput) []ThroughputSpread {
	var keys []phaseKey
	groups := map[phaseKey][]Throughput{}
	for _, t := range ts {
		k := phaseKey{t.N, t.Phase, t.Mode}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], t)
	}
	out := make([]ThroughputSpread, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		var dc, dep, ratio []float64
		s := ThroughputSpread{N: k.n, Phase: k.phase, Mode: k.mode, Repeats: len(g)}
		for _, t := range g {
			dc, dep, ratio = append(dc, t.DC.Seconds), append(dep, t.Deployment.Seconds), append(ratio, t.Ratio)
			s.First = append(s.First, t.First)
			s.Failed += t.DC.Failed + t.Deployment.Failed
		}
		s.DC, s.Deployment, s.Ratio = stats.SpreadOf(dc), stats.SpreadOf(dep), stats.SpreadOf(ratio)
		out = append(out, s)
	}
	return out
}

// WritesSpreads pairs the systems' API costs of each size, phase and
// repeat and spreads the writes of the rollout per rollout over the
// repeats; a phase without both systems is left out.
func WritesSpreads(costs []APICost) []WritesSpread {
	type repeatKey struct {
		phaseKey
		repeat int
	}
	// The Deployment's cost of a repeat (mode "") pairs with the DCs'
	// of every mode.
	var keys []phaseKey
	deps := map[repeatKey]APICost{}
	for _, c := range costs {
		if c.System == SystemDeployment {
			deps[repeatKey{phaseKey{c.N, c.Phase, ""}, c.Repeat}] = c
			continue
		}
		if k := (phaseKey{c.N, c.Phase, c.Mode}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var out []WritesSpread
	for _, pk := range keys {
		var dc, dep, ratio []float64
		for _, c := range costs {
			d, ok := deps[repeatKey{phaseKey{c.N, c.Phase, ""}, c.Repeat}]
			if c.System != SystemDC || (phaseKey{c.N, c.Phase, c.Mode}) != pk || !ok {
				continue
			}
			a, b := c.RolloutWrites(), d.RolloutWrites()
			dc, dep, ratio = append(dc, a), append(dep, b), append(ratio, stats.Ratio(a, b))
		}
		if len(dc) > 0 {
			out = append(out, WritesSpread{N: pk.n, Phase: pk.phase, Mode: pk.mode, DC: stats.SpreadOf(dc), Deployment: stats.SpreadOf(dep), Ratio: stats.SpreadOf(ratio)})
		}
	}
	return out
}

// PoolCosts adds up the API costs of the same size, phase and system over
// the repeats, so that per-rollout figures are over every rollout of the
// run; the order is that of first appearance.
func PoolCosts(costs []APICost) []APICost {
	type key struct {
		phaseKey
		system string
	}
	var out []APICost
	index := map[key]int{}
	for _, c := range costs {
		k := key{phaseKey{c.N, c.Phase, c.Mode}, c.System}
		i, ok := index[k]
		if !ok {
			index[k] = len(out)
			out = append(out, APICost{N: c.N, Phase: c.Phase, System: c.System, Mode: c.Mode})
			i = len(out) - 1
		}
		out[i].Rollouts += c.Rollouts
		out[i].Repeats++
		out[i].Actors = addActors(out[i].Actors, c.Actors)
	}
	return out
}

// addActors adds the counts of more to those of into, actor by actor,
// keeping into's order and appending actors it lacks.
func addActors(into, more []audit.ActorCount) []audit.ActorCount {
	for _, m := range more {
		i := slices.IndexFunc(into, func(a audit.ActorCount) bool { return a.Actor == m.Actor })
		if i < 0 {
			into = append(into, audit.ActorCount{Actor: m.Actor, ByResource: map[string]int{}, RolloutWrites: map[string]int{}})
			i = len(into) - 1
		}
		a := &into[i]
		a.Objects += m.Objects
		a.AppPods += m.AppPods
		a.DeployerPods += m.DeployerPods
		a.Events += m.Events
		a.Conflicts += m.Conflicts
		a.Reads += m.Reads
		a.ByResource = addCounts(a.ByResource, m.ByResource)
		a.RolloutWrites = addCounts(a.RolloutWrites, m.RolloutWrites)
	}
	return into
}

// addCounts adds more's counts to into (made when nil) and returns it.
func addCounts(into, more map[string]int) map[string]int {
	if into == nil {
		into = map[string]int{}
	}
	for k, v := range more {
		into[k] += v
	}
	return into
}

// Summarize fills the report's spreads over repeats from its per-repeat
// results; it can be called again after they change.
func (r *Report) Summarize() {
	r.Spreads = ThroughputSpreads(r.Throughput)
	r.WriteSpreads = WritesSpreads(r.APICost)
}
