package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

// sample is a small but complete report.
func sample() *Report {
	r := &Report{
		Started:  time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
		Duration: 3600,
		Machine:  procstat.Machine{Cores: 2, MemoryBytes: 24 << 30, OS: "linux/amd64"},
		Versions: Versions{Go: "go1.26.8", Kubernetes: "v1.37.2"},
		Settings: Settings{Sizes: []int{1000}, Replicas: 3, FootprintSizes: []int{1000, 5000}, ControllerQPS: 20},
		Throughput: []Throughput{
			{N: 1000, Phase: PhaseFirst, Repeat: 1, First: SystemDC, DC: Run{Seconds: 100}, Deployment: Run{Seconds: 120}, Ratio: 100.0 / 120},
			{N: 1000, Phase: PhaseChange, Repeat: 1, First: SystemDC, DC: Run{Seconds: 300, Failed: 0}, Deployment: Run{Seconds: 400}, Ratio: 0.75},
			{N: 1000, Phase: PhaseFirst, Repeat: 2, First: SystemDeployment, DC: Run{Seconds: 130}, Deployment: Run{Seconds: 100}, Ratio: 1.3},
			{N: 1000, Phase: PhaseChange, Repeat: 2, First: SystemDeployment, DC: Run{Seconds: 330}, Deployment: Run{Seconds: 300}, Ratio: 1.1},
			{N: 1000, Phase: PhaseFirst, Repeat: 3, First: SystemDC, DC: Run{Seconds: 90}, Deployment: Run{Seconds: 100}, Ratio: 0.9},
			{N: 1000, Phase: PhaseChange, Repeat: 3, First: SystemDC, DC: Run{Seconds: 310}, Deployment: Run{Seconds: 400}, Ratio: 0.775},
		},
		APICost: []APICost{
			{N: 1000, Phase: PhaseChange, System: SystemDC, Repeat: 1, Rollouts: 1000, Actors: []audit.ActorCount{
				{Actor: audit.ActorDCController, Objects: 4000, DeployerPods: 1000, Events: 1000, ByResource: map[string]int{"replicationcontrollers update": 3000, "pods create (deployer pod)": 1000},
					RolloutWrites: map[string]int{"replicationcontrollers update": 3000, "events create": 1000, "pods create (deployer pod)": 1000, "deploymentconfigs/status update": 1000}},
				{Actor: audit.ActorRCManager, AppPods: 6000, Objects: 3000, RolloutWrites: map[string]int{"replicationcontrollers/status update": 3000}},
			}},
			{N: 1000, Phase: PhaseChange, System: SystemDeployment, Repeat: 1, Rollouts: 1000, Actors: []audit.ActorCount{
				{Actor: audit.ActorDeploymentCtrl, Objects: 6000, Events: 1000},
				{Actor: audit.ActorRSManager, AppPods: 6000, Objects: 2000},
			}},
			{N: 1000, Phase: PhaseChange, System: SystemDC, Repeat: 2, Rollouts: 1000, Actors: []audit.ActorCount{
				{Actor: audit.ActorDCController, Objects: 5000, DeployerPods: 1000, Events: 1000},
				{Actor: audit.ActorRCManager, AppPods: 6000, Objects: 3000},
			}},
			{N: 1000, Phase: PhaseChange, System: SystemDeployment, Repeat: 2, Rollouts: 1000, Actors: []audit.ActorCount{
				{Actor: audit.ActorDeploymentCtrl, Objects: 6000, Events: 1000},
				{Actor: audit.ActorRSManager, AppPods: 6000, Objects: 2000},
			}},
		},
		Latency: []Latency{
			{System: SystemDC, Load: "idle", InFlight: 1, ToDeployerPod: stats.Summarize([]float64{0.1, 0.2}), ToComplete: stats.Summarize([]float64{5, 6}),
				ToDeployerStart: stats.Summarize([]float64{0.2, 0.3}), PrescribedSeconds: 5, Rest: stats.Summarize([]float64{0, 1})},
			{System: SystemDeployment, Load: "idle", InFlight: 1, ToComplete: stats.Summarize([]float64{1, 1.2})},
			{System: SystemDC, Load: "1000 triggered at once (first rollout)", InFlight: 1000, ToDeployerPod: stats.Summarize([]float64{0.5, 2.5}), ToComplete: stats.Summarize([]float64{50, 60}),
				ToFirstPod: stats.Summarize([]float64{4, 8})},
			{System: SystemDC, Load: "1000 triggered at once (template change)", InFlight: 1000, ToDeployerPod: stats.Summarize([]float64{0.5, 3.5}), ToComplete: stats.Summarize([]float64{50, 60})},
			{System: SystemDC, Load: "probes while 1000 in flight (first rollout)", InFlight: 1000, Probes: true, StillInFlight: 990,
				ToDeployerPod: stats.Summarize([]float64{0.2, 0.4}), ToComplete: stats.Summarize([]float64{20, 30})},
			{System: SystemDC, Load: "probes while 1000 in flight (template change)", InFlight: 1000, Probes: true, StillInFlight: 1000,
				ToDeployerPod: stats.Summarize([]float64{0.3, 0.6}), ToComplete: stats.Summarize([]float64{20, 30})},
			{System: SystemDeployment, Load: "probes while 1000 in flight (template change)", InFlight: 1000, Probes: true, StillInFlight: 1000,
				ToComplete: stats.Summarize([]float64{20, 30})},
		},
		Footprint: []Footprint{
			{DCs: 1000, Revisions: 10, Usage: procstat.Usage{PeakRSSBytes: 60 << 20}},
			{DCs: 5000, Revisions: 10, Usage: procstat.Usage{PeakRSSBytes: 140 << 20}},
			{DCs: 20000, Revisions: 10, SyncSeconds: 300, Usage: procstat.Usage{PeakRSSBytes: 250 << 20, CPUSeconds: 61.5}},
		},
		Reference: &Reference{RCCreates: 3000, Concurrency: 32, Seconds: 10, PerSecond: 300,
			Floors: []Floor{{N: 1000, Phase: PhaseChange, PodWrites: 6000, QPS: 20, Seconds: 300, DCSeconds: 300, DeploySeconds: 400}}},
	}
	r.Targets = EvaluateTargets(r)
	return r
}

