// Package rolloutpolicy decides, for one RolloutPolicy, which waiting
// rollouts may start: its windows and freezes, its circuit breaker, the
// waves of each change and its maxConcurrent, first come first served. It
// is pure: dc-controller gathers the state and applies the decision.
package rolloutpolicy

import (
	"fmt"
	"strconv"
	"time"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Schedule says when a policy lets rollouts start: inside one of its
// weekly windows (always, when it has none) and outside every freeze.
type Schedule struct {
	loc     *time.Location
	windows []window
	freezes []dcv1.RolloutFreeze
}

// window is a weekly window in minutes since midnight (end <= start spans
// midnight), or a cron window open for dur from each match.
type window struct {
	days       map[time.Weekday]bool
	start, end int
	cron       *cronSpec
	dur        time.Duration
}

// maxWindowSearch bounds how far ahead NextOpen looks: a week of windows
// plus the longest freezes anyone plans.
const maxWindowSearch = 2 * 366 * 24 * time.Hour

// NewSchedule parses a policy's windows, freezes and time zone. Its errors
// are an unknown time zone and a cron expression the schema's pattern let
// through but that does not parse.
func NewSchedule(spec *dcv1.RolloutPolicySpec) (*Schedule, error) {
	loc := time.UTC
	if spec.TimeZone != "" {
		l, err := time.LoadLocation(spec.TimeZone)
		if err != nil {
			return nil, fmt.Errorf("spec.timeZone: %q is not a known IANA time zone", spec.TimeZone)
		}
		loc = l
	}
	s := &Schedule{loc: loc, freezes: spec.Freezes}
	for _, w := range spec.Windows {
		if w.Cron != "" {
			c, err := parseCron(w.Cron)
			if err != nil {
				return nil, fmt.Errorf("spec.windows: %w", err)
			}
			dur := maxCronWindow
			if w.Duration != nil && w.Duration.Duration > 0 && w.Duration.Duration < maxCronWindow {
				dur = w.Duration.Duration
			}
			s.windows = append(s.windows, window{cron: c, dur: dur})
			continue
		}
		start, err1 := minuteOfDay(w.Start)
		end, err2 := minuteOfDay(w.End)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("spec.windows: start and end must be HH:MM, got %q and %q", w.Start, w.End)
		}
		days := map[time.Weekday]bool{}
		for _, d := range w.Days {
			days[weekday(d)] = true
		}
		s.windows = append(s.windows, window{days: days, start: start, end: end})
	}
	return s, nil
}

func minuteOfDay(hhmm string) (int, error) {
	if len(hhmm) != 5 || hhmm[2] != ':' {
		return 0, fmt.Errorf("not HH:MM")
	}
	h, err := strconv.Atoi(hhmm[:2])
	if err != nil {
		return 0, err
	}
	m, err := strconv.Atoi(hhmm[3:])
	if err != nil {
		return 0, err
	}
	return h*60 + m, nil
}

func weekday(d dcv1.Weekday) time.Weekday {
	for i := time.Sunday; i <= time.Saturday; i++ {
		if i.String() == string(d) {
			return i
		}
	}
	return -1
}

// Freeze returns the freeze t falls in, if any.
func (s *Schedule) Freeze(t time.Time) (dcv1.RolloutFreeze, bool) {
	for _, f := range s.freezes {
		if !t.Before(f.Start.Time) && t.Before(f.End.Time) {
			return f, true
		}
	}
	return dcv1.RolloutFreeze{}, false
}

// inWindow reports whether t falls in a window (always, with none).
func (s *Schedule) inWindow(t time.Time) bool {
	if len(s.windows) == 0 {
		return true
	}
	local := t.In(s.loc)
	minute := local.Hour()*60 + local.Minute()
	yesterday := local.AddDate(0, 0, -1).Weekday()
	for _, w := range s.windows {
		if w.cron != nil {
			if w.cron.openAt(local, w.dur) {
				return true
			}
			continue
		}
		on := func(d time.Weekday) bool { return len(w.days) == 0 || w.days[d] }
		if w.start < w.end {
			if on(local.Weekday()) && minute >= w.start && minute < w.end {
				return true
			}
			continue
		}
		// Spans midnight: the evening of its day or the morning after.
		if on(local.Weekday()) && minute >= w.start || on(yesterday) && minute < w.end {
			return true
		}
	}
	return false
}

// Open reports whether rollouts may start at t.
func (s *Schedule) Open(t time.Time) bool {
	_, frozen := s.Freeze(t)
	return !frozen && s.inWindow(t)
}

// NextOpen returns the first time from t on at which rollouts may start,
// or false when none comes within the search bound.
func (s *Schedule) NextOpen(t time.Time) (time.Time, bool) {
	limit := t.Add(maxWindowSearch)
	for c := t; !c.After(limit); {
		if s.Open(c) {
			return c, true
		}
		next, ok := s.nextBoundary(c)
		if !ok {
			return time.Time{}, false
		}
		c = next
	}
	return time.Time{}, false
}

// nextBoundary returns the first time after t at which Open may change: a
// window's start or a freeze's end.
func (s *Schedule) nextBoundary(t time.Time) (time.Time, bool) {
	var best time.Time
	consider := func(c time.Time) {
		if c.After(t) && (best.IsZero() || c.Before(best)) {
			best = c
		}
	}
	for _, f := range s.freezes {
		consider(f.End.Time)
	}
	local := t.In(s.loc)
	for _, w := range s.windows {
		if w.cron != nil {
			if next, ok := w.cron.next(local); ok {
				consider(next)
			}
		}
	}
	for day := 0; day <= 7 && len(s.windows) > 0; day++ {
		d := time.Date(local.Year(), local.Month(), local.Day()+day, 0, 0, 0, 0, s.loc)
		for _, w := range s.windows {
			if w.cron == nil && (len(w.days) == 0 || w.days[d.Weekday()]) {
				consider(time.Date(d.Year(), d.Month(), d.Day(), w.start/60, w.start%60, 0, 0, s.loc))
			}
		}
	}
	return best, !best.IsZero()
}
