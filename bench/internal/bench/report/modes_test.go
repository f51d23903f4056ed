package report

import (
	"strings"
	"testing"

	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

// The deployer-mode rows judge each deployer mode on its own against the
// Deployment of the same repeats: controller mode's writes and times do
// not leak into pod mode's rows, and a mode not run is not measured.
func TestModeTargets(t *testing.T) {
	cost := func(system, mode string, repeat, writes int) APICost {
		return APICost{N: 1000, Phase: PhaseChange, System: system, Mode: mode, Repeat: repeat, Rollouts: 1000,
			Actors: []audit.ActorCount{{Actor: audit.ActorDCController, Objects: writes}}}
	}
	tp := func(mode string, repeat int, dc, dep float64) Throughput {
		return Throughput{N: 1000, Phase: PhaseChange, Mode: mode, Repeat: repeat,
			DC: Run{System: SystemDC, Seconds: dc}, Deployment: Run{System: SystemDeployment, Seconds: dep}, Ratio: stats.Ratio(dc, dep)}
	}
	first := func(mode string, repeat int, dc, dep float64) Throughput {
		return Throughput{N: 1000, Phase: PhaseFirst, Mode: mode, Repeat: repeat,
			DC: Run{System: SystemDC, Seconds: dc}, Deployment: Run{System: SystemDeployment, Seconds: dep}, Ratio: stats.Ratio(dc, dep)}
	}
	r := &Report{
		APICost: []APICost{
			cost(SystemDeployment, "", 1, 10000), cost(SystemDC, ModePod, 1, 18000), cost(SystemDC, ModeController, 1, 11000),
			cost(SystemDeployment, "", 2, 10000), cost(SystemDC, ModePod, 2, 19000), cost(SystemDC, ModeController, 2, 12000),
		},
		Throughput: []Throughput{
			tp(ModePod, 1, 150, 100), tp(ModeController, 1, 90, 100),
			tp(ModePod, 2, 160, 100), tp(ModeController, 2, 110, 100),
			first(ModePod, 1, 140, 100), first(ModeController, 1, 105, 100),
		},
		Footprint: []Footprint{
			{Mode: ModePod, DCs: 20000, Usage: procstat.Usage{PeakRSSBytes: 190 << 20}},
			{Mode: ModeController, DCs: 20000, Usage: procstat.Usage{PeakRSSBytes: 210 << 20}},
		},
	}
	r.Summarize()
	got := modeTargets(r)
	tests := []struct {
		name    string
		met     *bool
		gotPart string
	}{
		{"controller mode: writes per DC rollout, template change", new(true), "median 1.15 (min 1.10, max 1.20, 2 repeats)× (11.5 vs 10.0"},
		{"controller mode: writes per DC rollout, first rollout", nil, "not measured"},
		{"controller mode: DC/Deployment time, template change", new(true), "median 1.00 (min 0.90, max 1.10, 2 repeats)"},
		{"controller mode: DC/Deployment time, first rollout", new(false), "1.05 (105 s / 100 s)"},
		{"controller mode: dc-controller peak RSS", new(false), "210.0 MB at 20000 DCs"},
		{"pod mode: writes per DC rollout, template change", new(false), "median 1.85 (min 1.80, max 1.90, 2 repeats)×"},
		{"pod mode: writes per DC rollout, first rollout", nil, "not measured"},
		{"pod mode: DC/Deployment time, template change", new(false), "median 1.55"},       // above pod mode's 1.2
		{"pod mode: DC/Deployment time, first rollout", new(true), "1.40 (140 s / 100 s)"}, // within pod mode's 1.5
		{"pod mode: dc-controller peak RSS", new(true), "190.0 MB at 20000 DCs"},
	}
	if len(got) != len(tests) {
		t.Fatalf("%d rows, want %d: %+v", len(got), len(tests), got)
	}
	for i, tt := range tests {
		g := got[i]
		if g.Name != tt.name || metWord(g.Met) != metWord(tt.met) || !strings.Contains(g.Got, tt.gotPart) {
			t.Errorf("row %d = %q met %s: %q; want %q met %s: …%q…", i, g.Name, metWord(g.Met), g.Got, tt.name, metWord(tt.met), tt.gotPart)
		}
	}
	// The full-cost rows read pod mode alone.
	for _, s := range r.Spreads {
		if s.Mode == "" {
			t.Errorf("spread without a mode: %+v", s)
		}
	}
	if w := writesTarget(r, PhaseChange, targetWritesRatio); !strings.Contains(w.Got, "1.85") {
		t.Errorf("the full-cost targets' writes row reads %q, want pod mode's 1.85", w.Got)
	}
}

// The critical path's segments are between consecutive steps, over the
// rollouts that have both; the bound is the longest median.
func TestPathOf(t *testing.T) {
	steps := PathSteps(SystemDC, ModeController)
	if want := []string{StepTrigger, StepPhaseRunning, StepFirstScale, StepLastScale, StepComplete}; strings.Join(steps, ",") != strings.Join(want, ",") {
		t.Fatalf("controller mode steps %v, want %v", steps, want)
	}
	if pod := PathSteps(SystemDC, ModePod); pod[1] != StepPodCreated || pod[3] != StepPodRunning {
		t.Errorf("pod mode steps %v lack the deployer pod", pod)
	}
	if dep := PathSteps(SystemDeployment, ""); dep[1] != StepRSCreated {
		t.Errorf("Deployment steps %v lack the new ReplicaSet", dep)
	}
	rollouts := []map[string]float64{
		{StepTrigger: 0, StepPhaseRunning: 1, StepFirstScale: 1.5, StepLastScale: 4.5, StepComplete: 5},
		{StepTrigger: 0, StepPhaseRunning: 3, StepFirstScale: 3.5, StepLastScale: 7.5, StepComplete: 8},
		// Its phase Running was not seen: it counts for the segments it
		// has both ends of.
		{StepTrigger: 0, StepFirstScale: 2, StepLastScale: 3, StepComplete: 4},
	}
	segments, total := PathOf(steps, rollouts)
	if len(segments) != 4 {
		t.Fatalf("%d segments, want 4", len(segments))
	}
	if s := segments[0]; s.From != StepTrigger || s.To != StepPhaseRunning || s.Seconds.Count != 2 || s.Seconds.P50 != 1 || s.Seconds.P99 != 3 {
		t.Errorf("trigger → phase Running %+v, want 2 rollouts, p50 1, p99 3", s)
	}
	if s := segments[2]; s.Seconds.Count != 3 || s.Seconds.P50 != 3 || s.Seconds.P99 != 4 {
		t.Errorf("first → last scale %+v, want 3 rollouts, p50 3, p99 4", s)
	}
	if total.Count != 3 || total.P50 != 5 || total.P99 != 8 {
		t.Errorf("total %+v, want 3 rollouts, p50 5, p99 8", total)
	}
	c := CriticalPath{N: 3, Phase: PhaseChange, System: SystemDC, Mode: ModeController, Rollouts: 3, Segments: segments, Total: total}
	if b, ok := c.Bound(); !ok || b.From != StepFirstScale || b.To != StepLastScale {
		t.Errorf("bound %+v, want first scale → last scale", b)
	}
	var out strings.Builder
	writeCriticalPath(&out, &Report{CriticalPaths: []CriticalPath{c}})
	for _, want := range []string{
		"## Critical path",
		"| 3 | template change | DC (controller) | 3 | first scale → last scale | 3.00 s | 4.00 s |",
		"| 3 | template change | DC (controller) | 3 | **trigger → Complete** | **5.00 s** | **8.00 s** |",
		"the DC's time is bounded by first scale → last scale, p50 3.00 s of 5.00 s",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("section lacks %q\n%s", want, out.String())
		}
	}
}
