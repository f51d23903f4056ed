package report

import (
	"fmt"
	"strings"
)

// Units of a Versus figure, which say how it is printed.
const (
	UnitBytes       = "bytes"
	UnitPerMinute   = "requests/min"
	UnitPerTabMin   = "requests/min/tab"
	UnitGoroutines  = "goroutines"
	UnitSeconds     = "s"
	UnitRequests    = "requests"
	UnitBytesPerMin = "bytes/min"
)

// Versus is one figure measured for two builds in the same run, on the
// same cluster: Before (the baseline commit) and After (this checkout).
type Versus struct {
	Figure string  `json:"figure"`
	Unit   string  `json:"unit"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
}

// Ratio is After / Before; 0 when Before is 0, where no ratio exists.
func (v Versus) Ratio() float64 {
	if v.Before == 0 {
		return 0
	}
	return v.After / v.Before
}

// ratio prints Ratio, or "-" when there is none.
func (v Versus) ratio() string {
	if v.Before == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v.Ratio())
}

// value prints one of the figure's values in its unit.
func (v Versus) value(x float64) string {
	switch v.Unit {
	case UnitBytes:
		return MB(uint64(max(x, 0)))
	case UnitBytesPerMin:
		return MB(uint64(max(x, 0))) + "/min"
	case UnitGoroutines:
		return fmt.Sprintf("%.0f", x)
	default:
		return fmt.Sprintf("%.1f %s", x, v.Unit)
	}
}

// BeforeAfter is one measurement of a before-and-after scenario: a size
// of the cluster, the baseline commit, and its figures.
type BeforeAfter struct {
	// Scenario is the dc-bench scenario, Size what it measured at.
	Scenario string `json:"scenario"`
	Size     string `json:"size"`
	// Baseline names the build measured as Before (a commit).
	Baseline string   `json:"baseline"`
	Figures  []Versus `json:"figures"`
	// Detail says how the figures were taken, for the report.
	Detail string `json:"detail,omitempty"`
}

// Line is the measurement on one line, as dc-bench prints it.
func (m BeforeAfter) Line() string {
	parts := make([]string, 0, len(m.Figures))
	for _, f := range m.Figures {
		parts = append(parts, fmt.Sprintf("%s %s → %s (×%s)", f.Figure, f.value(f.Before), f.value(f.After), f.ratio()))
	}
	return fmt.Sprintf("%s (%s), before = %s: %s", m.Scenario, m.Size, m.Baseline, strings.Join(parts, "; "))
}

// PerTabPerMinute is the API requests per minute that each open tab
// adds: the requests of a window with tabs open less those of a window of
// the same length without, over the tabs and the window's minutes. 0
// when there are no tabs or no window.
func PerTabPerMinute(withTabs, withoutTabs int, seconds float64, tabs int) float64 {
	if tabs <= 0 || seconds <= 0 {
		return 0
	}
	return float64(withTabs-withoutTabs) / float64(tabs) / (seconds / 60)
}

// PerMinute is n requests over seconds, per minute; 0 without a window.
func PerMinute(n int, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(n) / (seconds / 60)
}

// writeBeforeAfter renders the before-and-after scenarios' section.
func writeBeforeAfter(b *strings.Builder, r *Report) {
	if len(r.BeforeAfter) == 0 {
		return
	}
	b.WriteString("## Before and after: the same cluster, two builds\n\n")
	b.WriteString("Each figure comes from both builds on the same cluster in the same run; **ratio = after / before** (below 1: the change saves).\n\n")
	for _, m := range r.BeforeAfter {
		fmt.Fprintf(b, "### %s, %s (before: %s)\n\n", m.Scenario, m.Size, m.Baseline)
		if m.Detail != "" {
			b.WriteString(m.Detail + "\n\n")
		}
		b.WriteString("| figure | before | after | **ratio** |\n| --- | ---: | ---: | ---: |\n")
		for _, f := range m.Figures {
			fmt.Fprintf(b, "| %s | %s | %s | **%s** |\n", f.Figure, f.value(f.Before), f.value(f.After), f.ratio())
		}
		b.WriteString("\n")
	}
}
