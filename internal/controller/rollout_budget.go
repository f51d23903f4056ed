package controller

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"golang.org/x/time/rate"
)

// DeployerPodQPS is the write rate each deployer pod has of its own:
// client-go's default, which dc-deploy keeps. The rollouts dc-controller
// runs in itself get as much each (see rolloutBudget), so that moving
// rollouts from pods into the controller never slows them down.
const DeployerPodQPS = 5

// rolloutBudget is the write rate the rollouts run in the controller share.
// A fixed rate (--controller-rollout-qps) holds whatever their number; by
// default the rate follows the rollouts in flight, DeployerPodQPS each,
// and never falls below the floor (the controller's --kube-api-qps):
// one bucket of the controller's own size made a burst of rollouts wait
// on each other's writes where deployer pods each have a bucket.
type rolloutBudget struct {
	limiter *rate.Limiter
	fixed   float64
	floor   float64

	mu       sync.Mutex
	inFlight int
}

// newRolloutBudget returns a budget of fixed writes per second (0: one that
// scales with the rollouts in flight, never below floor).
func newRolloutBudget(fixed, floor float64) *rolloutBudget {
	b := &rolloutBudget{fixed: fixed, floor: max(floor, 1)}
	limit := b.limitFor(0)
	b.limiter = rate.NewLimiter(rate.Limit(limit), burstFor(limit))
	return b
}

// limitFor is the rate for n rollouts in flight.
func (b *rolloutBudget) limitFor(n int) float64 {
	if b.fixed > 0 {
		return b.fixed
	}
	return max(b.floor, float64(n)*DeployerPodQPS)
}

// burstFor is the burst of a rate: two seconds' worth, as a deployer pod's
// client has (5 per second, burst 10).
func burstFor(limit float64) int { return max(int(2*limit), 1) }

// setInFlight resizes the budget for n rollouts in flight.
func (b *rolloutBudget) setInFlight(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n == b.inFlight {
		return
	}
	b.inFlight = n
	limit := b.limitFor(n)
	b.limiter.SetLimit(rate.Limit(limit))
	b.limiter.SetBurst(burstFor(limit))
}

// Wait blocks until a write may go, or ctx ends.
func (b *rolloutBudget) Wait(ctx context.Context) error { return b.limiter.Wait(ctx) }

// writeLimiter makes the requests that change something wait for the
// budget; reads pass, as an informer's do.
type writeLimiter struct {
	next   http.RoundTripper
	budget *rolloutBudget
}

// RoundTrip implements http.RoundTripper.
func (w *writeLimiter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		if err := w.budget.Wait(req.Context()); err != nil {
			return nil, fmt.Errorf("rollout write budget: %w", err)
		}
	}
	return w.next.RoundTrip(req)
}
