package controller

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/source"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// RolloutLimits cap how many rollouts dc-controller runs at once, so that a
// change many DeploymentConfigs follow (one ConfigMap, one image) does not
// start all their rollouts together (docs/config-snapshots.md). A rollout
// runs from the creation of its deployment until that deployment is
// Complete or Failed. Rollouts beyond a cap wait, first come first served.
type RolloutLimits struct {
	// Max is how many rollouts may run at once in the cluster; 0 is no cap.
	Max int
	// MaxPerNamespace is how many may run at once in one namespace; 0 is
	// no cap.
	MaxPerNamespace int
	// HaltOnFailure stops starting rollouts while the latest rollout of
	// some DeploymentConfig has failed (not been cancelled): until it rolls
	// out again, is cancelled or deleted. That DeploymentConfig itself may
	// still start one, or it could never be fixed.
	HaltOnFailure bool
}

// enabled reports whether any limit is set.
func (l RolloutLimits) enabled() bool {
	return l.Max > 0 || l.MaxPerNamespace > 0 || l.HaltOnFailure
}

// rcRunning indexes the cached RCs whose rollout runs (phase New, Pending
// or Running) under "true", so the gate counts them without a scan.
const rcRunning = "deployconfig.rc.running"

func indexRCRunning(o client.Object) []string {
	rc, ok := o.(*corev1.ReplicationController)
	if !ok || rc.Labels[dcv1.DeploymentConfigLabel] == "" {
		return nil
	}
	switch p := deployment.Phase(rc); {
	case !deployment.IsTerminal(p):
		return []string{"true"}
	case p == dcv1.DeploymentPhaseFailed && !deployment.IsCancelled(rc):
		return []string{"failed"}
	}
	return nil
}

// QueuedError says a rollout waits for the concurrency limits or for its
// RolloutPolicy.
type QueuedError struct {
	// Reason is the Progressing condition's reason; empty is RolloutQueued.
	Reason string
	// Why says which limit holds it and where it stands.
	Why string
	// Retry is when the sync looks again by itself; zero when what it
	// waits for wakes it.
	Retry time.Duration
}

// Error is the message of the Progressing condition.
func (e *QueuedError) Error() string { return e.Why }

// ConditionReason is the Progressing condition's reason.
func (e *QueuedError) ConditionReason() string {
	if e.Reason == "" {
		return dcv1.RolloutQueuedReason
	}
	return e.Reason
}

// rolloutGate admits rollouts under RolloutLimits. It keeps, in memory, the
// order in which DeploymentConfigs started waiting (a restart rebuilds it
// in the order of their next syncs) and the rollouts it admitted that the
// cache has not shown yet; what runs and what failed it reads from the
// cache.
type rolloutGate struct {
	limits RolloutLimits
	// policies admits the DeploymentConfigs a RolloutPolicy governs; the
	// limits, the cluster's default policy, govern the others.
	policies *policyGate
	reader   client.Reader
	clock    clock.PassiveClock
	// wake receives the DeploymentConfigs that a freed slot admits.
	wake chan event.GenericEvent

	mu sync.Mutex
	// next numbers arrivals; waiting holds each waiter's number.
	next    uint64
	waiting map[types.NamespacedName]uint64
	// admitted are rollouts let through whose RC the cache may not show
	// yet, by DeploymentConfig, with the RC's name and when.
	admitted map[types.NamespacedName]admission
}

type admission struct {
	rc string
	at time.Time
}

// admittedGrace is how long an admitted rollout counts before its RC shows
// in the cache; after that, a create that never happened frees its slot.
const admittedGrace = time.Minute

func newRolloutGate(limits RolloutLimits, reader client.Reader, clk clock.PassiveClock) *rolloutGate {
	wake := make(chan event.GenericEvent, 1024)
	return &rolloutGate{
		limits: limits, reader: reader, clock: clk, wake: wake,
		policies: newPolicyGate(reader, clk, wake),
		waiting:  map[types.NamespacedName]uint64{},
		admitted: map[types.NamespacedName]admission{},
	}
}

// rolloutState is what the gate decides from: the rollouts running, by
// namespace, and the DeploymentConfigs whose latest rollout failed.
type rolloutState struct {
	running map[string]int
	total   int
	failed  []types.NamespacedName
}

// waiter is a DeploymentConfig waiting to start a rollout.
type waiter struct {
	key types.NamespacedName
	seq uint64
}