func TestEvaluateTargets(t *testing.T) {
	got := sample().Targets
	tests := []struct {
		name    string
		met     *bool
		gotPart string
	}{
		// Ratios 0.75, 1.1, 0.775: the median is judged.
		{"DC/Deployment time, template change", new(true), "median 0.78 (min 0.75, max 1.10, 3 repeats) (310 s / 400 s) at 1000 rollouts"},
		// Ratios 0.83, 1.3, 0.9: median 0.9.
		{"DC/Deployment time, first rollout", new(true), "median 0.90"},
		// Repeat 1: DC 3+1+1+1+3 = 9 of the rollout's (app pods left
		// out) vs Deployment 6+1+2 = 9; repeat 2: DC from the categories
		// 5+1+1+3 = 10 vs 9. Median of 1.00 and 1.11.
		{"writes per DC rollout (all but app pods'), template change", new(true), "median 1.06 (min 1.00, max 1.11, 2 repeats)× (9.5 vs 9.0, medians at N=1000)"},
		{"writes per DC rollout (all but app pods'), first rollout", nil, "not measured"},
		// The worse of the two probe rows.
		{"trigger → deployer pod created, p99", new(true), "0.60 s, 2 probes with 1000 in flight, worst of 2 phases; ≥ 1000 still in flight"},
		{"trigger → deployer pod created, p99, all triggered at once", nil, "3.50 s with 1000 triggered at once, worst of 2 phases"},
		// Rest 0 / 1 s against 1 + 0.2 and 1.2 + 0.3 s.
		{"idle rollout: DC time less its prescribed pauses", new(true), "p50 0.00 s vs 1.20 s, p99 1.00 s vs 1.50 s"},
		{"dc-controller peak RSS", new(false), "140.0 MB at 5000 DCs"},
		{"dc-controller peak RSS", new(true), "250.0 MB at 20000 DCs"},
		{"dc-controller CPU to sync", nil, "61.5 CPU s over 300 s at 20000 DCs"},
	}
	// The deployer-mode rows per deployer mode follow (TestModeTargets).
	if len(got) != len(tests)+len(modeTargets(&Report{})) {
		t.Fatalf("%d targets, want %d and the modes' rows", len(got), len(tests))
	}
	for i, tt := range tests {
		g := got[i]
		if g.Name != tt.name {
			t.Errorf("target %d is %q, want %q", i, g.Name, tt.name)
		}
		if metWord(g.Met) != metWord(tt.met) {
			t.Errorf("%s: met = %v, want %v (%s)", tt.name, metWord(g.Met), metWord(tt.met), g.Got)
		}
		if !strings.Contains(g.Got, tt.gotPart) {
			t.Errorf("%s: got %q, want it to contain %q", tt.name, g.Got, tt.gotPart)
		}
	}
}

