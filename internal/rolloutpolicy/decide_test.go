package rolloutpolicy

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

var t0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC) // a Thursday

func line(change string, names ...string) []dcv1.RolloutPolicyWaiter {
	var out []dcv1.RolloutPolicyWaiter
	for _, n := range names {
		out = append(out, dcv1.RolloutPolicyWaiter{Name: n, Version: 2, Change: change, Since: metav1.NewTime(t0)})
	}
	return out
}

func admitted(d Decision) []string {
	var out []string
	for n := range d.Admit {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func size(v string) *intstr.IntOrString { s := intstr.Parse(v); return &s }

func started(wave int32, names ...string) []dcv1.RolloutPolicyStarted {
	var out []dcv1.RolloutPolicyStarted
	for _, n := range names {
		out = append(out, dcv1.RolloutPolicyStarted{Name: n, Version: 2, Wave: wave})
	}
	return out
}

func TestDecide(t *testing.T) {
	waves := []dcv1.RolloutWave{{Size: size("1")}, {Size: size("10%"), Soak: &metav1.Duration{Duration: 10 * time.Minute}}, {}}
	cases := []struct {
		name       string
		spec       dcv1.RolloutPolicySpec
		state      State
		wantAdmit  []string
		wantReason map[string]string
		wantWave   int32
	}{
		{
			name:      "maxConcurrent admits in line order",
			spec:      dcv1.RolloutPolicySpec{MaxConcurrent: size("2")},
			state:     State{Selected: 10, Running: 1, Line: line("", "c", "a", "b")},
			wantAdmit: []string{"c"}, wantReason: map[string]string{"a": dcv1.RolloutQueuedReason, "b": dcv1.RolloutQueuedReason},
		},
		{
			name:      "a percentage of the selected, rounded up",
			spec:      dcv1.RolloutPolicySpec{MaxConcurrent: size("25%")},
			state:     State{Selected: 10, Line: line("", "a", "b", "c", "d")},
			wantAdmit: []string{"a", "b", "c"},
		},
		{
			name:      "first wave of a change takes one",
			spec:      dcv1.RolloutPolicySpec{Waves: waves},
			state:     State{Selected: 50, Line: line("cm", "a", "b", "c")},
			wantAdmit: []string{"a"}, wantReason: map[string]string{"b": dcv1.AwaitingWaveReason},
		},
		{
			name: "a completed wave soaks",
			spec: dcv1.RolloutPolicySpec{Waves: waves},
			state: State{Selected: 50, Line: line("cm", "b", "c"),
				Changes:  []dcv1.RolloutPolicyChange{{Name: "cm", Wave: 2, Started: append(started(1, "a"), started(2, "b0", "b1", "b2", "b3", "b4")...)}},
				Outcomes: map[string]Outcome{"a/2": Done, "b0/2": Done, "b1/2": Done, "b2/2": Done, "b3/2": Done, "b4/2": Done}},
			wantReason: map[string]string{"b": dcv1.AwaitingWaveReason, "c": dcv1.AwaitingWaveReason}, wantWave: 2,
		},
		{
			name: "after the soak the rest go",
			spec: dcv1.RolloutPolicySpec{Waves: waves},
			state: State{Now: t0.Add(11 * time.Minute), Selected: 50, Line: line("cm", "b", "c"),
				Changes: []dcv1.RolloutPolicyChange{{Name: "cm", Wave: 2, WaveCompleted: &metav1.Time{Time: t0},
					Started: append(started(1, "a"), started(2, "b0", "b1", "b2", "b3", "b4")...)}},
				Outcomes: map[string]Outcome{"a/2": Done, "b0/2": Done, "b1/2": Done, "b2/2": Done, "b3/2": Done, "b4/2": Done}},
			wantAdmit: []string{"b", "c"}, wantWave: 3,
		},
		{
			name: "a failure stops the later waves",
			spec: dcv1.RolloutPolicySpec{Waves: waves},
			state: State{Selected: 50, Line: line("cm", "b"),
				Changes:  []dcv1.RolloutPolicyChange{{Name: "cm", Wave: 1, Started: started(1, "a")}},
				Outcomes: map[string]Outcome{"a/2": Failed},
				Failures: []dcv1.RolloutPolicyFailure{{Name: "a", Version: 2, At: metav1.NewTime(t0)}}},
			wantReason: map[string]string{"b": dcv1.AwaitingWaveReason}, wantWave: 1,
		},
		{
			name: "a resume after the failure goes on",
			spec: dcv1.RolloutPolicySpec{Waves: waves},
			state: State{Selected: 50, Line: line("cm", "b"), ResumedAt: t0.Add(time.Second),
				Changes:  []dcv1.RolloutPolicyChange{{Name: "cm", Wave: 1, Started: started(1, "a")}},
				Outcomes: map[string]Outcome{"a/2": Failed},
				Failures: []dcv1.RolloutPolicyFailure{{Name: "a", Version: 2, At: metav1.NewTime(t0)}}},
			wantAdmit: []string{"b"}, wantWave: 2,
		},
		{
			name: "another change is not held by a full wave",
			spec: dcv1.RolloutPolicySpec{Waves: waves},
			state: State{Selected: 50, Line: append(line("cm", "b"), line("img", "x")...),
				Changes: []dcv1.RolloutPolicyChange{{Name: "cm", Wave: 1, Started: started(1, "a")}}},
			wantAdmit: []string{"x"}, wantReason: map[string]string{"b": dcv1.AwaitingWaveReason},
		},
		{
			name: "the breaker opens at maxFailures within the period",
			spec: dcv1.RolloutPolicySpec{CircuitBreaker: &dcv1.RolloutCircuitBreaker{MaxFailures: intstr.FromInt32(2)}},
			state: State{Now: t0.Add(30 * time.Minute), Selected: 10, Line: line("", "a"),
				Failures: []dcv1.RolloutPolicyFailure{{Name: "x", Version: 2, At: metav1.NewTime(t0)}, {Name: "y", Version: 3, At: metav1.NewTime(t0)}}},
			wantReason: map[string]string{"a": dcv1.CircuitOpenReason},
		},
		{
			name: "failures older than the period do not count",
			spec: dcv1.RolloutPolicySpec{CircuitBreaker: &dcv1.RolloutCircuitBreaker{MaxFailures: intstr.FromInt32(2)}},
			state: State{Now: t0.Add(61 * time.Minute), Selected: 10, Line: line("", "a"),
				Failures: []dcv1.RolloutPolicyFailure{{Name: "x", Version: 2, At: metav1.NewTime(t0)}, {Name: "y", Version: 3, At: metav1.NewTime(t0)}}},
			wantAdmit: []string{"a"},
		},
		{
			name:       "a freeze holds",
			spec:       dcv1.RolloutPolicySpec{Freezes: []dcv1.RolloutFreeze{{Name: "year-end", Start: metav1.NewTime(t0.Add(-time.Hour)), End: metav1.NewTime(t0.Add(time.Hour))}}},
			state:      State{Selected: 10, Line: line("", "a")},
			wantReason: map[string]string{"a": dcv1.AwaitingWindowReason},
		},
		{
			name: "an override lifts the freeze but not maxConcurrent",
			spec: dcv1.RolloutPolicySpec{MaxConcurrent: size("1"), OverrideUntil: &metav1.Time{Time: t0.Add(time.Minute)},
				Freezes: []dcv1.RolloutFreeze{{Start: metav1.NewTime(t0.Add(-time.Hour)), End: metav1.NewTime(t0.Add(time.Hour))}}},
			state:     State{Selected: 10, Line: line("", "a", "b")},
			wantAdmit: []string{"a"}, wantReason: map[string]string{"b": dcv1.RolloutQueuedReason},
		},
		{
			name:      "suspend admits everyone",
			spec:      dcv1.RolloutPolicySpec{Suspend: true, MaxConcurrent: size("1")},
			state:     State{Selected: 10, Running: 5, Line: line("", "a", "b")},
			wantAdmit: []string{"a", "b"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.state.Now.IsZero() {
				tc.state.Now = t0
			}
			sched, err := NewSchedule(&tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			d := Decide(&tc.spec, sched, tc.state)
			if got := admitted(d); !slices.Equal(got, tc.wantAdmit) {
				t.Errorf("admitted %v, want %v (holds %v)", got, tc.wantAdmit, d.Holds)
			}
			for name, reason := range tc.wantReason {
				if got := d.Holds[name].Reason; got != reason {
					t.Errorf("%s: reason %q, want %q (%s)", name, got, reason, d.Holds[name].Why)
				}
			}
			if tc.wantWave > 0 && (len(d.Changes) == 0 || d.Changes[0].Wave != tc.wantWave) {
				t.Errorf("changes %+v, want wave %d", d.Changes, tc.wantWave)
			}
		})
	}
}

// TestWavesOfFifty follows one change of 50 DeploymentConfigs through
// waves [1, 10%, rest] with maxConcurrent 5, completing every rollout as
// soon as it starts: the waves start 1, then 5, then 44, at most 5 at once.
func TestWavesOfFifty(t *testing.T) {
	spec := dcv1.RolloutPolicySpec{MaxConcurrent: size("5"), Waves: []dcv1.RolloutWave{{Size: size("1")}, {Size: size("10%")}, {}}}
	sched, _ := NewSchedule(&spec)
	var names []string
	for i := range 50 {
		names = append(names, fmt.Sprintf("dc%02d", i))
	}
	st := State{Now: t0, Selected: 50, Line: line("cm", names...), Outcomes: map[string]Outcome{}}
	var perWave = map[int32]int{}
	for round := 0; len(st.Line) > 0 && round < 100; round++ {
		d := Decide(&spec, sched, st)
		st.Changes = d.Changes
		if len(d.Admit) > 5 {
			t.Fatalf("round %d admitted %d at once", round, len(d.Admit))
		}
		var rest []dcv1.RolloutPolicyWaiter
		for _, w := range st.Line {
			wave, ok := d.Admit[w.Name]
			if !ok {
				rest = append(rest, w)
				continue
			}
			if len(rest) > 0 && rest[len(rest)-1].Change == w.Change {
				t.Fatalf("%s admitted before %s, ahead of it in line", w.Name, rest[len(rest)-1].Name)
			}
			Start(st.Changes, w, wave)
			perWave[wave]++
		}
		st.Line = rest
		// Everything started completes before the next round.
		for _, ch := range st.Changes {
			for _, s := range ch.Started {
				st.Outcomes[Key(s.Name, s.Version)] = Done
			}
		}
	}
	if perWave[1] != 1 || perWave[2] != 5 || perWave[3] != 44 {
		t.Fatalf("rollouts per wave %v, want 1, 5, 44", perWave)
	}
}

func TestSchedule(t *testing.T) {
	spec := dcv1.RolloutPolicySpec{
		TimeZone: "Europe/Berlin",
		Windows:  []dcv1.RolloutWindow{{Days: []dcv1.Weekday{"Monday", "Tuesday", "Wednesday", "Thursday"}, Start: "09:00", End: "17:00"}, {Days: []dcv1.Weekday{"Friday"}, Start: "22:00", End: "02:00"}},
		Freezes:  []dcv1.RolloutFreeze{{Name: "year-end", Start: metav1.NewTime(time.Date(2026, 12, 21, 0, 0, 0, 0, time.UTC)), End: metav1.NewTime(time.Date(2027, 1, 4, 0, 0, 0, 0, time.UTC))}},
	}
	sched, err := NewSchedule(&spec)
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	at := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, berlin) }
	cases := []struct {
		now      time.Time
		open     bool
		nextOpen time.Time
	}{
		{at(2026, 12, 3, 10, 0), true, at(2026, 12, 3, 10, 0)},  // Thursday, in the window
		{at(2026, 12, 3, 18, 0), false, at(2026, 12, 4, 22, 0)}, // Thursday evening: Friday night next
		{at(2026, 12, 5, 1, 30), true, at(2026, 12, 5, 1, 30)},  // Saturday morning, Friday's window
		{at(2026, 12, 5, 3, 0), false, at(2026, 12, 7, 9, 0)},   // Saturday: Monday next
		{at(2026, 12, 22, 10, 0), false, at(2027, 1, 4, 9, 0)},  // frozen: the first window after it
	}
	for _, tc := range cases {
		if got := sched.Open(tc.now); got != tc.open {
			t.Errorf("Open(%s) = %v, want %v", tc.now, got, tc.open)
		}
		next, ok := sched.NextOpen(tc.now)
		if !ok || !next.Equal(tc.nextOpen) {
			t.Errorf("NextOpen(%s) = %s %v, want %s", tc.now, next, ok, tc.nextOpen)
		}
	}
	if _, err := NewSchedule(&dcv1.RolloutPolicySpec{TimeZone: "Mars/Olympus"}); err == nil {
		t.Error("an unknown time zone was accepted")
	}
}

func TestCronWindow(t *testing.T) {
	spec := dcv1.RolloutPolicySpec{TimeZone: "Europe/Berlin",
		Windows: []dcv1.RolloutWindow{{Cron: "0 22 * * 5", Duration: &metav1.Duration{Duration: 4 * time.Hour}}}}
	sched, err := NewSchedule(&spec)
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	at := func(d, h, min int) time.Time { return time.Date(2026, 12, d, h, min, 0, 0, berlin) }
	cases := []struct {
		now      time.Time
		open     bool
		nextOpen time.Time
	}{
		{at(4, 21, 59), false, at(4, 22, 0)}, // Friday, a minute before
		{at(4, 23, 0), true, at(4, 23, 0)},
		{at(5, 1, 59), true, at(5, 1, 59)},  // Saturday morning, still open
		{at(5, 2, 0), false, at(11, 22, 0)}, // closed: next Friday
	}
	for _, tc := range cases {
		if got := sched.Open(tc.now); got != tc.open {
			t.Errorf("Open(%s) = %v, want %v", tc.now, got, tc.open)
		}
		if next, ok := sched.NextOpen(tc.now); !ok || !next.Equal(tc.nextOpen) {
			t.Errorf("NextOpen(%s) = %s %v, want %s", tc.now, next, ok, tc.nextOpen)
		}
	}
}

func TestParseCron(t *testing.T) {
	cases := []struct {
		expr    string
		wantErr bool
	}{
		{"*/15 9-17 * * 1-5", false},
		{"0 0 1,15 * *", false},
		{"0 0 * * 7", false},
		{"0 0 * *", true},
		{"60 0 * * *", true},
		{"0 5-3 * * *", true},
		{"*/0 * * * *", true},
		{"0 0 * 13 *", true},
	}
	for _, tc := range cases {
		_, err := parseCron(tc.expr)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseCron(%q) error %v, want error %v", tc.expr, err, tc.wantErr)
		}
	}
	sunday := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	if c, _ := parseCron("0 0 * * 7"); !c.matches(sunday) {
		t.Error("day-of-week 7 does not match a Sunday")
	}
}
