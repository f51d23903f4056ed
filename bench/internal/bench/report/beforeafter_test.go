package report

import (
	"strings"
	"testing"
)

// TestVersusRatio: the ratio is after over before, and none ("-") when
// before is 0; each unit prints its own way.
func TestVersusRatio(t *testing.T) {
	tests := []struct {
		name      string
		v         Versus
		ratio     float64
		printed   string
		wantValue string
	}{
		{"memory halved", Versus{Figure: "RSS", Unit: UnitBytes, Before: 200 << 20, After: 100 << 20}, 0.5, "0.500", "200.0 MB"},
		{"requests", Versus{Figure: "API requests per open tab", Unit: UnitPerTabMin, Before: 180, After: 2}, 2.0 / 180, "0.011", "180.0 requests/min/tab"},
		{"no before", Versus{Figure: "pod-log GETs", Unit: UnitPerTabMin, After: 3}, 0, "-", "0.0 requests/min/tab"},
		{"goroutines", Versus{Figure: "goroutines", Unit: UnitGoroutines, Before: 12, After: 24}, 2, "2.000", "12"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.v.Ratio(); got != tc.ratio {
				t.Errorf("ratio %v, want %v", got, tc.ratio)
			}
			if got := tc.v.ratio(); got != tc.printed {
				t.Errorf("printed ratio %q, want %q", got, tc.printed)
			}
			if got := tc.v.value(tc.v.Before); got != tc.wantValue {
				t.Errorf("before printed %q, want %q", got, tc.wantValue)
			}
		})
	}
}

// TestPerTabPerMinute: what the tabs add, per tab and per minute; no tab
// or no window gives 0, and a window with tabs that counted fewer
// requests than without gives a negative figure rather than hiding it.
func TestPerTabPerMinute(t *testing.T) {
	tests := []struct {
		name                   string
		with, without, tabs    int
		seconds, want, perMinN float64
	}{
		{"two tabs over a minute", 130, 10, 2, 60, 60, 130},
		{"four tabs over 30 s", 50, 10, 4, 30, 20, 100},
		{"no tabs", 50, 10, 0, 60, 0, 50},
		{"no window", 50, 10, 2, 0, 0, 0},
		{"fewer with tabs", 8, 10, 2, 60, -1, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PerTabPerMinute(tc.with, tc.without, tc.seconds, tc.tabs); got != tc.want {
				t.Errorf("PerTabPerMinute(%d, %d, %v, %d) = %v, want %v", tc.with, tc.without, tc.seconds, tc.tabs, got, tc.want)
			}
			if got := PerMinute(tc.with, tc.seconds); got != tc.perMinN {
				t.Errorf("PerMinute(%d, %v) = %v, want %v", tc.with, tc.seconds, got, tc.perMinN)
			}
		})
	}
}

// TestBeforeAfterReport: the line and the section give both builds'
// figures and the ratio; a run without the scenarios has no section.
func TestBeforeAfterReport(t *testing.T) {
	m := BeforeAfter{
		Scenario: "logcache", Size: "500 DCs", Baseline: "535057d", Detail: "How it was measured.",
		Figures: []Versus{
			{Figure: "heap in use", Unit: UnitBytes, Before: 40 << 20, After: 30 << 20},
			{Figure: "start to settled", Unit: UnitSeconds, Before: 10, After: 12},
		},
	}
	wantLine := "logcache (500 DCs), before = 535057d: heap in use 40.0 MB → 30.0 MB (×0.750); start to settled 10.0 s → 12.0 s (×1.200)"
	if got := m.Line(); got != wantLine {
		t.Errorf("line\n%q, want\n%q", got, wantLine)
	}
	var b strings.Builder
	writeBeforeAfter(&b, &Report{})
	if b.Len() != 0 {
		t.Errorf("a run without the scenarios has their section: %q", b.String())
	}
	writeBeforeAfter(&b, &Report{BeforeAfter: []BeforeAfter{m}})
	md := b.String()
	for _, want := range []string{"## Before and after", "### logcache, 500 DCs (before: 535057d)", "How it was measured.",
		"| heap in use | 40.0 MB | 30.0 MB | **0.750** |", "| start to settled | 10.0 s | 12.0 s | **1.200** |"} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
}
