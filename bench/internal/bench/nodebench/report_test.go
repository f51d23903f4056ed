package nodebench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
)

// sampleReport has 4 rollouts of each system and one failure.
func sampleReport() *Report {
	r := &Report{
		Started:  time.Date(2026, 12, 1, 16, 0, 0, 0, time.UTC),
		Duration: 125,
		Settings: Settings{Rollouts: 4, Replicas: 3, MaxSurge: "25%", MaxUnavailable: "25%",
			UpdatePeriodSeconds: 1, IntervalSeconds: 1, PrescribedPauseSeconds: 5},
	}
	for i, v := range []struct{ running, done, dc, dep float64 }{{1, 7, 8, 4}, {2, 9, 10, 5}, {3, 10, 12, 6}, {4, 18, 20, 8}} {
		r.Samples = append(r.Samples,
			Sample{System: SystemDC, Iteration: i + 1, DeployerRunning: v.running, DeployerDone: v.done, Complete: v.dc,
				LogFirst: v.running + 0.5, LogLast: v.done - 1, DeployerExited: v.done - 0.5, FirstPod: v.running + 1,
				DeployerPeak: uint64(10+i) << 20, DeployerContainerPeak: uint64(8+i) << 20, DeployerRSS: uint64(6+i) << 20},
			Sample{System: SystemDeployment, Iteration: i + 1, Complete: v.dep, FirstPod: v.dep / 4})
	}
	r.Samples = append(r.Samples, Sample{System: SystemDC, Iteration: 5, Err: "rollout web-dc-6 failed"})
	return r
}

func TestSummarize(t *testing.T) {
	s := sampleReport().Summarize()
	if s.Failed != 1 {
		t.Errorf("Failed = %d, want 1", s.Failed)
	}
	if len(s.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(s.Rows))
	}
	// First new pod: DC 2, 3, 4, 5; Deployment 1, 1.25, 1.5, 2.
	if first := s.Rows[2]; first.DC.P50 != 3 || first.DC.P99 != 5 || first.Deployment.P50 != 1.25 || first.Deployment.P99 != 2 {
		t.Errorf("first new pod row = %+v, want DC 3 / 5, Deployment 1.25 / 2", first)
	}
	if len(s.Objective) != 2 {
		t.Fatalf("objective rows %+v, want the DC's (pod mode) and the Deployment's", s.Objective)
	}
	if dc := s.Objective[0]; dc.Where != report.WhereNode || dc.N != 1 || dc.Mode != report.ModePod || dc.Phase != report.PhaseChange ||
		dc.FirstPod.P50 != 3 || dc.Complete.P99 != 20 || dc.Complete.Count != 4 {
		t.Errorf("DC objective row %+v", dc)
	}
	running, complete := s.Rows[0], s.Rows[1]
	// Nearest rank: p50 of 4 samples is the 2nd, p99 the 4th.
	if running.DC.P50 != 2 || running.DC.P99 != 4 || running.Deployment.Count != 0 || running.RatioP50 != 0 {
		t.Errorf("deployer Running row = %+v, want DC p50 2, p99 4, no Deployment figures and no ratio", running)
	}
	if complete.DC.P50 != 10 || complete.Deployment.P50 != 5 || complete.RatioP50 != 2 || complete.RatioP99 != 2.5 {
		t.Errorf("Complete row = %+v, want p50 10 vs 5 (ratio 2) and p99 20 vs 8 (ratio 2.5)", complete)
	}
	// The strategy (first → last line): 4.5, 5.5, 5.5, 12.5; Succeeded →
	// Complete: 1, 1, 2, 2.
	if strategy, after := s.Breakdown[2].DC, s.Breakdown[5].DC; strategy.P50 != 5.5 || strategy.P99 != 12.5 || after.P50 != 1 || after.P99 != 2 {
		t.Errorf("breakdown = strategy %+v, bookkeeping %+v; want p50 5.5 and p99 12.5, p50 1 and p99 2", strategy, after)
	}
	start, exit, terminal := s.Breakdown[1].DC, s.Breakdown[3].DC, s.Breakdown[4].DC
	if start.P50 != 0.5 || exit.P99 != 0.5 || terminal.P50 != 0.5 {
		t.Errorf("breakdown = start %+v, exit %+v, pod stop %+v; want 0.5 each", start, exit, terminal)
	}
	// Rest: 3, 5, 7, 15 against the Deployment's 5 / 8 plus the deployer
	// pod's start 2 / 4: the p50 (5 ≤ 7) holds, the p99 (15 > 12) not.
	if s.Rest.P50 != 5 || s.Rest.P99 != 15 || s.RestMet {
		t.Errorf("rest %+v met %v, want p50 5, p99 15, not met", s.Rest, s.RestMet)
	}
	if s.PodPeakMiB.P50 != 11 || s.PodPeakMiB.Max != 13 || s.ContainerPeakMiB.Max != 11 || s.RSSMiB.P50 != 7 {
		t.Errorf("memory = pod %+v, container %+v, rss %+v; want pod p50 11 max 13, container max 11, rss p50 7",
			s.PodPeakMiB, s.ContainerPeakMiB, s.RSSMiB)
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| trigger → deployer pod Running (s) | 2.00 | 4.00 | – | – | – | – | 4 / 0 |",
		"| trigger → Complete (s) | 10.00 | 20.00 | 5.00 | 8.00 | 2.00 | 2.50 | 4 / 4 |",
		"make its deployer pause 5 s in each rollout",
		"less the prescribed 5 s (p50 5.00 s, p99 15.00 s) ≤ the Deployment's trigger → Complete + the deployer pod's start (trigger → Running): 7.00 s, 12.00 s. Met: **no**.",
		"| pod peak (memory.max_usage_in_bytes of the pod: deployer + pause, page cache included) | 11.0 | 13.0 | 4 |",
		"| 5 | DeploymentConfig |  |  |  | 0.00 |  | rollout web-dc-6 failed |",
		"| 2 | DeploymentConfig | 2.00 | 9.00 | 3.00 | 10.00 | 11.0 |  |",
		"| trigger → first new pod (s) | 3.00 | 5.00 | 1.25 | 2.00 | 2.40 | 2.50 | 4 / 4 |",
		"| real node | 1 | DC, pod mode | template change | 3.00 s | 5.00 s | 10.00 s | 20.00 s | 4 |",
		"| real node | 1 | DC, controller mode | template change | not measured | | | | |",
		"| first → last log line (the strategy: scaling, readiness, pauses) | 5.50 | 12.50 |",
		"| strategy | Rolling, maxSurge 25%, maxUnavailable 25% (both); DC: updatePeriodSeconds 1, intervalSeconds 1 |",
		"Run took 2m5s.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestWriteMarkdownWithoutSamples(t *testing.T) {
	var b bytes.Buffer
	if err := (&Report{}).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if want := "| trigger → Complete (s) | – | – | – | – | – | – | 0 / 0 |"; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
}

func TestWriteJSONHasTheSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := sampleReport().WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Samples []Sample `json:"samples"`
		Summary Summary  `json:"summary"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if rows, err := report.ReadObjective(path); err != nil || len(rows) != 2 {
		t.Errorf("objective rows from the JSON: %+v, %v; want 2", rows, err)
	}
	if len(got.Samples) != 9 || got.Summary.Rows[1].RatioP50 != 2 {
		t.Errorf("JSON has %d samples and Complete ratio %v, want 9 and 2", len(got.Samples), got.Summary.Rows[1].RatioP50)
	}
}
