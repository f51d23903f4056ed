package imagetrigger

import (
	"sync"
	"time"
)

// Defaults of the per-namespace budget of "resolve now" requests and of
// the time one request may take.
const (
	// DefaultRequestBurst requests of a namespace are answered at once...
	DefaultRequestBurst = 5
	// ...and then one per DefaultRequestEvery.
	DefaultRequestEvery = 10 * time.Second
	// DefaultRequestTimeout bounds the lookups of one request.
	DefaultRequestTimeout = 10 * time.Second
)

// requestBudget is a token bucket per namespace for "resolve now" requests
// (kubectl dc rollout latest): each request looks up every trigger of its
// DeploymentConfig in a worker shared by all namespaces, so that one
// namespace asking in a loop would otherwise keep the workers, and the
// registries, busy for everyone.
type requestBudget struct {
	burst float64
	every time.Duration

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newRequestBudget(burst int, every time.Duration) *requestBudget {
	return &requestBudget{burst: float64(max(burst, 1)), every: every, buckets: map[string]*bucket{}}
}

// take spends one request of the namespace's budget at now. When none is
// left it returns false and how long until one is.
func (b *requestBudget) take(namespace string, now time.Time) (bool, time.Duration) {
	if b == nil {
		return true, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	bk := b.buckets[namespace]
	if bk == nil {
		bk = &bucket{tokens: b.burst, at: now}
		b.buckets[namespace] = bk
	}
	if elapsed := now.Sub(bk.at); elapsed > 0 && b.every > 0 {
		bk.tokens = min(b.burst, bk.tokens+float64(elapsed)/float64(b.every))
		bk.at = now
	}
	if bk.tokens >= 1 {
		bk.tokens--
		return true, 0
	}
	return false, time.Duration((1 - bk.tokens) * float64(b.every))
}
