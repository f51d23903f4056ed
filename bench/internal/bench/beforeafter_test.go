package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
)

// TestBaselineOptions: the scenarios that measure a baseline need its
// binaries and a cluster they can size; other runs need neither.
func TestBaselineOptions(t *testing.T) {
	base := DefaultOptions()
	base.Root, base.BinDir, base.OutDir = "/r", "/r/bin", "/r/out"
	tests := []struct {
		name    string
		edit    func(o *Options)
		wantErr string
	}{
		{"no baseline scenario", func(o *Options) { o.Scenarios = []string{ScenarioFootprint} }, ""},
		{"dashboard without a baseline", func(o *Options) { o.Scenarios = []string{ScenarioDashboard} }, "need --baseline-bin"},
		{"logcache without a baseline", func(o *Options) { o.Scenarios = []string{ScenarioLogCache} }, "need --baseline-bin"},
		{"dashboard", func(o *Options) { o.Scenarios, o.BaselineBin = []string{ScenarioDashboard}, "/before" }, ""},
		{"fewer pods than the DCs have", func(o *Options) {
			o.Scenarios, o.BaselineBin, o.DashboardDCs, o.DashboardPods = []string{ScenarioDashboard}, "/before", 500, 999
		}, "2 pods per DC"},
		{"no tabs", func(o *Options) {
			o.Scenarios, o.BaselineBin, o.DashboardTabs = []string{ScenarioDashboard}, "/before", 0
		}, "1 tab"},
		{"negative log", func(o *Options) {
			o.Scenarios, o.BaselineBin, o.LogCacheLogBytes = []string{ScenarioLogCache}, "/before", -1
		}, "must not be negative"},
		{"no log cache size", func(o *Options) {
			o.Scenarios, o.BaselineBin, o.LogCacheSizes = []string{ScenarioLogCache}, "/before", []int{0}
		}, "invalid size 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.edit(&o)
			err := o.validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}

// TestLogText: the log has exactly the size asked for, in the lines a
// rollout logs.
func TestLogText(t *testing.T) {
	for _, size := range []int{0, 1, 100, 16 << 10} {
		got := logText("web-1", size)
		if len(got) != size {
			t.Errorf("size %d: log of %d bytes", size, len(got))
		}
		if size >= 3 && !strings.HasPrefix(got, "-->") {
			t.Errorf("size %d: log starts %q", size, got[:3])
		}
	}
	if logText("web-1", -1) != "" {
		t.Error("a negative size gave a log")
	}
}

// TestServingURL: the dashboard's URL comes from the line it prints once
// it listens, without its trailing slash.
func TestServingURL(t *testing.T) {
	tests := []struct {
		line, want string
		ok         bool
	}{
		{"Serving the dashboard at http://127.0.0.1:40123/ (Ctrl-C stops it)", "http://127.0.0.1:40123", true},
		{"Serving the dashboard at http://127.0.0.1:8990/", "http://127.0.0.1:8990", true},
		{"Warning: --address 0.0.0.0 lets whoever reaches it act", "", false},
	}
	for _, tc := range tests {
		got, ok := servingURL(tc.line)
		if got != tc.want || ok != tc.ok {
			t.Errorf("servingURL(%q) = %q, %v; want %q, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

// TestDashboardFigures: per tab is what the tabs add over the window
// without them, over the streams (two per tab) and the minutes; the
// ratios are after over before.
func TestDashboardFigures(t *testing.T) {
	o := DefaultOptions()
	o.DashboardTabs, o.DashboardWindow, o.Baseline = 2, 30*time.Second, "535057d"
	before := dashboardReading{
		without: proxyCounts{requests: 0, bytes: 30 << 20}, opening: proxyCounts{requests: 40},
		with: proxyCounts{requests: 60, logs: 20, bytes: 32 << 20}, usage: procstat.Usage{RSSBytes: 200 << 20},
	}
	after := dashboardReading{
		without: proxyCounts{requests: 0, bytes: 1 << 20}, opening: proxyCounts{requests: 8},
		with: proxyCounts{requests: 2, logs: 0, bytes: 1 << 20}, usage: procstat.Usage{RSSBytes: 50 << 20},
	}
	m := dashboardFigures(o, before, after)
	want := map[string][2]float64{
		"RSS":                        {200 << 20, 50 << 20},
		"API requests per open tab":  {30, 1},
		"pod-log GETs per open tab":  {10, 0},
		"API bytes received, no tab": {60 << 20, 2 << 20},
		"API requests to open a tab (and its first 10s)": {10, 2},
	}
	seen := 0
	for _, f := range m.Figures {
		w, ok := want[f.Figure]
		if !ok {
			continue
		}
		seen++
		if f.Before != w[0] || f.After != w[1] {
			t.Errorf("%s: %v → %v, want %v → %v", f.Figure, f.Before, f.After, w[0], w[1])
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d figures found in %+v", seen, len(want), m.Figures)
	}
	if m.Size != "500 DCs among 20000 pods" || m.Baseline != "535057d" {
		t.Errorf("size %q, baseline %q", m.Size, m.Baseline)
	}
}

// TestOtherPods: the other workloads' pods are spread over their
// namespaces with names that never repeat in one.
func TestOtherPods(t *testing.T) {
	seen := map[string]bool{}
	for k := range 1000 {
		key := otherNamespace(k) + "/" + otherPod(k)
		if seen[key] {
			t.Fatalf("pod %d is %s again", k, key)
		}
		seen[key] = true
	}
	if otherNamespace(3) != "bench-other-3" || otherNamespace(13) != "bench-other-3" || otherPod(13) != "other-00001" {
		t.Errorf("names %s/%s", otherNamespace(13), otherPod(13))
	}
}
