package rolloutpolicy

import (
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Outcome is where a started rollout of a change stands.
type Outcome int

const (
	// Running: not finished yet (or not seen yet).
	Running Outcome = iota
	// Done: Complete, cancelled, or superseded by a newer version.
	Done
	// Failed: failed, and not cancelled.
	Failed
)

// State is what a decision is made from. Line, Changes and Failures come
// from the policy's status (the controller's memory of them); Running,
// Outcomes and Selected from the cluster.
type State struct {
	Now time.Time
	// Selected is how many DeploymentConfigs the policy selects.
	Selected int
	// Running is how many of their rollouts run.
	Running int
	// Line is who waits, first come first.
	Line []dcv1.RolloutPolicyWaiter
	// Changes are the changes whose waves are under way.
	Changes []dcv1.RolloutPolicyChange
	// Outcomes are those of the changes' started rollouts, by
	// "name/version" (see Key); absent is Running.
	Outcomes map[string]Outcome
	// Failures are the failed rollouts the controller has seen.
	Failures []dcv1.RolloutPolicyFailure
	// ResumedAt is the last resume: failures before it hold nothing.
	ResumedAt time.Time
}

// Key names one rollout: a DeploymentConfig's name and version.
func Key(name string, version int64) string { return fmt.Sprintf("%s/%d", name, version) }

// Hold says why a waiter waits.
type Hold struct {
	// Reason is the Progressing condition's reason.
	Reason string
	// Why completes "Rollout #N waits for RolloutPolicy P: ...", with
	// when it starts where known. It changes only when the hold does, so
	// that a waiter is woken to report it only then.
	Why string
}

// Decision is what may start now, why the others wait, and the changes'
// waves brought up to date (without the starts it allows: the caller adds
// each start it makes, see Start).
type Decision struct {
	// Admit holds the waiters that may start, by name, with their wave (0:
	// no waves).
	Admit map[string]int32
	// Holds say why the others wait, by name.
	Holds map[string]Hold
	// Changes are the state's changes, advanced, without finished ones.
	Changes []dcv1.RolloutPolicyChange
	// Holding is set while the policy holds every rollout.
	Holding *Hold
	// NextWindow is when the windows next open, while they are closed.
	NextWindow *time.Time
	// WakeAt is when the decision may change by the clock alone (a window,
	// a freeze's end, a soak, a failure ageing out, an override's end).
	WakeAt *time.Time
}

// DefaultBreakerPeriod is how long a failure counts when the circuit
// breaker gives no period.
const DefaultBreakerPeriod = time.Hour

// Decide applies a policy to the state. sched is the policy's schedule.
func Decide(spec *dcv1.RolloutPolicySpec, sched *Schedule, st State) Decision {
	d := Decision{Admit: map[string]int32{}, Holds: map[string]Hold{}}
	if spec.Suspend {
		for _, w := range st.Line {
			d.Admit[w.Name] = 0
		}
		d.Changes = st.Changes
		return d
	}
	if spec.OverrideUntil != nil && st.Now.Before(spec.OverrideUntil.Time) {
		// Break-glass: windows, freezes and the breaker hold nothing.
		d.wakeAt(spec.OverrideUntil.Time)
	} else if d.Holding = d.windowHold(sched, st.Now); d.Holding == nil {
		d.Holding = d.breakerHold(spec.CircuitBreaker, st)
	}
	if len(spec.Waves) > 0 {
		d.Changes = d.advance(spec, st)
	}
	limit := math.MaxInt
	if spec.MaxConcurrent != nil {
		limit = scaled(*spec.MaxConcurrent, st.Selected)
	}
	running := st.Running
	// A change's wave admits what it still has room for; new changes start
	// at wave 1, in arrival order.
	room := map[string]int{}
	for _, w := range st.Line {
		if d.Holding != nil {
			d.Holds[w.Name] = *d.Holding
			continue
		}
		var wave int32
		if len(spec.Waves) > 0 && w.Change != "" {
			ch := d.change(w.Change)
			if hold, ok := waveHold(spec, ch); ok {
				d.Holds[w.Name] = hold
				continue
			}
			if _, ok := room[ch.Name]; !ok {
				room[ch.Name] = cumulative(spec, ch.Wave, st.Selected) - len(ch.Started)
			}
			if room[ch.Name] <= 0 {
				d.Holds[w.Name] = Hold{Reason: dcv1.AwaitingWaveReason,
					Why: fmt.Sprintf("wave %d of change %q is full; the next starts once it completes", ch.Wave, ch.Name)}
				continue
			}
			wave = ch.Wave
		}
		if running >= limit {
			d.Holds[w.Name] = Hold{Reason: dcv1.RolloutQueuedReason,
				Why: fmt.Sprintf("its maxConcurrent of %d rollouts run; it starts in line order as they end", limit)}
			continue
		}
		running++
		if wave > 0 {
			room[w.Change]--
		}
		d.Admit[w.Name] = wave
	}
	return d
}

// change returns the named change, a new one at wave 1 if there is none.
func (d *Decision) change(name string) *dcv1.RolloutPolicyChange {
	for i := range d.Changes {
		if d.Changes[i].Name == name {
			return &d.Changes[i]
		}
	}
	d.Changes = append(d.Changes, dcv1.RolloutPolicyChange{Name: name, Wave: 1})
	return &d.Changes[len(d.Changes)-1]
}

// Start records that a waiter the decision admitted started, in its
// change's wave.
func Start(changes []dcv1.RolloutPolicyChange, w dcv1.RolloutPolicyWaiter, wave int32) {
	for i := range changes {
		if changes[i].Name == w.Change {
			changes[i].Started = append(changes[i].Started, dcv1.RolloutPolicyStarted{Name: w.Name, Version: w.Version, Wave: wave})
			return
		}
	}
}

func (d *Decision) wakeAt(t time.Time) {
	if d.WakeAt == nil || t.Before(*d.WakeAt) {
		d.WakeAt = &t
	}
}

// windowHold holds everything outside the windows and in freezes.
func (d *Decision) windowHold(sched *Schedule, now time.Time) *Hold {
	if sched.Open(now) {
		return nil
	}
	hold := &Hold{Reason: dcv1.AwaitingWindowReason}
	next, ok := sched.NextOpen(now)
	if ok {
		d.NextWindow = &next
		d.wakeAt(next)
	}
	f, frozen := sched.Freeze(now)
	switch {
	case frozen && f.Name != "":
		hold.Why = fmt.Sprintf("freeze %q until %s", f.Name, f.End.UTC().Format(time.RFC3339))
	case frozen:
		hold.Why = fmt.Sprintf("a freeze until %s", f.End.UTC().Format(time.RFC3339))
	default:
		hold.Why = "outside its windows"
	}
	if ok {
		hold.Why += fmt.Sprintf("; it starts at %s", next.UTC().Format(time.RFC3339))
	}
	return hold
}

// breakerHold holds everything while MaxFailures failures, newer than the
// period and the last resume, count.
func (d *Decision) breakerHold(cb *dcv1.RolloutCircuitBreaker, st State) *Hold {
	if cb == nil {
		return nil
	}
	period := DefaultBreakerPeriod
	if cb.Period != nil && cb.Period.Duration > 0 {
		period = cb.Period.Duration
	}
	var counted []dcv1.RolloutPolicyFailure
	for _, f := range st.Failures {
		if f.At.Time.After(st.ResumedAt) && st.Now.Sub(f.At.Time) < period {
			counted = append(counted, f)
		}
	}
	for _, f := range counted {
		d.wakeAt(f.At.Add(period))
	}
	threshold := scaled(cb.MaxFailures, st.Selected)
	if len(counted) < threshold {
		return nil
	}
	// It closes when enough of the oldest have aged out.
	until := counted[len(counted)-threshold].At.Add(period)
	return &Hold{Reason: dcv1.CircuitOpenReason,
		Why: fmt.Sprintf("its circuit breaker is open: %d rollouts failed within %s (the latest %s #%d); it closes at %s, or on 'kubectl dc policy resume'",
			len(counted), period, counted[len(counted)-1].Name, counted[len(counted)-1].Version, until.UTC().Format(time.RFC3339))}
}

// advance brings the changes' waves up to date: a failed rollout stops its
// change, a completed wave soaks and then opens the next, and a change
// with nothing running nor waiting is over.
func (d *Decision) advance(spec *dcv1.RolloutPolicySpec, st State) []dcv1.RolloutPolicyChange {
	waiting := map[string]bool{}
	for _, w := range st.Line {
		waiting[w.Change] = true
	}
	acknowledged := func(name string, version int64) bool {
		for _, f := range st.Failures {
			if f.Name == name && f.Version == version {
				return !f.At.Time.After(st.ResumedAt)
			}
		}
		return false
	}
	var out []dcv1.RolloutPolicyChange
	for _, ch := range st.Changes {
		ch = *ch.DeepCopy()
		settled := true
		ch.Stopped = ""
		for _, s := range ch.Started {
			switch o := st.Outcomes[Key(s.Name, s.Version)]; {
			case o == Failed && !acknowledged(s.Name, s.Version):
				ch.Stopped = fmt.Sprintf("%s #%d", s.Name, s.Version)
			case o == Running:
				settled = false
			}
		}
		if settled && !waiting[ch.Name] {
			continue
		}
		for ch.Stopped == "" && settled && len(ch.Started) >= cumulative(spec, ch.Wave, st.Selected) {
			if ch.WaveCompleted == nil {
				// Whole seconds, as the policy's status keeps it.
				ch.WaveCompleted = &metav1.Time{Time: st.Now.Truncate(time.Second)}
			}
			end := ch.WaveCompleted.Add(soak(spec, ch.Wave))
			if st.Now.Before(end) {
				d.wakeAt(end)
				break
			}
			ch.Wave++
			ch.WaveCompleted = nil
		}
		out = append(out, ch)
	}
	return out
}

// waveHold holds a change's waiters while the change is stopped or soaks.
func waveHold(spec *dcv1.RolloutPolicySpec, ch *dcv1.RolloutPolicyChange) (Hold, bool) {
	switch {
	case ch.Stopped != "":
		return Hold{Reason: dcv1.AwaitingWaveReason,
			Why: fmt.Sprintf("the rollout of %s failed in wave %d of change %q, which stops the later waves; 'kubectl dc policy resume' goes on", ch.Stopped, ch.Wave, ch.Name)}, true
	case ch.WaveCompleted != nil:
		end := ch.WaveCompleted.Add(soak(spec, ch.Wave))
		return Hold{Reason: dcv1.AwaitingWaveReason,
			Why: fmt.Sprintf("wave %d of change %q soaks; wave %d starts at %s", ch.Wave, ch.Name, ch.Wave+1, end.UTC().Format(time.RFC3339))}, true
	}
	return Hold{}, false
}

// cumulative is how many rollouts of a change waves 1 to wave hold
// together; beyond the listed waves, or at a wave without size, all.
func cumulative(spec *dcv1.RolloutPolicySpec, wave int32, selected int) int {
	n := 0
	for i := int32(0); i < wave; i++ {
		if int(i) >= len(spec.Waves) || spec.Waves[i].Size == nil {
			return math.MaxInt
		}
		n += scaled(*spec.Waves[i].Size, selected)
	}
	return n
}

// soak is how long a wave soaks once it completed.
func soak(spec *dcv1.RolloutPolicySpec, wave int32) time.Duration {
	i := int(wave) - 1
	if i < 0 || i >= len(spec.Waves) || spec.Waves[i].Soak == nil {
		return 0
	}
	return spec.Waves[i].Soak.Duration
}

// scaled is a count, or a percentage of total rounded up; at least one.
func scaled(v intstr.IntOrString, total int) int {
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, total, true)
	if err != nil || n < 1 {
		return 1
	}
	return n
}