// decide returns which waiters may start now, in arrival order: each is
// admitted when its namespace and the cluster have a free slot once those
// before it are, and nothing has failed (but for its own failure). Pure:
// the unit tests drive it.
func decide(limits RolloutLimits, state rolloutState, waiters []waiter) map[types.NamespacedName]bool {
	sort.Slice(waiters, func(i, j int) bool {
		if waiters[i].seq != waiters[j].seq {
			return waiters[i].seq < waiters[j].seq
		}
		return waiters[i].key.String() < waiters[j].key.String()
	})
	running := map[string]int{}
	for ns, n := range state.running {
		running[ns] = n
	}
	total := state.total
	out := map[types.NamespacedName]bool{}
	for _, w := range waiters {
		if limits.HaltOnFailure && failedElsewhere(state.failed, w.key) {
			continue
		}
		if limits.Max > 0 && total >= limits.Max {
			continue
		}
		if limits.MaxPerNamespace > 0 && running[w.key.Namespace] >= limits.MaxPerNamespace {
			continue
		}
		out[w.key] = true
		total++
		running[w.key.Namespace]++
	}
	return out
}

func failedElsewhere(failed []types.NamespacedName, key types.NamespacedName) bool {
	for _, f := range failed {
		if f != key {
			return true
		}
	}
	return false
}

// leave takes a DeploymentConfig out of line: its sync no longer asks for
// admission (admissionSync).
func (g *rolloutGate) leave(ctx context.Context, key types.NamespacedName) {
	g.mu.Lock()
	delete(g.waiting, key)
	g.mu.Unlock()
	g.policies.leave(ctx, key)
}

// admit decides whether the DeploymentConfig may create the deployment of
// its latest version now. When it may not, it waits in line and the error
// says why; a freed slot wakes it (wakeWaiters, or the policy controller
// for a DeploymentConfig a RolloutPolicy governs).
func (g *rolloutGate) admit(ctx context.Context, dc *dcv1.DeploymentConfig) error {
	if g == nil {
		return nil
	}
	if asked, ok := ctx.Value(askedKey{}).(*bool); ok {
		*asked = true
	}
	p, err := g.policies.policyFor(ctx, dc)
	if err != nil {
		return err
	}
	if p != nil {
		return g.policies.admit(ctx, p, dc)
	}
	if !g.limits.enabled() {
		return nil
	}
	key := types.NamespacedName{Namespace: dc.Namespace, Name: dc.Name}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.waiting[key]; !ok {
		g.next++
		g.waiting[key] = g.next
	}
	state, waiters, err := g.snapshot(ctx)
	if err != nil {
		return err
	}
	if decide(g.limits, state, waiters)[key] {
		delete(g.waiting, key)
		g.admitted[key] = admission{rc: deployment.Name(dc.Name, dc.Status.LatestVersion), at: g.clock.Now()}
		return nil
	}
	return &QueuedError{Why: g.why(dc, state, waiters), Retry: queuedRetry}
}

// why says which limit holds a rollout, and its place in line.
func (g *rolloutGate) why(dc *dcv1.DeploymentConfig, state rolloutState, waiters []waiter) string {
	key := types.NamespacedName{Namespace: dc.Namespace, Name: dc.Name}
	ahead := 0
	for _, w := range waiters {
		if w.seq < g.waiting[key] {
			ahead++
		}
	}
	switch {
	case g.limits.HaltOnFailure && failedElsewhere(state.failed, key):
		f := state.failed[0]
		if f == key {
			f = state.failed[1]
		}
		return fmt.Sprintf("Rollout #%d is queued: rollouts are halted since the latest rollout of %s failed (--halt-rollouts-on-failure); they go on once it rolls out again, is cancelled or deleted",
			dc.Status.LatestVersion, f)
	case g.limits.MaxPerNamespace > 0 && state.running[dc.Namespace] >= g.limits.MaxPerNamespace:
		return fmt.Sprintf("Rollout #%d is queued: %d rollouts run in namespace %s, the most allowed at once (--max-rollouts-per-namespace); %d waiting before it",
			dc.Status.LatestVersion, state.running[dc.Namespace], dc.Namespace, ahead)
	default:
		return fmt.Sprintf("Rollout #%d is queued: %d rollouts run, the most allowed at once (--max-rollouts); %d waiting before it",
			dc.Status.LatestVersion, state.total, ahead)
	}
}

