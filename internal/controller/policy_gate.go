package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/rolloutpolicy"
)

// policyGate admits the rollouts of DeploymentConfigs a RolloutPolicy
// selects. Its memory of each policy (the line, the changes' waves, the
// failures) is seeded from the policy's status and written back to it by
// the policy controller, its only writer, so the order survives a restart.
// A waiting DeploymentConfig is not synced again until the policy
// controller, woken by what the decision depends on (a rollout's end, a
// change of a DeploymentConfig or the policy, the clock), finds that it
// may start or waits for another reason.
type policyGate struct {
	reader client.Reader
	clock  clock.PassiveClock
	// wakeDC receives the DeploymentConfigs to sync; wakePolicy the
	// policies to look at again.
	wakeDC     chan event.GenericEvent
	wakePolicy chan event.GenericEvent

	mu       sync.Mutex
	policies map[types.NamespacedName]*policyState
}

// policyState is the gate's memory of one policy.
type policyState struct {
	line     []dcv1.RolloutPolicyWaiter
	changes  []dcv1.RolloutPolicyChange
	failures []dcv1.RolloutPolicyFailure
	// admitted are started rollouts the cache may not show yet, by name.
	admitted map[string]admission
	// told is what each waiter's status last said (toldOf), by name.
	told map[string]string
	// timer wakes the policy when the clock alone changes the decision.
	timer  clock.Timer
	wakeAt time.Time
	// selected and runningNow are the counts of the last decision.
	selected, runningNow int
}

func newPolicyGate(reader client.Reader, clk clock.PassiveClock, wakeDC chan event.GenericEvent) *policyGate {
	return &policyGate{
		reader: reader, clock: clk, wakeDC: wakeDC,
		wakePolicy: make(chan event.GenericEvent, 1024),
		policies:   map[types.NamespacedName]*policyState{},
	}
}

