package dashboard

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/rolloutpolicy"
)

// heldView is, on a DeploymentConfig's page, the RolloutPolicy that governs
// it and, while its rollout waits in the policy's line, where and why.
type heldView struct {
	Namespace, Policy string
	Suspended         bool
	// Waiting is set while the DC's rollout waits in the line.
	Waiting *waiterView
	// Of is the length of the line.
	Of int
}

// waiterView is one rollout in a policy's line.
type waiterView struct {
	Position int
	Name     string
	Version  int64
	Reason   string
	Since    string
	Change   string
	// Why is the waiting DC's Progressing message: what it waits for and,
	// where known, when it starts.
	Why string
}

// policyRow is one RolloutPolicy on the list page.
type policyRow struct {
	Namespace, Name            string
	Max                        string
	Selected, Running, Waiting int32
	Holding                    string
}

// policyView is a RolloutPolicy's page: its rules, its changes and their
// waves, the circuit breaker, the next window and the line.
type policyView struct {
	Namespace, Name string
	Selector        string
	Max             string
	Selected        int32
	Running         int32
	Waiting         int32
	Suspended       bool
	// OverrideUntil is set while spec.overrideUntil lifts the windows,
	// freezes and breaker.
	OverrideUntil string
	// Holding and Invalid are the policy's conditions while True.
	Holding, Invalid *conditionView
	NextWindow       string
	TimeZone         string
	Windows          []string
	Freezes          []string
	Waves            []string
	Breaker          *breakerView
	Changes          []changeView
	Line             []waiterView
	Missing          []string
}

// breakerView is the circuit breaker: its rule, whether it is open, and
// the failures it counts.
type breakerView struct {
	Rule     string
	Open     bool
	Failures []string
	Resumed  string
}

// changeView is one change under way and where each of its waves stands.
type changeView struct {
	Name    string
	Wave    int32
	Stopped string
	Waves   []waveView
}

// waveView is one wave of a change: its size, its state (done, running,
// soaking, stopped, to come) and the rollouts it started.
type waveView struct {
	Index   int32
	Size    string
	State   string
	Until   string
	Started []string
}

// dashTime is how the pages write a time: absolute, since a page is
// rendered again only when something changes.
func dashTime(t time.Time) string { return t.UTC().Format(time.DateTime) }

// governingPolicy is the RolloutPolicy that governs dc, or nil.
func governingPolicy(s *store, dc *dcv1.DeploymentConfig) *dcv1.RolloutPolicy {
	return rolloutpolicy.Governing(s.Policies(dc.Namespace), dc)
}

// buildHeld says which policy governs dc and, while its rollout waits,
// where in line and why; nil when no policy governs it.
func buildHeld(s *store, dc *dcv1.DeploymentConfig) *heldView {
	p := governingPolicy(s, dc)
	if p == nil {
		return nil
	}
	h := &heldView{Namespace: p.Namespace, Policy: p.Name, Suspended: p.Spec.Suspend, Of: len(p.Status.Line)}
	for i, w := range p.Status.Line {
		if w.Name == dc.Name {
			v := waiter(i, w, dc)
			h.Waiting = &v
		}
	}
	return h
}

// waiter describes the i-th rollout in line; dc, when known, gives why.
func waiter(i int, w dcv1.RolloutPolicyWaiter, dc *dcv1.DeploymentConfig) waiterView {
	v := waiterView{Position: i + 1, Name: w.Name, Version: w.Version, Reason: w.Reason, Since: dashTime(w.Since.Time), Change: w.Change}
	if dc == nil {
		return v
	}
	for _, c := range dc.Status.Conditions {
		if c.Type == dcv1.DeploymentProgressing && c.Status == corev1.ConditionUnknown {
			v.Why = c.Message
		}
	}
	return v
}

// policyRows lists the RolloutPolicies of namespace ("" for all), sorted by
// namespace and name.
func policyRows(s *store, namespace string) []policyRow {
	var rows []policyRow
	for _, p := range s.Policies(namespace) {
		rows = append(rows, policyRow{Namespace: p.Namespace, Name: p.Name, Max: maxConcurrent(&p),
			Selected: p.Status.Selected, Running: p.Status.Running, Waiting: p.Status.Waiting, Holding: rolloutpolicy.Holding(&p)})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Namespace != rows[j].Namespace {
			return rows[i].Namespace < rows[j].Namespace
		}
		return rows[i].Name < rows[j].Name
	})
	return rows
}

// waitingReasons maps the DeploymentConfigs of namespace ("" for all) that
// wait in a policy's line, as "namespace/name", to why they wait.
func waitingReasons(s *store, namespace string) map[string]string {
	out := map[string]string{}
	for _, p := range s.Policies(namespace) {
		for _, w := range p.Status.Line {
			out[p.Namespace+"/"+w.Name] = w.Reason
		}
	}
	return out
}

// maxConcurrent is spec.maxConcurrent, or "no limit".
func maxConcurrent(p *dcv1.RolloutPolicy) string {
	if p.Spec.MaxConcurrent == nil {
		return "no limit"
	}
	return p.Spec.MaxConcurrent.String()
}

