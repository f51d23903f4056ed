package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deployconfig/deployconfig/internal/bench/audit"
	"github.com/deployconfig/deployconfig/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/internal/bench/stats"
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
			{N: 1000, Phase: PhaseFirst, DC: Run{Seconds: 100}, Deployment: Run{Seconds: 120}, Ratio: 100.0 / 120},
			{N: 1000, Phase: PhaseChange, DC: Run{Seconds: 300, Failed: 0}, Deployment: Run{Seconds: 400}, Ratio: 0.75},
		},
		APICost: []APICost{
			{N: 1000, Phase: PhaseChange, System: SystemDC, Rollouts: 1000, Actors: []audit.ActorCount{
				{Actor: audit.ActorDCController, Objects: 4000, DeployerPods: 1000, Events: 1000, ByResource: map[string]int{"replicationcontrollers update": 3000, "pods create": 1000}},
				{Actor: audit.ActorRCManager, AppPods: 6000, Objects: 3000},
			}},
			{N: 1000, Phase: PhaseChange, System: SystemDeployment, Rollouts: 1000, Actors: []audit.ActorCount{
				{Actor: audit.ActorDeploymentCtrl, Objects: 6000, Events: 1000},
				{Actor: audit.ActorRSManager, AppPods: 6000, Objects: 2000},
			}},
		},
		Latency: []Latency{
			{System: SystemDC, Load: "idle", InFlight: 1, ToDeployerPod: stats.Summarize([]float64{0.1, 0.2}), ToComplete: stats.Summarize([]float64{5, 6})},
			{System: SystemDC, Load: "1000 triggered at once (first rollout)", InFlight: 1000, ToDeployerPod: stats.Summarize([]float64{0.5, 2.5}), ToComplete: stats.Summarize([]float64{50, 60})},
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
		{"DC/Deployment time, template change", new(true), "0.75 (300 s / 400 s) at 1000 rollouts"},
		{"DC/Deployment time, first rollout", new(true), "0.83"},
		// (4000+1000)/1000 = 5 vs (6000+1000+2000)/1000 = 9: RC and RS
		// managers' object writes count too.
		{"writes per DC rollout, pods excluded", new(true), "(8.0 vs 9.0"},
		// The worse of the two probe rows.
		{"trigger → deployer pod created, p99", new(true), "0.60 s, 2 probes with 1000 in flight, worst of 2 phases; ≥ 1000 still in flight"},
		{"trigger → deployer pod created, p99, all triggered at once", nil, "3.50 s with 1000 triggered at once, worst of 2 phases"},
		{"dc-controller peak RSS", new(false), "140.0 MB at 5000 DCs"},
	}
	if len(got) != len(tests) {
		t.Fatalf("%d targets, want %d", len(got), len(tests))
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
	if !strings.Contains(got[5].Got, "500 DCs (target is for 5000)") {
		t.Errorf("smaller footprint not flagged: %q", got[4].Got)
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
		"| DC/Deployment time, template change | ≤ 0.80 at 1000 | 0.75 (300 s / 400 s) at 1000 rollouts | yes |",
		"| dc-controller peak RSS | ≤ 100 MB at 5000 DCs | 140.0 MB at 5000 DCs | **no** |",
		"| 1000 | template change | 300.0 s | 400.0 s | **0.75** |",
		"| 1000 | template change | DeploymentConfig | 8.00 | 7.00 | 15.00 | **0.89** |",
		"| dc-controller | 4.00 | 0.00 | 1.00 | 1.00 | 6.00 | 0.00 | 0.00 | replicationcontrollers update 3000, pods create 1000 |",
		"| DeploymentConfig | 1000 triggered at once (first rollout) | 2 | 0.50 / 2.50 / 2.50 / 2.50 | 50.00 / 60.00 / 60.00 / 60.00 |",
		"| Deployment | probes while 1000 in flight (template change) | 2 | — | 20.00 / 30.00 / 30.00 / 30.00 |",
		"| trigger → deployer pod created, p99, all triggered at once | for reference (N at once need ≥ 2N writes at QPS 20) | 3.50 s with 1000 triggered at once, worst of 2 phases | — |",
		"| 5000 | 10 | 0 | 0 | 140.0 MB |",
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