// policyFor returns the policy that governs a DeploymentConfig: of those in
// its namespace that select it, the first by name; nil when none does.
func (g *policyGate) policyFor(ctx context.Context, dc *dcv1.DeploymentConfig) (*dcv1.RolloutPolicy, error) {
	list := &dcv1.RolloutPolicyList{}
	if err := g.reader.List(ctx, list, client.InNamespace(dc.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		if meta.IsNoMatchError(err) {
			// The RolloutPolicy CRD is not installed: no policy governs.
			return nil, nil
		}
		return nil, fmt.Errorf("list rolloutpolicies of %s: %w", dc.Namespace, err)
	}
	return rolloutpolicy.Governing(list.Items, dc), nil
}

// state returns the gate's memory of a policy, seeded from its status the
// first time. Called with mu held.
func (g *policyGate) state(p *dcv1.RolloutPolicy) *policyState {
	key := client.ObjectKeyFromObject(p)
	if st, ok := g.policies[key]; ok {
		return st
	}
	st := &policyState{
		line:     slices.Clone(p.Status.Line),
		changes:  p.Status.DeepCopy().Changes,
		failures: slices.Clone(p.Status.Failures),
		admitted: map[string]admission{},
		told:     map[string]string{},
	}
	for _, w := range st.line {
		st.told[w.Name] = w.Reason
	}
	g.policies[key] = st
	return st
}

// changeOf names the change that started a DeploymentConfig's latest
// version, from its cause: rollouts of one cause that wait together go in
// one change's waves.
func changeOf(d *dcv1.DeploymentDetails) string {
	if d == nil || len(d.Causes) == 0 {
		return ""
	}
	c := d.Causes[0]
	name := string(c.Type)
	switch {
	case c.ConfigData != nil:
		for _, s := range c.ConfigData.Changed {
			name += " " + s
		}
	case c.ImageTrigger != nil:
		from := c.ImageTrigger.From
		name += " " + from.Kind + "/" + from.Name
		if from.Namespace != "" {
			name += " in " + from.Namespace
		}
	}
	if len(name) > 253 {
		name = name[:253]
	}
	return name
}

// asked marks, in a sync's context, that the sync asked for admission.
type askedKey struct{}

// withAdmissionMark returns a context in which admit records that it was
// asked, and the flag it sets.
func withAdmissionMark(ctx context.Context) (context.Context, *bool) {
	asked := new(bool)
	return context.WithValue(ctx, askedKey{}, asked), asked
}

// admit decides whether a DeploymentConfig its policy governs may create
// the deployment of its latest version now; otherwise it waits in the
// policy's line and the error says why.
func (g *policyGate) admit(ctx context.Context, p *dcv1.RolloutPolicy, dc *dcv1.DeploymentConfig) error {
	g.mu.Lock()
	st := g.state(p)
	joined := !slices.ContainsFunc(st.line, func(w dcv1.RolloutPolicyWaiter) bool { return w.Name == dc.Name })
	if joined {
		st.line = append(st.line, dcv1.RolloutPolicyWaiter{
			Name: dc.Name, Version: dc.Status.LatestVersion, Change: changeOf(dc.Status.Details),
			Since: metav1.NewTime(g.clock.Now().Truncate(time.Second)), Reason: dcv1.RolloutQueuedReason,
		})
	}
	d, err := g.decide(ctx, p, st, dc)
	if err != nil {
		g.mu.Unlock()
		return err
	}
	wave, admitted := d.Admit[dc.Name]
	hold, held := d.Holds[dc.Name]
	if admitted {
		i := slices.IndexFunc(st.line, func(w dcv1.RolloutPolicyWaiter) bool { return w.Name == dc.Name })
		if wave > 0 {
			rolloutpolicy.Start(st.changes, st.line[i], wave)
		}
		st.line = slices.Delete(st.line, i, i+1)
		st.admitted[dc.Name] = admission{rc: deployment.Name(dc.Name, dc.Status.LatestVersion), at: g.clock.Now()}
		delete(st.told, dc.Name)
	} else {
		st.told[dc.Name] = toldOf(hold)
	}
	g.mu.Unlock()
	if joined || admitted {
		// The policy's status shows the line.
		g.notify(ctx, g.wakePolicy, client.ObjectKeyFromObject(p), &dcv1.RolloutPolicy{})
	}
	if admitted {
		return nil
	}
	queued := &QueuedError{Reason: hold.Reason, Why: fmt.Sprintf("Rollout #%d waits for RolloutPolicy %s: %s", dc.Status.LatestVersion, p.Name, hold.Why)}
	if !held {
		// Not in line after all (its deployment exists): look again soon.
		queued.Reason, queued.Why, queued.Retry = "", fmt.Sprintf("Rollout #%d waits for RolloutPolicy %s", dc.Status.LatestVersion, p.Name), time.Second
	}
	return queued
}

// toldOf is what a waiter's status says of a hold: it is woken to say it
// again only when that changes.
func toldOf(h rolloutpolicy.Hold) string { return h.Reason + ": " + h.Why }

// leave takes a DeploymentConfig out of every line: its sync did not ask
// for admission (it is paused, invalid, waits for pods to go, or is gone).
func (g *policyGate) leave(ctx context.Context, key types.NamespacedName) {
	var left []types.NamespacedName
	g.mu.Lock()
	for pk, st := range g.policies {
		if pk.Namespace != key.Namespace {
			continue
		}
		if i := slices.IndexFunc(st.line, func(w dcv1.RolloutPolicyWaiter) bool { return w.Name == key.Name }); i >= 0 {
			st.line = slices.Delete(st.line, i, i+1)
			delete(st.told, key.Name)
			left = append(left, pk)
		}
	}
	g.mu.Unlock()
	for _, pk := range left {
		g.notify(ctx, g.wakePolicy, pk, &dcv1.RolloutPolicy{})
	}
}

// notify sends an object's key to a wake channel; it blocks rather than
// drop it, since a waiter has no other way back.
func (g *policyGate) notify(ctx context.Context, ch chan event.GenericEvent, key types.NamespacedName, obj client.Object) {
	obj.SetNamespace(key.Namespace)
	obj.SetName(key.Name)
	select {
	case ch <- event.GenericEvent{Object: obj}:
	case <-ctx.Done():
	}
}

// decide refreshes a policy's memory from the cache and decides. asking,
// when not nil, is the DeploymentConfig whose sync asks: its copy is newer
// than the cache's (its sync may just have raised latestVersion). Called
// with mu held.
func (g *policyGate) decide(ctx context.Context, p *dcv1.RolloutPolicy, st *policyState, asking *dcv1.DeploymentConfig) (rolloutpolicy.Decision, error) {
	now := g.clock.Now()
	dcs, err := g.governed(ctx, p)
	if err != nil {
		return rolloutpolicy.Decision{}, err
	}
	if asking != nil {
		dcs[asking.Name] = asking
	}
	running, err := g.running(ctx, p.Namespace, dcs, st, now)
	if err != nil {
		return rolloutpolicy.Decision{}, err
	}
	if err := g.recordFailures(ctx, p, dcs, st, now); err != nil {
		return rolloutpolicy.Decision{}, err
	}
	g.refreshLine(ctx, p.Namespace, dcs, st)
	st.selected, st.runningNow = len(dcs), running
	state := rolloutpolicy.State{
		Now: now, Selected: len(dcs), Running: running,
		Line: st.line, Changes: st.changes, Failures: st.failures,
		Outcomes: g.outcomes(ctx, p.Namespace, dcs, st.changes), ResumedAt: resumedAt(p),
	}
	sched, err := rolloutpolicy.NewSchedule(&p.Spec)
	if err != nil {
		d := rolloutpolicy.Decision{Admit: map[string]int32{}, Holds: map[string]rolloutpolicy.Hold{}, Changes: st.changes,
			Holding: &rolloutpolicy.Hold{Reason: dcv1.AwaitingWindowReason, Why: err.Error() + " (fix the policy)"}}
		for _, w := range st.line {
			d.Holds[w.Name] = *d.Holding
		}
		return d, nil
	}
	d := rolloutpolicy.Decide(&p.Spec, sched, state)
	st.changes = d.Changes
	for i := range st.line {
		if h, ok := d.Holds[st.line[i].Name]; ok {
			st.line[i].Reason = h.Reason
		}
	}
	return d, nil
}

// resumedAt is the policy's last resume, or zero.
func resumedAt(p *dcv1.RolloutPolicy) time.Time {
	t, err := time.Parse(time.RFC3339, p.Annotations[dcv1.PolicyResumeAnnotation])
	if err != nil {
		return time.Time{}
	}
	return t
}

// governed returns the DeploymentConfigs the policy governs, by name. Its
// lists, as every list of the gate's, share the cache's objects (no deep
// copy: a decision reads DCs of a whole namespace); nothing here writes
// them.
func (g *policyGate) governed(ctx context.Context, p *dcv1.RolloutPolicy) (map[string]*dcv1.DeploymentConfig, error) {
	sel, err := metav1.LabelSelectorAsSelector(&p.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("spec.selector of rolloutpolicy %s/%s: %w", p.Namespace, p.Name, err)
	}
	list := &dcv1.DeploymentConfigList{}
	if err := g.reader.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list deploymentconfigs of rolloutpolicy %s/%s: %w", p.Namespace, p.Name, err)
	}
	policies := &dcv1.RolloutPolicyList{}
	if err := g.reader.List(ctx, policies, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list rolloutpolicies of %s: %w", p.Namespace, err)
	}
	out := map[string]*dcv1.DeploymentConfig{}
	for i := range list.Items {
		dc := &list.Items[i]
		if gp := rolloutpolicy.Governing(policies.Items, dc); gp != nil && gp.Name == p.Name {
			out[dc.Name] = dc
		}
	}
	return out, nil
}

