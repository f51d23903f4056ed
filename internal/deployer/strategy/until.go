package strategy

import (
	"fmt"
	"strconv"
	"strings"
)

// Points of a rollout that --until can name besides a percentage.
const (
	UntilStart = "start"
	UntilPre   = "pre"
	UntilMid   = "mid"
)

// Until is where a rollout stops early (dc-deploy --until): a custom
// strategy runs part of the rollout, does its own work, and runs the rest.
// The zero value runs the whole rollout.
type Until struct {
	text    string
	step    string
	percent int
	isPct   bool
}

// ParseUntil parses start, pre, mid or a percentage from 0% to 100%; the
// empty string means no early stop.
func ParseUntil(s string) (Until, error) {
	switch s {
	case "":
		return Until{}, nil
	case UntilStart, UntilPre, UntilMid:
		return Until{text: s, step: s}, nil
	}
	if num, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.Atoi(num)
		if err == nil && n >= 0 && n <= 100 && num == strconv.Itoa(n) {
			return Until{text: s, percent: n, isPct: true}, nil
		}
	}
	return Until{}, fmt.Errorf("invalid --until %q: want start, pre, mid or a percentage from 0%% to 100%%", s)
}

// String returns the stop point as it was given.
func (u Until) String() string { return u.text }

// IsSet reports whether the rollout stops early at all.
func (u Until) IsSet() bool { return u.text != "" }

// Is reports whether the stop point is the named step (start, pre or mid).
func (u Until) Is(step string) bool { return u.step != "" && u.step == step }

// Percent returns the stop percentage, if the stop point is one.
func (u Until) Percent() (int, bool) { return u.percent, u.isPct }

// percentBetween reports whether the stop point is a percentage in [lo, hi].
func (u Until) percentBetween(lo, hi int) bool {
	return u.isPct && u.percent >= lo && u.percent <= hi
}
