package rolloutpolicy

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cronSpec is a parsed five-field cron expression: one bit per allowed
// value of each field.
type cronSpec struct {
	minute, hour, dom, month, dow uint64
	// domAny and dowAny say the day fields were "*": with both
	// restricted, a day matches either, as cron has it.
	domAny, dowAny bool
}

// maxCronWindow bounds a cron window's duration, and so the minutes a
// look at the schedule walks.
const maxCronWindow = 7 * 24 * time.Hour

// parseCron parses "minute hour day-of-month month day-of-week".
func parseCron(expr string) (*cronSpec, error) {
	fields := strings.Fields(expr)
	if len(fields) != 5 {
		return nil, fmt.Errorf("cron %q: expected 5 fields (minute hour day-of-month month day-of-week), got %d", expr, len(fields))
	}
	limits := [5][2]int{{0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 7}}
	var bits [5]uint64
	for i, f := range fields {
		b, err := parseCronField(f, limits[i][0], limits[i][1])
		if err != nil {
			return nil, fmt.Errorf("cron %q, field %d: %w", expr, i+1, err)
		}
		bits[i] = b
	}
	if bits[4]&(1<<7) != 0 {
		// 7 is Sunday too.
		bits[4] |= 1
	}
	return &cronSpec{minute: bits[0], hour: bits[1], dom: bits[2], month: bits[3], dow: bits[4],
		domAny: fields[2] == "*", dowAny: fields[4] == "*"}, nil
}

// parseCronField parses a comma-separated list of *, N, N-M, each with an
// optional /step.
func parseCronField(f string, lo, hi int) (uint64, error) {
	var bits uint64
	for _, part := range strings.Split(f, ",") {
		rng, stepStr, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepStr)
			if err != nil || n < 1 || n > hi {
				return 0, fmt.Errorf("step %q: expected a number from 1 to %d", stepStr, hi)
			}
			step = n
		}
		from, to := lo, hi
		if rng != "*" {
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if from, err = cronNumber(a, lo, hi); err != nil {
				return 0, err
			}
			to = from
			if isRange {
				if to, err = cronNumber(b, lo, hi); err != nil {
					return 0, err
				}
			}
			if to < from {
				return 0, fmt.Errorf("range %q: the end is before the start", rng)
			}
		}
		for v := from; v <= to; v += step {
			bits |= 1 << v
		}
	}
	return bits, nil
}

func cronNumber(s string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q: expected a number from %d to %d", s, lo, hi)
	}
	return n, nil
}

// matches reports whether the cron expression matches local time t's
// minute.
func (c *cronSpec) matches(t time.Time) bool {
	if c.minute&(1<<t.Minute()) == 0 || c.hour&(1<<t.Hour()) == 0 || c.month&(1<<int(t.Month())) == 0 {
		return false
	}
	dom, dow := c.dom&(1<<t.Day()) != 0, c.dow&(1<<int(t.Weekday())) != 0
	if !c.domAny && !c.dowAny {
		return dom || dow
	}
	return dom && dow
}

// openAt reports whether a cron window of duration d is open at local
// time t: it matched within the last d.
func (c *cronSpec) openAt(t time.Time, d time.Duration) bool {
	m := t.Truncate(time.Minute)
	for back := time.Duration(0); back < d; back += time.Minute {
		if c.matches(m.Add(-back)) {
			return true
		}
	}
	return false
}

// next returns the first minute after local time t that matches, within
// maxCronWindow plus a day.
func (c *cronSpec) next(t time.Time) (time.Time, bool) {
	m := t.Truncate(time.Minute).Add(time.Minute)
	for limit := m.Add(maxCronWindow + 24*time.Hour); m.Before(limit); m = m.Add(time.Minute) {
		if c.matches(m) {
			return m, true
		}
	}
	return time.Time{}, false
}
