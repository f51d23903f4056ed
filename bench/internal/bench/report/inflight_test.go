package report

import (
	"math"
	"strings"
	"testing"
)

// TestNewInFlight: the cost per rollout is (in flight − at rest) / N for
// each figure, negative when the controller holds less in flight (after a
// collection) than at rest, and 0 without rollouts.
func TestNewInFlight(t *testing.T) {
	atRest := ControllerMemory{HeapInuseBytes: 40 << 20, RSSBytes: 90 << 20, AnonBytes: 50 << 20, Goroutines: 300}
	inFlight := ControllerMemory{HeapInuseBytes: 60 << 20, RSSBytes: 89 << 20, AnonBytes: 70 << 20, Goroutines: 2300, RolloutsInFlight: 1000, GaugeSeen: true}
	f := NewInFlight(1000, "controller-when-possible", 42.5, atRest, inFlight)
	want := PerRollout{HeapBytes: 20 << 20 / 1000.0, RSSBytes: -(1 << 20) / 1000.0, AnonBytes: 20 << 20 / 1000.0, Goroutines: 2}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"heap", f.Per.HeapBytes, want.HeapBytes},
		{"rss", f.Per.RSSBytes, want.RSSBytes},
		{"anon", f.Per.AnonBytes, want.AnonBytes},
		{"goroutines", f.Per.Goroutines, want.Goroutines},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s per rollout = %v, want %v", c.name, c.got, c.want)
		}
	}
	if f.N != 1000 || f.Mode != "controller-when-possible" || f.ToPaused != 42.5 || f.AtRest != atRest || f.InFlight != inFlight {
		t.Errorf("the readings were not kept: %+v", f)
	}
	if zero := NewInFlight(0, "pod", 0, atRest, inFlight); zero.Per != (PerRollout{}) {
		t.Errorf("N=0: per rollout %+v, want zero", zero.Per)
	}
}

// TestInFlightRendering: dc-bench's line and the report's section give
// the mode, N, the figures per rollout and the gauge, or say the gauge is
// not served.
func TestInFlightRendering(t *testing.T) {
	served := NewInFlight(1000, "controller-when-possible", 42.5,
		ControllerMemory{HeapInuseBytes: 40 << 20, Goroutines: 300},
		ControllerMemory{HeapInuseBytes: 40<<20 + 1000*2048, Goroutines: 2300, RolloutsInFlight: 1000, GaugeSeen: true})
	pod := NewInFlight(1000, "pod", 60, ControllerMemory{HeapInuseBytes: 40 << 20}, ControllerMemory{HeapInuseBytes: 40<<20 + 1000*1024})
	line := served.Line()
	for _, want := range []string{"controller-when-possible", "N=1000", "heap 2.0 KiB", "2.00 goroutines", "gauge 1000", "42.5 s"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
	if !strings.Contains(pod.Line(), "gauge not served") {
		t.Errorf("line %q does not say the gauge is not served", pod.Line())
	}
	var b strings.Builder
	writeInFlight(&b, &Report{})
	if b.Len() != 0 {
		t.Errorf("a run without the scenario has its section: %q", b.String())
	}
	writeInFlight(&b, &Report{InFlight: []InFlight{served, pod}})
	md := b.String()
	for _, want := range []string{"## Rollouts in flight", "| controller-when-possible | 1000 | 42.5 s |", "**2.0 KiB**", "**2.00**", "| pod | 1000 | 60.0 s |", "**1.0 KiB**", "not served |"} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
}