// trueCondition is the policy's condition of that type while it is True.
func trueCondition(p *dcv1.RolloutPolicy, typ string) *conditionView {
	c := meta.FindStatusCondition(p.Status.Conditions, typ)
	if c == nil || c.Status != metav1.ConditionTrue {
		return nil
	}
	return &conditionView{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
}

// buildPolicyView gathers a RolloutPolicy's page; nil when the store does
// not have it.
func buildPolicyView(s *store, namespace, name string, now time.Time) *policyView {
	p := s.Policy(namespace, name)
	if p == nil {
		return nil
	}
	st := &p.Status
	v := &policyView{
		Namespace: namespace, Name: name, Selector: metav1.FormatLabelSelector(&p.Spec.Selector), Max: maxConcurrent(p),
		Selected: st.Selected, Running: st.Running, Waiting: st.Waiting, Suspended: p.Spec.Suspend,
		Holding: trueCondition(p, dcv1.PolicyHolding), Invalid: trueCondition(p, dcv1.PolicyInvalid),
		TimeZone: p.Spec.TimeZone, Windows: windows(p.Spec.Windows), Missing: s.missing,
	}
	if v.Selector == "" {
		v.Selector = "every DeploymentConfig of the namespace"
	}
	if v.TimeZone == "" {
		v.TimeZone = "UTC"
	}
	if u := p.Spec.OverrideUntil; u != nil && now.Before(u.Time) {
		v.OverrideUntil = dashTime(u.Time)
	}
	if st.NextWindow != nil {
		v.NextWindow = dashTime(st.NextWindow.Time)
	}
	for _, f := range p.Spec.Freezes {
		v.Freezes = append(v.Freezes, fmt.Sprintf("%s: %s to %s", or(f.Name, "freeze"), dashTime(f.Start.Time), dashTime(f.End.Time)))
	}
	for i := range p.Spec.Waves {
		v.Waves = append(v.Waves, waveRule(&p.Spec, int32(i+1), int(st.Selected)))
	}
	v.Breaker = breaker(p)
	for _, ch := range st.Changes {
		v.Changes = append(v.Changes, buildChange(&p.Spec, ch, int(st.Selected)))
	}
	for i, w := range st.Line {
		v.Line = append(v.Line, waiter(i, w, s.DeploymentConfig(namespace, w.Name)))
	}
	return v
}

// waveRule says what wave (from 1) holds: its size, as written and as a
// count of the selected DCs, and its soak.
func waveRule(spec *dcv1.RolloutPolicySpec, wave int32, selected int) string {
	w := spec.Waves[wave-1]
	out := "the rest"
	if n := rolloutpolicy.WaveSize(spec, wave, selected); n > 0 {
		out = fmt.Sprintf("%s (%d rollout(s))", w.Size.String(), n)
	}
	if w.Soak != nil {
		out += ", soak " + w.Soak.Duration.String()
	}
	return out
}

// windows describes the policy's windows, one each.
func windows(ws []dcv1.RolloutWindow) []string {
	var out []string
	for _, w := range ws {
		if w.Cron != "" {
			d := time.Duration(0)
			if w.Duration != nil {
				d = w.Duration.Duration
			}
			out = append(out, fmt.Sprintf("cron %q for %s", w.Cron, d))
			continue
		}
		days := "every day"
		if len(w.Days) > 0 {
			var ds []string
			for _, day := range w.Days {
				ds = append(ds, string(day))
			}
			days = strings.Join(ds, ", ")
		}
		out = append(out, fmt.Sprintf("%s, %s to %s", days, w.Start, w.End))
	}
	return out
}

// breaker describes the circuit breaker, nil when the policy has none.
func breaker(p *dcv1.RolloutPolicy) *breakerView {
	cb := p.Spec.CircuitBreaker
	if cb == nil {
		return nil
	}
	period := rolloutpolicy.DefaultBreakerPeriod
	if cb.Period != nil {
		period = cb.Period.Duration
	}
	b := &breakerView{Rule: fmt.Sprintf("opens at %s failed rollout(s) within %s", cb.MaxFailures.String(), period)}
	if h := trueCondition(p, dcv1.PolicyHolding); h != nil && h.Reason == dcv1.CircuitOpenReason {
		b.Open = true
	}
	for _, f := range p.Status.Failures {
		b.Failures = append(b.Failures, fmt.Sprintf("%s #%d at %s", f.Name, f.Version, dashTime(f.At.Time)))
	}
	if p.Status.ResumedAt != nil {
		b.Resumed = dashTime(p.Status.ResumedAt.Time)
	}
	return b
}

// buildChange says where each wave of a change stands. Its waves are the
// policy's, and one of the rest beyond them when the last has a size.
func buildChange(spec *dcv1.RolloutPolicySpec, ch dcv1.RolloutPolicyChange, selected int) changeView {
	c := changeView{Name: ch.Name, Wave: ch.Wave, Stopped: ch.Stopped}
	waves := int32(len(spec.Waves))
	if waves == 0 || spec.Waves[waves-1].Size != nil {
		waves++
	}
	for i := int32(1); i <= max(waves, ch.Wave); i++ {
		w := waveView{Index: i, Size: "the rest", State: "to come"}
		if n := rolloutpolicy.WaveSize(spec, i, selected); n > 0 {
			w.Size = fmt.Sprintf("%d", n)
		}
		switch {
		case i < ch.Wave:
			w.State = "done"
		case i == ch.Wave && ch.Stopped != "":
			w.State = "stopped"
		case i == ch.Wave && ch.WaveCompleted != nil:
			w.State = "soaking"
			if int(i) <= len(spec.Waves) && spec.Waves[i-1].Soak != nil {
				w.Until = dashTime(ch.WaveCompleted.Add(spec.Waves[i-1].Soak.Duration))
			}
		case i == ch.Wave:
			w.State = "running"
		}
		for _, s := range ch.Started {
			if s.Wave == i {
				w.Started = append(w.Started, fmt.Sprintf("%s #%d", s.Name, s.Version))
			}
		}
		c.Waves = append(c.Waves, w)
	}
	return c
}

// or is s, or otherwise when s is empty.
func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
