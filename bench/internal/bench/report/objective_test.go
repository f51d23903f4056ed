package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

func key(n int, phase, system, mode string) ObjectiveKey {
	return ObjectiveKey{Where: WhereKwok, N: n, Phase: phase, System: system, Mode: mode}
}

// Percentiles are of the samples pooled over the repeats, nearest-rank:
// not the mean or median of each repeat's percentiles.
func TestPoolObjective(t *testing.T) {
	seq := func(from, to float64) []float64 {
		var out []float64
		for v := from; v <= to; v++ {
			out = append(out, v)
		}
		return out
	}
	dc, dep := key(100, PhaseChange, SystemDC, ModePod), key(100, PhaseChange, SystemDeployment, "")
	for _, tc := range []struct {
		name               string
		phases             []ObjectiveSamples
		want               ObjectiveKey
		wantPhases         int
		firstP50, firstP99 float64
		doneP50, doneP99   float64
		firstCount         int
	}{
		{"one phase of 100", []ObjectiveSamples{{Key: dc, FirstPod: seq(1, 100), Complete: seq(101, 200)}}, dc, 1, 50, 99, 150, 199, 100},
		{"two repeats pooled", []ObjectiveSamples{
			{Key: dc, FirstPod: seq(1, 50), Complete: seq(101, 150)},
			{Key: dep, FirstPod: []float64{7}, Complete: []float64{8}},
			{Key: dc, FirstPod: seq(51, 100), Complete: seq(151, 200)},
		}, dc, 2, 50, 99, 150, 199, 100},
		{"a first pod the watch missed", []ObjectiveSamples{{Key: dc, FirstPod: []float64{1, 2}, Complete: []float64{5, 6, 7}}}, dc, 1, 1, 2, 6, 7, 2},
		{"20 samples: p99 is the largest", []ObjectiveSamples{{Key: dc, FirstPod: seq(1, 20), Complete: seq(1, 20)}}, dc, 1, 10, 20, 10, 20, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PoolObjective(tc.phases)
			if len(got) == 0 || got[0].ObjectiveKey != tc.want {
				t.Fatalf("rows %+v, want %+v first", got, tc.want)
			}
			o := got[0]
			if o.Phases != tc.wantPhases || o.FirstPod.Count != tc.firstCount {
				t.Errorf("phases %d, first-pod samples %d; want %d, %d", o.Phases, o.FirstPod.Count, tc.wantPhases, tc.firstCount)
			}
			if o.FirstPod.P50 != tc.firstP50 || o.FirstPod.P99 != tc.firstP99 || o.Complete.P50 != tc.doneP50 || o.Complete.P99 != tc.doneP99 {
				t.Errorf("first pod %v / %v, complete %v / %v; want %v / %v, %v / %v", o.FirstPod.P50, o.FirstPod.P99, o.Complete.P50, o.Complete.P99,
					tc.firstP50, tc.firstP99, tc.doneP50, tc.doneP99)
			}
		})
	}
}

// A later report's row replaces an earlier one's; a DC row without a
// mode (a report from before deployer modes) is pod mode's.
func TestMergeObjective(t *testing.T) {
	row := func(k ObjectiveKey, p50 float64, source string) Objective {
		return Objective{ObjectiveKey: k, Complete: stats.Summary{Count: 1, P50: p50, P99: p50}, Source: source}
	}
	short := []Objective{row(key(1, PhaseFirst, SystemDC, ModePod), 1, "short"), row(key(1000, PhaseFirst, SystemDC, ModePod), 2, "short")}
	record := []Objective{row(key(1000, PhaseFirst, SystemDC, ""), 3, "record"), row(key(1000, PhaseFirst, SystemDeployment, ""), 4, "record")}
	got := MergeObjective(short, record)
	if len(got) != 3 {
		t.Fatalf("%d rows, want 3: %+v", len(got), got)
	}
	for i, want := range []struct {
		n      int
		p50    float64
		source string
	}{{1, 1, "short"}, {1000, 3, "record"}, {1000, 4, "record"}} {
		if got[i].N != want.n || got[i].Complete.P50 != want.p50 || got[i].Source != want.source {
			t.Errorf("row %d: %+v, want N=%d p50 %v from %s", i, got[i], want.n, want.p50, want.source)
		}
	}
}