func TestEvaluateTargetsUnmeasured(t *testing.T) {
	for _, tg := range EvaluateTargets(&Report{}) {
		if tg.Met != nil || tg.Got != "not measured" {
			t.Errorf("%s on an empty report: %+v", tg.Name, tg)
		}
	}
}

func TestEvaluateTargetsOtherSizes(t *testing.T) {
	r := &Report{
		Throughput: []Throughput{{N: 200, Phase: PhaseChange, DC: Run{Seconds: 50}, Deployment: Run{Seconds: 100}, Ratio: 0.5}},
		Footprint:  []Footprint{{DCs: 500, Usage: procstat.Usage{PeakRSSBytes: 10 << 20}}},
	}
	got := EvaluateTargets(r)
	if !strings.Contains(got[0].Got, "200 rollouts (target is for 1000)") {
		t.Errorf("smaller size not flagged: %q", got[0].Got)
	}
	if !strings.Contains(got[7].Got, "500 DCs (target is for 5000)") || !strings.Contains(got[8].Got, "500 DCs (target is for 20000)") {
		t.Errorf("smaller footprint not flagged: %q, %q", got[7].Got, got[8].Got)
	}
	if got[7].Met != nil || got[8].Met != nil {
		t.Errorf("a footprint of 500 DCs judged the targets at 5000 and 20000 (%s, %s)", metWord(got[7].Met), metWord(got[8].Met))
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b strings.Builder
	if err := WriteMarkdown(&b, sample(), "2026-11-30.png"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"# deployconfig benchmark, 2026-11-30 09:00 UTC",
		"Machine: 2 cores",
		"24.0 GiB memory",
		"![rollouts completed over time](2026-11-30.png)",
		"| DC/Deployment time, template change | ≤ 0.80 at 1000 | median 0.78 (min 0.75, max 1.10, 3 repeats) (310 s / 400 s) at 1000 rollouts | yes |",
		"| dc-controller peak RSS | ≤ 100 MB at 5000 DCs | 140.0 MB at 5000 DCs | **no** |",
		"| 1000 | template change | — | 1 (DC first) | 300.0 s | 400.0 s | **0.75** |",
		"| 1000 | template change | — | 2 (Deployment first) | 330.0 s | 300.0 s | **1.10** |",
		"| 1000 | template change | — | 3 | 1: DC, 2: Deployment, 3: DC | 300.0 / 310.0 / 330.0 | 300.0 / 400.0 / 400.0 | 0.75 / 0.78 / 1.10 |",
		// Pooled over the 2 repeats: DC (9000 + 10000) / 2000 = 9.5,
		// Deployment 9.
		"| 1000 | template change | DeploymentConfig | 2 | 9.50 | **1.06** |",
		"| 1000 | template change | — | 9.00 / 9.50 / 10.00 | 9.00 / 9.00 / 9.00 | 1.00 / 1.06 / 1.11 |",
		"| dc-controller | 4.50 | 0.00 | 1.00 | 1.00 | 6.50 | 0.00 | 0.00 | replicationcontrollers update 3000, pods create (deployer pod) 1000 |",
		"| dc-controller | create | pods (deployer pod) | 0.50 | the deployer pod |",
		"| dc-controller | update | replicationcontrollers | 1.50 | (unexpected: not a write of this benchmark's rollouts) |",
		"| DeploymentConfig | 2 | 5.00 / 6.00 s | 5.0 s | 0.00 / 1.00 s | 0.20 / 0.30 s |",
		"| DeploymentConfig | 1000 triggered at once (first rollout) | 2 | 0.50 / 2.50 / 2.50 / 2.50 | 4.00 / 8.00 / 8.00 / 8.00 | 50.00 / 60.00 / 60.00 / 60.00 |",
		// A row without first-pod samples (a report from before them).
		"| Deployment | probes while 1000 in flight (template change) | 2 | — | — | 20.00 / 30.00 / 30.00 / 30.00 |",
		"| trigger → deployer pod created, p99, all triggered at once | for reference (N at once need ≥ 2N writes at QPS 20) | 3.50 s with 1000 triggered at once, worst of 2 phases | — |",
		"| 5000 | pod | 10 | 0 | 0 | 140.0 MB |",
		"| 20.5 KB |",
		"**300 creates/s**",
		"| 1000 | template change | 6000 | 20 | 300 s |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q\n%s", want, out)
		}
	}
}

