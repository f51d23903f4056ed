package imagetrigger

import "time"

// jitterFraction is how much of a poll interval or backoff delay jitter
// may take off, so that lookups that started together spread out instead
// of hitting a registry in bursts. Jitter only shortens a wait: a new
// image is still seen within one poll interval.
const jitterFraction = 0.2

// jitter returns d shortened by up to fraction f of itself; r, in [0, 1),
// says how much.
func jitter(d time.Duration, f, r float64) time.Duration {
	if d <= 0 || f <= 0 {
		return d
	}
	r = min(max(r, 0), 1)
	return d - time.Duration(float64(d)*f*r)
}

// registryBackoff spaces out lookups on a registry that fails as a whole
// (unreachable, 5xx, rate limiting): after the n-th failure in a row no
// lookup on it starts for base·2ⁿ⁻¹, at most max. It is not safe for
// concurrent use; the Resolver guards it with its lock.
type registryBackoff struct {
	base, max time.Duration
	failures  map[string]int
	until     map[string]time.Time
}

func newRegistryBackoff(base, max time.Duration) *registryBackoff {
	return &registryBackoff{base: base, max: max, failures: map[string]int{}, until: map[string]time.Time{}}
}

// delay returns the wait after n consecutive failures.
func (b *registryBackoff) delay(n int) time.Duration {
	d := b.base
	for i := 1; i < n && d < b.max; i++ {
		d *= 2
	}
	return min(d, b.max)
}

// fail records a failure of the registry at now and returns when lookups
// on it may start again; r jitters the delay. Failures while the registry
// already backs off (lookups that ran side by side, or one a user forced)
// do not lengthen the backoff: they are the same outage.
func (b *registryBackoff) fail(registry string, now time.Time, r float64) time.Time {
	if until, blocked := b.blocked(registry, now); blocked {
		return until
	}
	b.failures[registry]++
	until := now.Add(jitter(b.delay(b.failures[registry]), jitterFraction, r))
	b.until[registry] = until
	return until
}

// succeed ends the registry's backoff.
func (b *registryBackoff) succeed(registry string) {
	delete(b.failures, registry)
	delete(b.until, registry)
}

// blocked returns when lookups on the registry may start again, if that is
// after now.
func (b *registryBackoff) blocked(registry string, now time.Time) (time.Time, bool) {
	until, ok := b.until[registry]
	if !ok || !until.After(now) {
		return time.Time{}, false
	}
	return until, true
}