// running counts the governed DeploymentConfigs' running rollouts, and
// those admitted that the cache does not show yet.
func (g *policyGate) running(ctx context.Context, ns string, dcs map[string]*dcv1.DeploymentConfig, st *policyState, now time.Time) (int, error) {
	list := &corev1.ReplicationControllerList{}
	if err := g.reader.List(ctx, list, client.InNamespace(ns), client.MatchingFields{rcRunning: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		return 0, fmt.Errorf("list running deployments of %s: %w", ns, err)
	}
	shown := map[string]bool{}
	n := 0
	for _, rc := range list.Items {
		if dcs[rc.Labels[dcv1.DeploymentConfigLabel]] != nil {
			n++
			shown[rc.Name] = true
		}
	}
	for name, a := range st.admitted {
		if shown[a.rc] || now.Sub(a.at) > admittedGrace || g.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: a.rc}, &corev1.ReplicationController{}) == nil {
			delete(st.admitted, name)
			continue
		}
		n++
	}
	return n, nil
}

// recordFailures adds the governed DeploymentConfigs whose latest rollout,
// created since the policy, failed to the policy's failures, and forgets
// those no change needs and the circuit breaker no longer counts.
func (g *policyGate) recordFailures(ctx context.Context, p *dcv1.RolloutPolicy, dcs map[string]*dcv1.DeploymentConfig, st *policyState, now time.Time) error {
	list := &corev1.ReplicationControllerList{}
	if err := g.reader.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingFields{rcRunning: "failed"}, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list failed deployments of %s: %w", p.Namespace, err)
	}
	for i := range list.Items {
		rc := &list.Items[i]
		dc := dcs[rc.Labels[dcv1.DeploymentConfigLabel]]
		v := deployment.Version(rc)
		// A rollout created before the policy is not one of its own: its
		// failure, of unknown age, opens no breaker.
		if dc == nil || dc.Status.LatestVersion != v || rc.CreationTimestamp.Before(&p.CreationTimestamp) {
			continue
		}
		if !slices.ContainsFunc(st.failures, func(f dcv1.RolloutPolicyFailure) bool { return f.Name == dc.Name && f.Version == v }) {
			st.failures = append(st.failures, dcv1.RolloutPolicyFailure{Name: dc.Name, Version: v, At: metav1.NewTime(now.Truncate(time.Second))})
		}
	}
	period := rolloutpolicy.DefaultBreakerPeriod
	if cb := p.Spec.CircuitBreaker; cb != nil && cb.Period != nil && cb.Period.Duration > 0 {
		period = cb.Period.Duration
	}
	st.failures = slices.DeleteFunc(st.failures, func(f dcv1.RolloutPolicyFailure) bool {
		return now.Sub(f.At.Time) >= period && !startedIn(st.changes, f.Name, f.Version)
	})
	return nil
}

