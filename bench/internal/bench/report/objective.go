package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

// The rollout latency objective: what a user waits for after the write
// that asks for a rollout (the trigger: the create of the object, or the
// patch of its template), until the first pod of the new version exists
// (dc-bench's watch saw it: for a DC a pod of the new RC, for a Deployment
// a pod of the new ReplicaSet) and until the rollout is Complete (for a DC
// its RC of the new version in phase Complete, for a Deployment what
// `kubectl rollout status` calls complete). It is stated for N rollouts
// triggered at once on the playground, for each DC deployer mode and for a
// Deployment beside them, and for one idle rollout on a real node, so that
// the published table can say exactly what each figure is.

// Where an objective row was measured.
const (
	WhereKwok = "playground (kwok)"
	WhereNode = "real node"
)

// ObjectiveSizes are the N the objective is published for: a row of each
// is rendered, "not measured" when no run measured it.
func ObjectiveSizes() []int {
	return []int{1, 100, 1000}
}

// ObjectiveKey names one row of the objective.
type ObjectiveKey struct {
	Where string `json:"where"`
	// N is the number of rollouts triggered at once (1 for the real
	// node's idle rollouts).
	N      int    `json:"n"`
	Phase  string `json:"phase"`
	System string `json:"system"`
	// Mode is a DC row's deployer mode, "" for the Deployment's.
	Mode string `json:"mode,omitempty"`
}

// Objective is one row of the objective: a phase's rollouts pooled over
// the repeats of a run, in seconds from each rollout's trigger.
type Objective struct {
	ObjectiveKey
	// Phases is the number of phases (repeats) pooled.
	Phases   int           `json:"phases"`
	FirstPod stats.Summary `json:"toFirstPod"`
	Complete stats.Summary `json:"toComplete"`
	// Source is the report a merged row came from (MergeObjective); ""
	// in the report that measured it.
	Source string `json:"source,omitempty"`
}

// ObjectiveSamples are one phase's per-rollout samples.
type ObjectiveSamples struct {
	Key      ObjectiveKey
	FirstPod []float64
	Complete []float64
}

// PoolObjective pools phases of the same key (the repeats of a size), in
// the order their keys first appear. Percentiles are of the pooled
// samples, not of each repeat's percentiles: a p99 over 3 repeats of 100
// is the 297th of 300 rollouts.
func PoolObjective(phases []ObjectiveSamples) []Objective {
	var keys []ObjectiveKey
	pooled := map[ObjectiveKey]*ObjectiveSamples{}
	count := map[ObjectiveKey]int{}
	for _, p := range phases {
		acc, ok := pooled[p.Key]
		if !ok {
			keys = append(keys, p.Key)
			acc = &ObjectiveSamples{Key: p.Key}
			pooled[p.Key] = acc
		}
		acc.FirstPod = append(acc.FirstPod, p.FirstPod...)
		acc.Complete = append(acc.Complete, p.Complete...)
		count[p.Key]++
	}
	out := make([]Objective, 0, len(keys))
	for _, k := range keys {
		out = append(out, Objective{ObjectiveKey: k, Phases: count[k],
			FirstPod: stats.Summarize(pooled[k].FirstPod), Complete: stats.Summarize(pooled[k].Complete)})
	}
	return out
}

// normalKey is k as the table looks it up: rows of reports from before
// deployer modes (a DC without a mode) count as pod mode.
func normalKey(k ObjectiveKey) ObjectiveKey {
	if k.System == SystemDC && k.Mode == "" {
		k.Mode = ModePod
	}
	if k.System != SystemDC {
		k.Mode = ""
	}
	return k
}

// MergeObjective merges the rows of several reports: a later list's row
// replaces an earlier one of the same key, so the run of record can be
// given last.
func MergeObjective(lists ...[]Objective) []Objective {
	var out []Objective
	index := map[ObjectiveKey]int{}
	for _, rows := range lists {
		for _, row := range rows {
			k := normalKey(row.ObjectiveKey)
			if i, ok := index[k]; ok {
				out[i] = row
				continue
			}
			index[k] = len(out)
			out = append(out, row)
		}
	}
	return out
}

// ReadObjective reads the objective rows of a report saved as JSON (the
// playground's or the real node's: both keep them under "objective"),
// each marked with the file's name as its source.
func ReadObjective(path string) ([]Objective, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var saved struct {
		Objective []Objective `json:"objective"`
	}
	if err := json.Unmarshal(data, &saved); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	if len(saved.Objective) == 0 {
		return nil, fmt.Errorf("%s has no objective rows (a report from before they were measured?)", path)
	}
	for i := range saved.Objective {
		saved.Objective[i].Source = filepath.Base(path)
	}
	return saved.Objective, nil
}

// objectiveSystem is one system column of the objective's rows.
type objectiveSystem struct {
	system, mode string
}