// The table has a row for each published size, system and phase, filled
// from whatever the rows measured, "not measured" otherwise, and a size
// the run measured beyond them; the real node's rows only when asked.
func TestObjectiveTable(t *testing.T) {
	rows := []Objective{
		{ObjectiveKey: key(1, PhaseFirst, SystemDC, ModePod), Phases: 1,
			FirstPod: stats.Summary{Count: 1, P50: 0.25, P99: 0.25}, Complete: stats.Summary{Count: 1, P50: 1.5, P99: 1.5}},
		{ObjectiveKey: key(100, PhaseChange, SystemDeployment, ""), Phases: 1,
			FirstPod: stats.Summary{Count: 99, P50: 1.111, P99: 2.5}, Complete: stats.Summary{Count: 100, P50: 3, P99: 4.25}},
		{ObjectiveKey: key(200, PhaseChange, SystemDC, ModeController), Phases: 1,
			FirstPod: stats.Summary{Count: 200, P50: 2, P99: 3}, Complete: stats.Summary{Count: 200, P50: 5, P99: 6}},
		{ObjectiveKey: ObjectiveKey{Where: WhereNode, N: 1, Phase: PhaseChange, System: SystemDC, Mode: ModeController}, Phases: 1,
			FirstPod: stats.Summary{Count: 20, P50: 1, P99: 2}, Complete: stats.Summary{Count: 20, P50: 9, P99: 10}},
	}
	for _, tc := range []struct {
		name    string
		wheres  []string
		lines   int
		want    []string
		notWant []string
	}{
		{"playground", []string{WhereKwok}, 2 + 4*6, []string{
			"| playground (kwok) | 1 | DC, pod mode | first rollout | 0.25 s | 0.25 s | 1.50 s | 1.50 s | 1 |",
			"| playground (kwok) | 1 | DC, pod mode | template change | not measured | | | | |",
			"| playground (kwok) | 100 | Deployment | template change | 1.11 s | 2.50 s | 3.00 s | 4.25 s | 100 (first pod: 99) |",
			"| playground (kwok) | 200 | DC, controller mode | template change | 2.00 s | 3.00 s | 5.00 s | 6.00 s | 200 |",
			"| playground (kwok) | 1000 | Deployment | template change | not measured | | | | |",
		}, []string{WhereNode}},
		{"both", []string{WhereKwok, WhereNode}, 2 + 4*6 + 3, []string{
			"| real node | 1 | DC, controller mode | template change | 1.00 s | 2.00 s | 9.00 s | 10.00 s | 20 |",
			"| real node | 1 | DC, pod mode | template change | not measured | | | | |",
		}, nil},
		{"real node", []string{WhereNode}, 2 + 3, []string{"| real node | 1 | Deployment | template change | not measured | | | | |"}, []string{WhereKwok}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ObjectiveTable(rows, tc.wheres...)
			if n := strings.Count(got, "\n"); n != tc.lines {
				t.Errorf("%d lines, want %d:\n%s", n, tc.lines, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w+"\n") {
					t.Errorf("no line %q in\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("%q in\n%s", w, got)
				}
			}
		})
	}
}

// Merged rows name the report they came from, in a column of their own.
func TestObjectiveTableSources(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "2026-12-04-objective.json")
	r := &Report{Objective: []Objective{{ObjectiveKey: key(1, PhaseFirst, SystemDeployment, ""), Phases: 1,
		FirstPod: stats.Summary{Count: 1, P50: 0.5, P99: 0.5}, Complete: stats.Summary{Count: 1, P50: 1, P99: 1}}}}
	if err := r.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadObjective(path)
	if err != nil {
		t.Fatal(err)
	}
	got := ObjectiveTable(rows, WhereKwok)
	if want := "| playground (kwok) | 1 | Deployment | first rollout | 0.50 s | 0.50 s | 1.00 s | 1.00 s | 1 | 2026-12-04-objective.json |\n"; !strings.Contains(got, want) {
		t.Errorf("no line %q in\n%s", want, got)
	}
	if !strings.Contains(got, "| playground (kwok) | 1000 | Deployment | first rollout | not measured | | | | | |\n") {
		t.Errorf("an unmeasured row lacks the source column:\n%s", got)
	}
	empty := filepath.Join(dir, "old.json")
	if err := os.WriteFile(empty, []byte(`{"throughput": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadObjective(empty); err == nil {
		t.Error("a report without objective rows read without an error")
	}
}

// The report renders the objective after the targets, when it has rows.
func TestWriteMarkdownObjective(t *testing.T) {
	var b strings.Builder
	writeObjective(&b, &Report{})
	if b.Len() != 0 {
		t.Errorf("a report without rows renders %q", b.String())
	}
	writeObjective(&b, &Report{Objective: []Objective{{ObjectiveKey: key(1, PhaseFirst, SystemDeployment, ""), Phases: 1}}})
	if got := b.String(); !strings.HasPrefix(got, "## Objective: rollout latency\n\n"+ObjectiveDefinition+"\n\n| where |") {
		t.Errorf("objective section:\n%s", got)
	}
}