func startedIn(changes []dcv1.RolloutPolicyChange, name string, version int64) bool {
	for _, ch := range changes {
		for _, s := range ch.Started {
			if s.Name == name && s.Version == version {
				return true
			}
		}
	}
	return false
}

// refreshLine drops the waiters that no longer wait: no longer governed,
// deleted, paused, or whose deployment exists. One triggered again while
// it waited keeps its place, for its newer version.
func (g *policyGate) refreshLine(ctx context.Context, ns string, dcs map[string]*dcv1.DeploymentConfig, st *policyState) {
	st.line = slices.DeleteFunc(st.line, func(w dcv1.RolloutPolicyWaiter) bool {
		dc := dcs[w.Name]
		if dc == nil || dc.DeletionTimestamp != nil || dc.Spec.Paused || dc.Status.LatestVersion == 0 {
			delete(st.told, w.Name)
			return true
		}
		if dc.Status.LatestVersion < w.Version {
			// The cache is behind the sync that put it in line.
			return false
		}
		rc := types.NamespacedName{Namespace: ns, Name: deployment.Name(dc.Name, dc.Status.LatestVersion)}
		if g.reader.Get(ctx, rc, &corev1.ReplicationController{}) == nil {
			delete(st.told, w.Name)
			return true
		}
		return false
	})
	for i := range st.line {
		st.line[i].Version = max(st.line[i].Version, dcs[st.line[i].Name].Status.LatestVersion)
	}
}

// outcomes finds where the changes' started rollouts stand.
func (g *policyGate) outcomes(ctx context.Context, ns string, dcs map[string]*dcv1.DeploymentConfig, changes []dcv1.RolloutPolicyChange) map[string]rolloutpolicy.Outcome {
	out := map[string]rolloutpolicy.Outcome{}
	for _, ch := range changes {
		for _, s := range ch.Started {
			out[rolloutpolicy.Key(s.Name, s.Version)] = g.outcome(ctx, ns, dcs[s.Name], s)
		}
	}
	return out
}