// objectiveSystems are the systems of the objective, in the table's
// order.
func objectiveSystems() []objectiveSystem {
	return []objectiveSystem{{SystemDC, ModePod}, {SystemDC, ModeController}, {SystemDeployment, ""}}
}

// label names the system in the table.
func (s objectiveSystem) label() string {
	if s.system == SystemDC {
		return "DC, " + s.mode + " mode"
	}
	return s.system
}

// ObjectiveTable renders the objective's table for the places given
// (WhereKwok, WhereNode): on the playground a row for each size of
// ObjectiveSizes (and any other size measured), system and phase; on the
// real node its idle template changes. A row no run measured says so.
func ObjectiveTable(rows []Objective, wheres ...string) string {
	byKey := map[ObjectiveKey]Objective{}
	sources := false
	sizes := ObjectiveSizes()
	for _, row := range rows {
		k := normalKey(row.ObjectiveKey)
		byKey[k] = row
		sources = sources || row.Source != ""
		if k.Where == WhereKwok && !slices.Contains(sizes, k.N) {
			sizes = append(sizes, k.N)
		}
	}
	slices.Sort(sizes)
	var b strings.Builder
	b.WriteString("| where | N at once | system | phase | → first new pod p50 | p99 | → Complete p50 | p99 | samples |")
	sep := "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"
	if sources {
		b.WriteString(" from |")
		sep += " --- |"
	}
	b.WriteString("\n" + sep + "\n")
	line := func(k ObjectiveKey, label string) {
		row, ok := byKey[k]
		fmt.Fprintf(&b, "| %s | %d | %s | %s | ", k.Where, k.N, label, k.Phase)
		if !ok {
			b.WriteString("not measured | | | | |")
			if sources {
				b.WriteString(" |")
			}
			b.WriteString("\n")
			return
		}
		fmt.Fprintf(&b, "%s | %s | %s | %s | %s |", objectiveSeconds(row.FirstPod.P50, row.FirstPod.Count), objectiveSeconds(row.FirstPod.P99, row.FirstPod.Count),
			objectiveSeconds(row.Complete.P50, row.Complete.Count), objectiveSeconds(row.Complete.P99, row.Complete.Count), objectiveCount(row))
		if sources {
			fmt.Fprintf(&b, " %s |", orDash(row.Source))
		}
		b.WriteString("\n")
	}
	if slices.Contains(wheres, WhereKwok) {
		for _, n := range sizes {
			for _, sys := range objectiveSystems() {
				for _, phase := range []string{PhaseFirst, PhaseChange} {
					line(ObjectiveKey{Where: WhereKwok, N: n, Phase: phase, System: sys.system, Mode: sys.mode}, sys.label())
				}
			}
		}
	}
	if slices.Contains(wheres, WhereNode) {
		for _, sys := range objectiveSystems() {
			line(ObjectiveKey{Where: WhereNode, N: 1, Phase: PhaseChange, System: sys.system, Mode: sys.mode}, sys.label())
		}
	}
	return b.String()
}

// objectiveSeconds formats a percentile; a dash when nothing was sampled.
func objectiveSeconds(v float64, count int) string {
	if count == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f s", v)
}

// objectiveCount is the row's samples: the rollouts that completed, and
// the first-pod samples when fewer (a first pod the watch missed, or a
// report without them).
func objectiveCount(row Objective) string {
	if row.FirstPod.Count == row.Complete.Count {
		return fmt.Sprintf("%d", row.Complete.Count)
	}
	return fmt.Sprintf("%d (first pod: %d)", row.Complete.Count, row.FirstPod.Count)
}

// ObjectiveDefinition says what the objective's table measures, for the
// reports and docs/scaling.md.
const ObjectiveDefinition = "Seconds from the **trigger** (the audited completion of the write that created the object or changed its template; " +
	"on the real node, just before that write was sent) to the **first new pod** (dc-bench's watch first saw a pod of the new version: " +
	"for a DC a pod of the new RC, for a Deployment a pod of the new ReplicaSet) and to **Complete** (a DC's RC of the new version in phase Complete; " +
	"a Deployment complete as `kubectl rollout status` says), as the watch saw it. " +
	"\"N at once\": N objects created (first rollout) or changed (template change) together; on the real node one template change at a time on an idle node. " +
	"Nearest-rank percentiles over every rollout of every repeat (with fewer than 100 samples p99 is the largest)."

func writeObjective(b *strings.Builder, r *Report) {
	if len(r.Objective) == 0 {
		return
	}
	b.WriteString("## Objective: rollout latency\n\n")
	b.WriteString(ObjectiveDefinition + "\n\n")
	b.WriteString(ObjectiveTable(r.Objective, WhereKwok))
	b.WriteString("\n")
}