// snapshot reads what runs and what failed from the cache, counts the
// admitted rollouts the cache does not show yet, and drops waiters that no
// longer wait. Called with mu held.
func (g *rolloutGate) snapshot(ctx context.Context) (rolloutState, []waiter, error) {
	state := rolloutState{running: map[string]int{}}
	running := &corev1.ReplicationControllerList{}
	if err := g.reader.List(ctx, running, client.MatchingFields{rcRunning: "true"}); err != nil {
		return state, nil, fmt.Errorf("list running deployments: %w", err)
	}
	shown := map[types.NamespacedName]bool{}
	for _, rc := range running.Items {
		state.running[rc.Namespace]++
		state.total++
		shown[types.NamespacedName{Namespace: rc.Namespace, Name: rc.Name}] = true
	}
	now := g.clock.Now()
	for key, a := range g.admitted {
		rcKey := types.NamespacedName{Namespace: key.Namespace, Name: a.rc}
		if shown[rcKey] || now.Sub(a.at) > admittedGrace || g.exists(ctx, rcKey) {
			delete(g.admitted, key)
			continue
		}
		state.running[key.Namespace]++
		state.total++
	}
	if g.limits.HaltOnFailure {
		failed, err := g.failedLatest(ctx)
		if err != nil {
			return state, nil, err
		}
		state.failed = failed
	}
	waiters := make([]waiter, 0, len(g.waiting))
	for key, seq := range g.waiting {
		if !g.stillWaiting(ctx, key) {
			delete(g.waiting, key)
			continue
		}
		waiters = append(waiters, waiter{key: key, seq: seq})
	}
	return state, waiters, nil
}

// exists reports whether the cache holds an RC (one that finished at once
// is not among the running).
func (g *rolloutGate) exists(ctx context.Context, key types.NamespacedName) bool {
	return g.reader.Get(ctx, key, &corev1.ReplicationController{}) == nil
}

// failedLatest returns the DeploymentConfigs whose latest deployment failed
// without being cancelled.
func (g *rolloutGate) failedLatest(ctx context.Context) ([]types.NamespacedName, error) {
	list := &corev1.ReplicationControllerList{}
	if err := g.reader.List(ctx, list, client.MatchingFields{rcRunning: "failed"}); err != nil {
		return nil, fmt.Errorf("list failed deployments: %w", err)
	}
	var out []types.NamespacedName
	for _, rc := range list.Items {
		key := types.NamespacedName{Namespace: rc.Namespace, Name: rc.Labels[dcv1.DeploymentConfigLabel]}
		dc := &dcv1.DeploymentConfig{}
		if err := g.reader.Get(ctx, key, dc); err != nil || dc.Status.LatestVersion != deployment.Version(&rc) {
			continue
		}
		out = append(out, key)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// stillWaiting reports whether a waiter still has a deployment to create:
// it exists, is not paused, and the deployment of its latest version does
// not exist.
func (g *rolloutGate) stillWaiting(ctx context.Context, key types.NamespacedName) bool {
	dc := &dcv1.DeploymentConfig{}
	if err := g.reader.Get(ctx, key, dc); err != nil || dc.DeletionTimestamp != nil || dc.Spec.Paused || dc.Status.LatestVersion == 0 {
		return false
	}
	return !g.exists(ctx, types.NamespacedName{Namespace: key.Namespace, Name: deployment.Name(dc.Name, dc.Status.LatestVersion)})
}

// wakeWaiters syncs the waiters that would be admitted now: called after
// every sync while some wait, so that a rollout's end (its DeploymentConfig
// syncs then) lets the next one start.
func (g *rolloutGate) wakeWaiters(ctx context.Context) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiting) == 0 {
		return
	}
	state, waiters, err := g.snapshot(ctx)
	if err != nil {
		return
	}
	for key := range decide(g.limits, state, waiters) {
		dc := &dcv1.DeploymentConfig{}
		dc.Namespace, dc.Name = key.Namespace, key.Name
		select {
		case g.wake <- event.GenericEvent{Object: dc}:
		default:
			// Full: the waiter's periodic retry brings it back.
		}
	}
}

// queuedRetry is how often a queued rollout looks again by itself, should
// no wake reach it (a slot freed by a deleted deployment).
const queuedRetry = 30 * time.Second

// gateSource feeds the DeploymentConfig controller the waiters the gate
// wakes; without a gate, a channel nothing writes to.
func gateSource(g *rolloutGate) source.Source {
	wake := make(chan event.GenericEvent)
	if g != nil {
		wake = g.wake
	}
	// A woken waiter starts a rollout: it goes ahead of the bookkeeping.
	return source.Channel(wake, enqueueByPriority(requestFor, sourceStartsRollout))
}
