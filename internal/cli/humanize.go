package cli

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// humanDuration writes a duration as people do in a sentence: "5 seconds",
// "1 minute", "2 hours", "3 days". It rounds down; under a second is
// "0 seconds" and a negative duration (clock skew) counts as zero.
func humanDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return plural(int64(d/time.Second), "second")
	case d < time.Hour:
		return plural(int64(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return plural(int64(d/time.Hour), "hour")
	default:
		return plural(int64(d/(24*time.Hour)), "day")
	}
}

// plural writes "1 pod", "3 pods".
func plural(n int64, unit string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", unit)
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// ago writes how long before now t was: "2 minutes ago".
func (a *app) ago(t time.Time) string {
	return humanDuration(a.Clock.Since(t)) + " ago"
}

// since writes how long t was before now: "2 minutes".
func (a *app) since(t time.Time) string {
	return humanDuration(a.Clock.Since(t))
}

// age writes an age the way kubectl's AGE column does: "5m", "2d".
func (a *app) age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(a.Clock.Since(t))
}