func (g *policyGate) outcome(ctx context.Context, ns string, dc *dcv1.DeploymentConfig, s dcv1.RolloutPolicyStarted) rolloutpolicy.Outcome {
	if dc == nil || dc.Status.LatestVersion > s.Version {
		return rolloutpolicy.Done
	}
	rc := &corev1.ReplicationController{}
	if err := g.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: deployment.Name(s.Name, s.Version)}, rc); err != nil {
		// Not cached yet, or settled (then not the latest, handled above).
		return rolloutpolicy.Running
	}
	switch p := deployment.Phase(rc); {
	case p == dcv1.DeploymentPhaseComplete, p == dcv1.DeploymentPhaseFailed && deployment.IsCancelled(rc):
		return rolloutpolicy.Done
	case p == dcv1.DeploymentPhaseFailed:
		return rolloutpolicy.Failed
	}
	return rolloutpolicy.Running
}

// forget drops the memory of a deleted policy and returns its waiters.
func (g *policyGate) forget(key types.NamespacedName) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	st, ok := g.policies[key]
	if !ok {
		return nil
	}
	if st.timer != nil {
		st.timer.Stop()
	}
	delete(g.policies, key)
	var names []string
	for _, w := range st.line {
		names = append(names, w.Name)
	}
	return names
}

// schedule arranges for the policy to be looked at again at t, by the
// gate's clock, when the clock can; else the returned duration is for the
// caller's requeue.
func (g *policyGate) schedule(ctx context.Context, key types.NamespacedName, st *policyState, t *time.Time) time.Duration {
	if t == nil {
		return 0
	}
	d := t.Sub(g.clock.Now())
	if d <= 0 {
		d = time.Millisecond
	}
	delayed, ok := g.clock.(clock.WithDelayedExecution)
	if !ok {
		return d
	}
	if st.timer != nil && st.wakeAt.Equal(*t) {
		return 0
	}
	if st.timer != nil {
		st.timer.Stop()
	}
	st.wakeAt = *t
	st.timer = delayed.AfterFunc(d, func() {
		g.notify(ctx, g.wakePolicy, key, &dcv1.RolloutPolicy{})
	})
	return 0
}

// maxStatusLine and maxStatusFailures are the maxItems of the policy
// status's line and failures.
const maxStatusLine, maxStatusFailures = 5000, 5000

// statusOf is the policy status a decision gives. Its times are whole
// seconds, as the API server keeps them, so that an unchanged status
// compares equal to the one read back.
func statusOf(p *dcv1.RolloutPolicy, st *policyState, d rolloutpolicy.Decision, selected, running int, now time.Time) *dcv1.RolloutPolicyStatus {
	s := p.Status.DeepCopy()
	s.ObservedGeneration = p.Generation
	s.Selected, s.Running, s.Waiting = int32(selected), int32(running), int32(len(st.line))
	// Within the status's bounds (its maxItems): beyond them the line is
	// kept in memory only, and a restart puts those waiters at its end.
	s.Line = slices.Clone(st.line[:min(len(st.line), maxStatusLine)])
	s.Changes = d.Changes
	s.Failures = slices.Clone(st.failures[max(0, len(st.failures)-maxStatusFailures):])
	s.NextWindow = nil
	if d.NextWindow != nil {
		s.NextWindow = &metav1.Time{Time: *d.NextWindow}
	}
	s.ResumedAt = nil
	if t := resumedAt(p); !t.IsZero() {
		s.ResumedAt = &metav1.Time{Time: t}
	}
	holding := metav1.Condition{Type: dcv1.PolicyHolding, Status: metav1.ConditionFalse, Reason: "Admitting",
		Message: "rollouts start as maxConcurrent and the waves allow", ObservedGeneration: p.Generation}
	if d.Holding != nil {
		holding.Status, holding.Reason, holding.Message = metav1.ConditionTrue, d.Holding.Reason, d.Holding.Why
	}
	invalid := metav1.Condition{Type: dcv1.PolicyInvalid, Status: metav1.ConditionFalse, Reason: "Valid", Message: "the spec can be followed", ObservedGeneration: p.Generation}
	if _, err := rolloutpolicy.NewSchedule(&p.Spec); err != nil {
		invalid.Status, invalid.Reason, invalid.Message = metav1.ConditionTrue, dcv1.InvalidTimeZoneReason, err.Error()
	}
	for _, c := range []metav1.Condition{holding, invalid} {
		c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
		meta.SetStatusCondition(&s.Conditions, c)
	}
	return s
}
