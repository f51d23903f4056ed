package controller

import (
	"testing"
	"time"
)

// TestRecentCreates: a create is remembered for the key that made it,
// until it is forgotten or the wait passes, and for a minute at most.
func TestRecentCreates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a2 := createdVersion{"a", 2}
	cases := []struct {
		name string
		then func(c *recentCreates[createdVersion])
		key  createdVersion
		at   time.Time
		want bool
	}{
		{"just created", nil, a2, t0, true},
		{"another version", nil, createdVersion{"a", 3}, t0, false},
		{"a DeploymentConfig made again under the same name", nil, createdVersion{"b", 2}, t0, false},
		{"shown by the cache", func(c *recentCreates[createdVersion]) { c.forget(a2) }, a2, t0, false},
		{"within the wait", nil, a2, t0.Add(recentCreateTTL - time.Second), true},
		{"past the wait", nil, a2, t0.Add(recentCreateTTL), false},
		{"swept after a minute", func(c *recentCreates[createdVersion]) {
			c.record(createdVersion{"c", 1}, t0.Add(time.Minute+time.Second))
		}, a2, t0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c recentCreates[createdVersion]
			c.record(a2, t0)
			if tc.then != nil {
				tc.then(&c)
			}
			if got := c.within(tc.key, tc.at, recentCreateTTL); got != tc.want {
				t.Errorf("within(%v) = %t, want %t", tc.key, got, tc.want)
			}
		})
	}
}