func TestWorstRow(t *testing.T) {
	row := func(system string, inFlight int, probes bool, p99 float64) Latency {
		return Latency{System: system, InFlight: inFlight, Probes: probes, Load: fmt.Sprint(inFlight, probes, p99),
			ToDeployerPod: stats.Summarize([]float64{p99})}
	}
	tests := []struct {
		name     string
		rows     []Latency
		probes   bool
		wantLoad string
		wantRows int
	}{
		{"none", nil, true, "", 0},
		{"idle has nothing in flight", []Latency{row(SystemDC, 1, false, 0.1)}, false, "", 0},
		{"the most in flight wins, even when faster", []Latency{row(SystemDC, 1000, true, 0.2), row(SystemDC, 200, true, 0.9)}, true, "1000 true 0.2", 1},
		{"of equals the slowest", []Latency{row(SystemDC, 200, true, 0.2), row(SystemDC, 200, true, 0.9), row(SystemDC, 200, true, 0.5)}, true, "200 true 0.9", 3},
		{"probes and rows at once are apart", []Latency{row(SystemDC, 200, false, 9), row(SystemDC, 200, true, 0.3)}, true, "200 true 0.3", 1},
		{"rows at once", []Latency{row(SystemDC, 200, false, 9), row(SystemDC, 200, true, 0.3)}, false, "200 false 9", 1},
		{"Deployments have no deployer pods", []Latency{{System: SystemDeployment, InFlight: 200, Probes: true}}, true, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rows := worstRow(tt.rows, tt.probes)
			load := ""
			if got != nil {
				load = got.Load
			}
			if load != tt.wantLoad || rows != tt.wantRows {
				t.Errorf("worstRow = %q of %d rows, want %q of %d", load, rows, tt.wantLoad, tt.wantRows)
			}
		})
	}
}

