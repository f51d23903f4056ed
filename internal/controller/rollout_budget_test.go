package controller

import (
	"testing"

	"golang.org/x/time/rate"
)

// TestRolloutBudget: by default the rollouts run in the controller get a
// deployer pod's write rate each, never less in all than the controller's
// own; a fixed rate holds whatever their number.
func TestRolloutBudget(t *testing.T) {
	tests := []struct {
		name         string
		fixed, floor float64
		inFlight     int
		wantLimit    float64
		wantBurst    int
	}{
		{"none in flight: the floor", 0, 20, 0, 20, 40},
		{"few in flight: still the floor", 0, 20, 3, 20, 40},
		{"many in flight: a deployer pod's each", 0, 20, 200, 200 * DeployerPodQPS, 2 * 200 * DeployerPodQPS},
		{"no floor given: at least one a second", 0, 0, 0, 1, 2},
		{"fixed: whatever is in flight", 50, 20, 200, 50, 100},
		{"fixed below the floor: the fixed rate", 2, 20, 1, 2, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newRolloutBudget(tt.fixed, tt.floor)
			b.setInFlight(tt.inFlight)
			if got := b.limiter.Limit(); got != rate.Limit(tt.wantLimit) {
				t.Errorf("limit = %v, want %v", got, tt.wantLimit)
			}
			if got := b.limiter.Burst(); got != tt.wantBurst {
				t.Errorf("burst = %d, want %d", got, tt.wantBurst)
			}
		})
	}
}

// TestRolloutBudgetFollowsTheRollouts: the rate grows as rollouts start
// and shrinks back as they end.
func TestRolloutBudgetFollowsTheRollouts(t *testing.T) {
	b := newRolloutBudget(0, 20)
	for _, step := range []struct {
		inFlight int
		want     float64
	}{{10, 50}, {100, 500}, {4, 20}, {0, 20}} {
		b.setInFlight(step.inFlight)
		if got := b.limiter.Limit(); got != rate.Limit(step.want) {
			t.Errorf("%d in flight: limit = %v, want %v", step.inFlight, got, step.want)
		}
	}
}
