package report

import (
	"strings"
	"testing"
)

// TestFanOut: each case's ratio is its all-done time over the peer's (the
// case without a policy), reconciles per waiting DC-minute divide by the
// waiting DC-minutes and are "-" without waiters, and the held
// measurement divides by N and the window.
func TestFanOut(t *testing.T) {
	peer := FanOut{Case: "no policy", N: 200, MostAtOnce: 113, AllDone: 80, Reconciles: 843}
	capped := FanOut{Case: "maxConcurrent: 10%", N: 200, MostAtOnce: 20, FirstDone: 9.9, AllDone: 120, Reconciles: 984, WaitingDCMinutes: 164}
	peer.SetRatio(peer)
	capped.SetRatio(peer)
	if peer.Ratio != 1 || capped.Ratio != 1.5 || capped.PerWaitingDCMinute != 6 || peer.PerWaitingDCMinute != 0 {
		t.Errorf("ratios %.2f and %.2f (want 1 and 1.5), per waiting DC-minute %.2f and %.2f (want 0 and 6)",
			peer.Ratio, capped.Ratio, peer.PerWaitingDCMinute, capped.PerWaitingDCMinute)
	}
	held := NewFanOutHeld(200, 60, 10)
	if held.PerWaitingDCMinute != 0.05 {
		t.Errorf("held: %.3f per waiting DC per minute, want 0.050", held.PerWaitingDCMinute)
	}
	if zero := NewFanOutHeld(0, 60, 10); zero.PerWaitingDCMinute != 0 {
		t.Errorf("held with no DC: %.3f, want 0", zero.PerWaitingDCMinute)
	}
	for _, want := range []string{"at most 20 at once", "all done 120.0 s (1.50 × no policy)", "164.0 waiting DC-minutes"} {
		if !strings.Contains(capped.Line(), want) {
			t.Errorf("line %q lacks %q", capped.Line(), want)
		}
	}

	var b strings.Builder
	writeFanOut(&b, &Report{})
	if b.Len() != 0 {
		t.Errorf("a run without the scenario has its section: %q", b.String())
	}
	writeFanOut(&b, &Report{FanOut: []FanOut{peer, capped}, FanOutHeld: []FanOutHeld{held}})
	md := b.String()
	for _, want := range []string{"## Fan-out", "| no policy | 200 | **113** | 0.0 s | **80.0 s** | **1.00** | 0 | 843 | - | - |",
		"| maxConcurrent: 10% | 200 | **20** | 9.9 s | **120.0 s** | **1.50** | 0 | 984 | 164.0 | 6.00 |", "| 200 | 60 s | 10 | **0.050** |"} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
}
