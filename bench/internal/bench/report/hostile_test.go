package report

import (
	"strings"
	"testing"

	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

// TestHostile: the ratios are with / without of each percentile (0 with
// no peer), and the line and the Markdown section give the figures.
func TestHostile(t *testing.T) {
	dcs := []HostileDC{
		{Name: "hostile-pre-hook", Field: "spec.strategy.rollingParams.pre.analysis.metrics[0].prometheus.query", ToInvalid: 0.25, Refused: true},
		{Name: "hostile-mid-hook", Field: "spec.strategy.recreateParams.mid.analysis.metrics[0].prometheus.query"},
	}
	cases := []struct {
		name          string
		without, with stats.Summary
		p50, p99      float64
		line          []string
		markdown      []string
	}{
		{
			name:    "slower with",
			without: stats.Summary{Count: 10, P50: 5.4, P99: 6.0, Max: 6.0},
			with:    stats.Summary{Count: 10, P50: 5.94, P99: 9.0, Max: 9.0},
			p50:     1.1, p99: 1.5,
			line: []string{"p50 5.40 s without, 5.94 s with (ratio 1.10)", "p99 6.00 s without, 9.00 s with (ratio 1.50)",
				"less the prescribed pauses p50 0.40 s vs 0.94 s (ratio 2.35), p99 1.00 s vs 4.00 s (ratio 4.00)",
				"1 of 2 hostile DCs InvalidAnalysis, the last after 0.25 s"},
			markdown: []string{"## Hostile analyses", "| without hostile DCs | 10 | 5.40 | 6.00 | 6.00 |",
				"| with hostile DCs | 10 | 5.94 | 9.00 | 9.00 |", "| **ratio with / without** | | **1.10** | **1.50** | |",
				"| with, less the prescribed pauses | 10 | 0.94 | 4.00 | 4.00 |", "| **ratio with / without, less the prescribed pauses** | | **2.35** | **4.00** | |",
				"| hostile-pre-hook | `spec.strategy.rollingParams.pre.analysis.metrics[0].prometheus.query` | 0.25 s |",
				"| hostile-mid-hook | `spec.strategy.recreateParams.mid.analysis.metrics[0].prometheus.query` | not seen |"},
		},
		{
			name:    "nothing measured without",
			without: stats.Summary{},
			with:    stats.Summary{Count: 1, P50: 5, P99: 5, Max: 5},
			line:    []string{"(ratio 0.00)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rest := func(s stats.Summary) stats.Summary {
				if s.Count == 0 {
					return s
				}
				return stats.Summary{Count: s.Count, P50: s.P50 - 5, P99: s.P99 - 5, Max: s.Max - 5}
			}
			h := NewHostile(10, Latency{ToComplete: tc.without, Rest: rest(tc.without)}, Latency{ToComplete: tc.with, Rest: rest(tc.with)}, dcs)
			if !near(h.RatioP50, tc.p50) || !near(h.RatioP99, tc.p99) {
				t.Errorf("ratios p50 %v, p99 %v; want %v, %v", h.RatioP50, h.RatioP99, tc.p50, tc.p99)
			}
			line := h.Line()
			for _, want := range tc.line {
				if !strings.Contains(line, want) {
					t.Errorf("line %q lacks %q", line, want)
				}
			}
			var b strings.Builder
			writeHostile(&b, &Report{Hostile: h})
			for _, want := range tc.markdown {
				if !strings.Contains(b.String(), want) {
					t.Errorf("markdown lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
	var b strings.Builder
	writeHostile(&b, &Report{})
	if b.Len() != 0 {
		t.Errorf("a report without the scenario has a hostile section:\n%s", b.String())
	}
}

// near compares ratios computed in floating point.
func near(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}