func TestPoolCosts(t *testing.T) {
	costs := []APICost{
		{N: 20, Phase: PhaseFirst, System: SystemDC, Repeat: 1, Rollouts: 20, Actors: []audit.ActorCount{
			{Actor: audit.ActorDCController, Objects: 40, RolloutWrites: map[string]int{"replicationcontrollers create": 20}}}},
		{N: 20, Phase: PhaseFirst, System: SystemDeployment, Repeat: 1, Rollouts: 20},
		{N: 20, Phase: PhaseFirst, System: SystemDC, Repeat: 2, Rollouts: 20, Actors: []audit.ActorCount{
			{Actor: audit.ActorScheduler, AppPods: 60, Events: 80},
			{Actor: audit.ActorDCController, Objects: 60, RolloutWrites: map[string]int{"replicationcontrollers create": 20}}}},
	}
	pooled := PoolCosts(costs)
	if len(pooled) != 2 || pooled[0].System != SystemDC || pooled[1].System != SystemDeployment {
		t.Fatalf("pooled = %+v, want DC then Deployment", pooled)
	}
	dc := pooled[0]
	if dc.Rollouts != 40 || dc.Repeats != 2 || len(dc.Actors) != 2 {
		t.Fatalf("DC pooled = %+v, want 40 rollouts of 2 repeats, 2 actors", dc)
	}
	if a := dc.Actors[0]; a.Actor != audit.ActorDCController || a.Objects != 100 || a.RolloutWrites["replicationcontrollers create"] != 40 {
		t.Errorf("dc-controller pooled = %+v", a)
	}
	// (100 + 80) / 40: the scheduler's app pod bindings are not the rollout's.
	if got := dc.RolloutWrites(); got != 4.5 {
		t.Errorf("RolloutWrites = %v, want 4.5", got)
	}
	if costs[0].Actors[0].Objects != 40 {
		t.Errorf("pooling changed its input: %+v", costs[0].Actors[0])
	}
}

// The idle target reads the latency scenario's rows, not a throughput
// phase of N=1, which also has one rollout in flight.
func TestIdleTargetReadsTheIdleRows(t *testing.T) {
	r := &Report{Latency: []Latency{
		{System: SystemDC, Load: "idle (one at a time)", InFlight: 1, PrescribedSeconds: 3,
			ToComplete: stats.Summarize([]float64{3.2, 3.4}), Rest: stats.Summarize([]float64{0.2, 0.4})},
		{System: SystemDeployment, Load: "idle (one at a time)", InFlight: 1, ToComplete: stats.Summarize([]float64{0.5, 0.6})},
		{System: SystemDC, Load: "1 triggered at once (template change)", InFlight: 1, PrescribedSeconds: 3,
			ToComplete: stats.Summarize([]float64{9}), Rest: stats.Summarize([]float64{6})},
		{System: SystemDeployment, Load: "1 triggered at once (template change)", InFlight: 1, ToComplete: stats.Summarize([]float64{0.4})},
	}}
	got := idleTarget(r)
	if metWord(got.Met) != "yes" || !strings.Contains(got.Got, "2 rollouts") {
		t.Errorf("idle target = %q met %s; want the idle rows' 2 rollouts, met", got.Got, metWord(got.Met))
	}
}

// TestControlPlaneCPUPerRollout: a phase's control-plane CPU is shown per
// rollout (its N and its probes), with the API server's DC/Deployment
// ratio; phases read before the figure existed are left out.
func TestControlPlaneCPUPerRollout(t *testing.T) {
	r := sample()
	r.Settings.Probes = 20
	r.Throughput[1].DC.ControlPlaneCPU = map[string]float64{"kube-apiserver": 510, "etcd": 102, "kube-controller-manager": 51}
	r.Throughput[1].Deployment.ControlPlaneCPU = map[string]float64{"kube-apiserver": 306, "etcd": 51}
	var b strings.Builder
	if err := WriteMarkdown(&b, r, ""); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	want := "| 1000 | template change | — | 1 (DC first) | 500 / 100 / 50 | 300 / 50 / 0 | **1.67** |"
	if !strings.Contains(out, want) {
		t.Errorf("report lacks %q\n%s", want, out)
	}
	if n := strings.Count(out, "| 1000 | first rollout | — | 1 (DC first) |"); n != 1 {
		t.Errorf("a phase without CPU readings has %d rows in all, want 1 (its throughput row)", n)
	}
}
