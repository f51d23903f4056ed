package imagetrigger

import (
	"testing"
	"time"
)

func TestJitterBounds(t *testing.T) {
	const d = 2 * time.Minute
	tests := []struct {
		name string
		d    time.Duration
		f, r float64
		want time.Duration
	}{
		{name: "no randomness keeps the interval", d: d, f: jitterFraction, r: 0, want: d},
		{name: "half", d: d, f: jitterFraction, r: 0.5, want: d - 12*time.Second},
		{name: "r above 1 is clamped", d: d, f: jitterFraction, r: 7, want: d - 24*time.Second},
		{name: "negative r is clamped", d: d, f: jitterFraction, r: -1, want: d},
		{name: "no fraction", d: d, f: 0, r: 0.9, want: d},
		{name: "zero duration", d: 0, f: jitterFraction, r: 0.9, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jitter(tt.d, tt.f, tt.r); got != tt.want {
				t.Errorf("jitter = %v, want %v", got, tt.want)
			}
		})
	}
	// Whatever the randomness, a jittered wait is within [80%, 100%] of d.
	for i := range 1000 {
		r := float64(i) / 1000
		got := jitter(d, jitterFraction, r)
		if got > d || got < d*8/10 {
			t.Fatalf("jitter(%v, r=%v) = %v, outside [%v, %v]", d, r, got, d*8/10, d)
		}
	}
}

func TestRegistryBackoffDoublesUpToTheCap(t *testing.T) {
	b := newRegistryBackoff(time.Second, 10*time.Second)
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	wants := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, want := range wants {
		if i > 0 {
			// The previous backoff is over.
			now = now.Add(wants[i-1])
		}
		until := b.fail("r.example.com", now, 0)
		if got := until.Sub(now); got != want {
			t.Errorf("failure %d: backoff %v, want %v", i+1, got, want)
		}
		if got, ok := b.blocked("r.example.com", now); !ok || !got.Equal(until) {
			t.Errorf("failure %d: blocked = %v, %v", i+1, got, ok)
		}
	}
	if _, ok := b.blocked("other.example.com", now); ok {
		t.Error("another registry is blocked")
	}
	if _, ok := b.blocked("r.example.com", now.Add(time.Minute)); ok {
		t.Error("still blocked after the backoff")
	}
	if again := b.fail("r.example.com", now.Add(time.Second), 0); again != now.Add(10*time.Second) {
		t.Errorf("a failure during the backoff moved it to %v", again)
	}
	b.succeed("r.example.com")
	if _, ok := b.blocked("r.example.com", now); ok {
		t.Error("blocked after a success")
	}
	if got := b.fail("r.example.com", now, 0).Sub(now); got != time.Second {
		t.Errorf("backoff after a success restarts at %v, want 1s", got)
	}
}

func TestRegistryBackoffIsJittered(t *testing.T) {
	b := newRegistryBackoff(10*time.Second, time.Minute)
	now := time.Now()
	got := b.fail("r.example.com", now, 0.5).Sub(now)
	if got != 9*time.Second {
		t.Errorf("jittered backoff %v, want 9s", got)
	}
}
