package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/event"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployer"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// DeployerMode says where dc-controller runs rollouts: in a deployer pod
// each, or, for those that need no container of their own, in itself.
type DeployerMode string

const (
	// DeployerModePod runs every rollout in a deployer pod (OpenShift's way).
	DeployerModePod DeployerMode = dcv1.DeployerModePod
	// DeployerModeControllerWhenPossible runs a rollout with no Custom
	// strategy, customParams, execNewPod or tagImages hook in the leading
	// dc-controller.
	DeployerModeControllerWhenPossible DeployerMode = dcv1.DeployerModeControllerWhenPossible
)

// DefaultMaxControllerRollouts is how many rollouts dc-controller runs in
// itself at once unless told otherwise; more wait, New, for a free slot.
// A rollout in flight costs the leader about 110 KiB of RSS
// (bench/results/2026-12-02-inflight1000): 1,000 fit beside the 5,000
// DCs the shipped 256 Mi limit is sized for.
const DefaultMaxControllerRollouts = 1000

// ParseDeployerMode reads a deployer mode; name says where the value came
// from (a flag, an annotation) for the error.
func ParseDeployerMode(name, value string) (DeployerMode, error) {
	switch m := DeployerMode(value); m {
	case DeployerModePod, DeployerModeControllerWhenPossible:
		return m, nil
	}
	return "", fmt.Errorf("%s: %q is not a deployer mode (expected %q or %q)", name, value, DeployerModePod, DeployerModeControllerWhenPossible)
}

// runsInController decides whether a rollout runs inside dc-controller:
// the DeploymentConfig's deployer-mode annotation (as encoded in the
// rollout) or else the controller's mode asks for it, and the rollout needs
// no pod (see deployment.NeedsPod). An invalid annotation is an error, and the caller runs the
// rollout in the controller's mode.
func runsInController(mode DeployerMode, dc *dcv1.DeploymentConfig) (bool, error) {
	var err error
	if v, ok := dc.Annotations[dcv1.DeployerModeAnnotation]; ok {
		var m DeployerMode
		if m, err = ParseDeployerMode("annotation "+dcv1.DeployerModeAnnotation, v); err == nil {
			mode = m
		}
	}
	return mode == DeployerModeControllerWhenPossible && !deployment.NeedsPod(&dc.Spec.Strategy), err
}

// errRunnerFull: as many rollouts as allowed already run in the controller.
var errRunnerFull = errors.New("the controller runs as many rollouts as --max-controller-rollouts allows")

// errDeadlineExceeded: the rollout ran past its activeDeadlineSeconds.
var errDeadlineExceeded = errors.New(reasonDeadlineExceeded)

// errNotLeading: the runner has not started, or has stopped (this replica
// does not lead).
var errNotLeading = errors.New("the rollout runner is not running")

// rolloutRunner runs rollouts inside dc-controller: dc-deploy's
// own code (internal/deployer), one goroutine per rollout, for as long as
// this replica leads. When a rollout ends it wakes the deployer controller,
// which records the outcome as it would a deployer pod's.
type rolloutRunner struct {
	client kubernetes.Interface
	routes dynamic.Interface
	max    int
	// wake brings a deployment whose rollout ended back to the deployer
	// controller.
	wake     chan event.GenericEvent
	inFlight prometheus.Gauge
	// budget is the rate the rollouts' writes share; it follows the
	// rollouts in flight.
	budget *rolloutBudget
	// liveLogs bounds the writes of logs while rollouts run (see
	// liveLogWrites).
	liveLogs *rate.Limiter
	log      logr.Logger

	mu   sync.Mutex
	ctx  context.Context // the leader's lifetime; nil when not running
	runs map[types.NamespacedName]*run
	// slots are the deployments given a slot that have not started their
	// run yet (their phase write is in flight); waiting are those that
	// asked for one when none was free, by when they asked.
	slots   map[types.NamespacedName]bool
	waiting map[types.NamespacedName]time.Time
	wg      sync.WaitGroup
	now     func() time.Time
}

// run is one rollout the runner carries out.
type run struct {
	uid    types.UID
	cancel context.CancelFunc
	log    *rolloutLog
	done   chan struct{}
	// err is the rollout's outcome, once done is closed: nil when it
	// completed.
	err error
	// finished: the rollout ran to its end (rather than being stopped by a
	// cancel or by this replica losing the lead); err is then its outcome.
	finished bool
}

// newRolloutRunner returns a runner whose clients are built from cfg:
// writes share the budget of qps writes per second, or, with qps 0, one
// that grows with the rollouts in flight and never falls below cfg's QPS
// (see rolloutBudget); reads (the rollouts' gets and watches of their RCs
// and pods) are left to the API server's own limits, as an informer's
// watches are.
func newRolloutRunner(cfg *rest.Config, max int, qps float64, log logr.Logger) (*rolloutRunner, error) {
	cfg = rest.CopyConfig(cfg)
	budget := newRolloutBudget(qps, float64(cfg.QPS))
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &writeLimiter{next: rt, budget: budget} })
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	client, routes, err := deployer.NewClients(cfg)
	if err != nil {
		return nil, fmt.Errorf("rollout runner: %w", err)
	}
	if max <= 0 {
		max = DefaultMaxControllerRollouts
	}
	return &rolloutRunner{
		client: client, routes: routes, max: max, log: log, budget: budget,
		liveLogs: rate.NewLimiter(liveLogWrites, liveLogBurst),
		wake:     make(chan event.GenericEvent, 64),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "deployconfig_controller_rollouts_in_flight",
			Help: "Rollouts the leading dc-controller runs in itself (--deployer-mode controller-when-possible).",
		}),
		runs:  map[types.NamespacedName]*run{},
		slots: map[types.NamespacedName]bool{}, waiting: map[types.NamespacedName]time.Time{},
		now: time.Now,
	}, nil
}

// Start runs the runner until ctx ends (this replica stops leading), then
// stops every rollout and waits for them: the next leader resumes them.
func (r *rolloutRunner) Start(ctx context.Context) error {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
	<-ctx.Done()
	r.mu.Lock()
	r.ctx = nil
	for _, run := range r.runs {
		run.cancel()
	}
	r.mu.Unlock()
	r.wg.Wait()
	return nil
}

// NeedLeaderElection: only the leader runs rollouts.
func (r *rolloutRunner) NeedLeaderElection() bool { return true }

// rolloutStart says how to run one rollout.
type rolloutStart struct {
	rc *corev1.ReplicationController
	// started is when the rollout started; deadline is when its
	// activeDeadlineSeconds end.
	started, deadline time.Time
	// resume: the rollout was running already (in an earlier leader);
	// it runs even when the runner is full. Its log goes on from the
	// lines the deployment kept.
	resume bool
}

// start runs a rollout, unless one runs already for the deployment.
func (r *rolloutRunner) start(s rolloutStart) error {
	key := types.NamespacedName{Namespace: s.rc.Namespace, Name: s.rc.Name}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx == nil {
		return errNotLeading
	}
	if existing, ok := r.runs[key]; ok && existing.uid == s.rc.UID && !isDone(existing) {
		return nil
	}
	if !s.resume && !r.slots[key] && r.usedLocked() >= r.max {
		return errRunnerFull
	}
	delete(r.slots, key)
	ctx, cancel := context.WithDeadline(r.ctx, s.deadline)
	run := &run{uid: s.rc.UID, cancel: cancel, log: &rolloutLog{}, done: make(chan struct{})}
	if s.resume {
		run.log.restore(deployment.Log(s.rc))
		fmt.Fprintln(run.log, "--> Resumed by a new dc-controller leader")
	}
	r.runs[key] = run
	r.budget.setInFlight(r.runningLocked())
	r.inFlight.Inc()
	r.wg.Add(1)
	go r.execute(ctx, run, s)
	return nil
}

// execute carries out one rollout with the deployer's code and wakes the
// deployer controller when it ends.
func (r *rolloutRunner) execute(ctx context.Context, run *run, s rolloutStart) {
	defer r.wg.Done()
	defer r.inFlight.Dec()
	log := r.log.WithValues("rc", s.rc.Namespace+"/"+s.rc.Name)
	flushed := make(chan struct{})
	flushCtx, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		defer close(flushed)
		r.flushLog(flushCtx, run, s.rc, log)
	}()
	err := r.deploy(ctx, run, s, log)
	stopFlush()
	<-flushed
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		run.err, run.finished = errDeadlineExceeded, true
	case ctx.Err() != nil:
		// Cancelled, or this replica stops leading: the outcome is not
		// the rollout's.
	default:
		run.err, run.finished = err, true
	}
	if run.finished && run.err != nil {
		fmt.Fprintf(run.log, "error: %v\n", run.err)
	}
	if !run.finished {
		// Stopped (this replica stops leading, or a cancel): keep every
		// line for the next runner and for `kubectl dc logs`.
		r.writeLog(context.WithoutCancel(ctx), run, s.rc, log)
	}
	close(run.done)
	r.mu.Lock()
	r.budget.setInFlight(r.runningLocked())
	r.mu.Unlock()
	log.V(1).Info("rollout ended in the controller", "finished", run.finished, "error", run.err)
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: s.rc.Namespace, Name: s.rc.Name}}
	select {
	case r.wake <- event.GenericEvent{Object: rc}:
	case <-r.leaderDone():
	}
}

// deploy runs the deployer's code. A panic in it fails the rollout, as it
// would end a deployer pod, rather than the controller.
func (r *rolloutRunner) deploy(ctx context.Context, run *run, s rolloutStart, log logr.Logger) (err error) {
	defer func() {
		if p := recover(); p != nil {
			log.Error(fmt.Errorf("%v", p), "the deployer panicked", "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	return deployer.Run(ctx, deployer.Options{
		Namespace: s.rc.Namespace, Name: s.rc.Name, Out: run.log, KeptLog: run.log,
		Client: r.client, Dynamic: r.routes, Started: s.started, Log: log,
	})
}

// leaderDone is closed when this replica stops leading.
func (r *rolloutRunner) leaderDone() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx == nil {
		closed := make(chan struct{})
		close(closed)
		return closed
	}
	return r.ctx.Done()
}

// lookup returns the deployment's run, if this replica has one for it.
func (r *rolloutRunner) lookup(rc *corev1.ReplicationController) (*run, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.runs[types.NamespacedName{Namespace: rc.Namespace, Name: rc.Name}]
	if !ok || run.uid != rc.UID {
		return nil, false
	}
	return run, true
}

// stop ends the deployment's rollout, if one runs, and waits for it to
// stop; its log stays for the caller to record.
func (r *rolloutRunner) stop(ctx context.Context, rc *corev1.ReplicationController) (*run, error) {
	run, ok := r.lookup(rc)
	if !ok {
		return nil, nil
	}
	run.cancel()
	select {
	case <-run.done:
		return run, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("stop the rollout of %s/%s: %w", rc.Namespace, rc.Name, ctx.Err())
	}
}

// forget drops the deployment's run once its outcome is recorded.
func (r *rolloutRunner) forget(key types.NamespacedName) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if run, ok := r.runs[key]; ok {
		run.cancel()
		delete(r.runs, key)
	}
}

// reserve gives the deployment a slot of --max-controller-rollouts, first
// come, first served: it reports false while the slots are taken or a
// deployment that asked earlier still waits for one. The slot is the
// deployment's from its phase write on; release gives it back when the
// rollout does not start.
func (r *rolloutRunner) reserve(rc *corev1.ReplicationController) bool {
	key := types.NamespacedName{Namespace: rc.Namespace, Name: rc.Name}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots[key] {
		return true
	}
	asked, queued := r.waiting[key]
	if !queued {
		asked = r.now()
	}
	if r.usedLocked() >= r.max || r.aheadLocked(key, asked) {
		r.waiting[key] = asked
		return false
	}
	delete(r.waiting, key)
	r.slots[key] = true
	return true
}

// tryReserve gives the deployment a slot only when one is free now, none
// waits in line, and this replica leads; unlike reserve it never puts the
// deployment in the line. It lets dc-controller create a deployment
// already running in it, and leaves every other case to the deployer
// controller's New phase.
func (r *rolloutRunner) tryReserve(rc *corev1.ReplicationController) bool {
	if r == nil {
		return false
	}
	key := types.NamespacedName{Namespace: rc.Namespace, Name: rc.Name}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx == nil || len(r.waiting) > 0 || r.usedLocked() >= r.max {
		return false
	}
	r.slots[key] = true
	return true
}

// reserved reports whether the deployment holds a slot its run has not
// started with yet: its creator is about to start it.
func (r *rolloutRunner) reserved(rc *corev1.ReplicationController) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.slots[types.NamespacedName{Namespace: rc.Namespace, Name: rc.Name}]
}

// aheadLocked reports whether a deployment that asked for a slot before
// key (asked at asked) still waits.
func (r *rolloutRunner) aheadLocked(key types.NamespacedName, asked time.Time) bool {
	for other, t := range r.waiting {
		if other != key && (t.Before(asked) || (t.Equal(asked) && other.String() < key.String())) {
			return true
		}
	}
	return false
}

// release gives back the slot of a deployment whose rollout did not start,
// and takes it out of the line.
func (r *rolloutRunner) release(rc *corev1.ReplicationController) {
	key := types.NamespacedName{Namespace: rc.Namespace, Name: rc.Name}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.slots, key)
	delete(r.waiting, key)
}

// usedLocked counts the slots in use: rollouts running, and slots given
// to rollouts about to start.
func (r *rolloutRunner) usedLocked() int {
	return r.runningLocked() + len(r.slots)
}

// runningLocked counts the rollouts still running.
func (r *rolloutRunner) runningLocked() int {
	n := 0
	for _, run := range r.runs {
		if !isDone(run) {
			n++
		}
	}
	return n
}

func isDone(run *run) bool {
	select {
	case <-run.done:
		return true
	default:
		return false
	}
}

// rolloutLogLimit bounds the log kept on a deployment: annotations share
// 256 KiB per object, and the end of a log says how the rollout went.
const rolloutLogLimit = 16 << 10

// rolloutLog is a rollout's log as the controller keeps it: the last
// rolloutLogLimit bytes, from a line's start.
type rolloutLog struct {
	mu      sync.Mutex
	buf     []byte
	dropped bool
	// writes counts the writes; flushed says whether the kept log has
	// been written to the deployment since the last one.
	writes  uint64
	flushed bool
}

// droppedLine starts a kept log whose earlier lines were dropped.
const droppedLine = "... (earlier lines dropped)\n"

// Write implements io.Writer.
func (l *rolloutLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - rolloutLogLimit; over > 0 {
		cut := over
		for cut < len(l.buf) && l.buf[cut-1] != '\n' {
			cut++
		}
		l.buf = append(l.buf[:0], l.buf[cut:]...)
		l.dropped = true
	}
	l.writes++
	l.flushed = false
	return len(p), nil
}

// String returns the kept log; a first line says when earlier lines were
// dropped.
func (l *rolloutLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped {
		return droppedLine + string(l.buf)
	}
	return string(l.buf)
}

// restore starts the log with the lines an earlier runner kept.
func (l *rolloutLog) restore(kept string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rest, ok := strings.CutPrefix(kept, droppedLine); ok {
		kept, l.dropped = rest, true
	}
	l.buf = append(l.buf[:0], kept...)
	l.flushed = true
}

// pending reports whether the log has lines not yet on the deployment.
func (l *rolloutLog) pending() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.flushed && len(l.buf) > 0
}

// Unkept returns the log when it has lines not yet on the deployment,
// and the count of writes it has seen, for Kept.
func (l *rolloutLog) Unkept() (string, uint64, bool) {
	l.mu.Lock()
	dirty, writes := !l.flushed && len(l.buf) > 0, l.writes
	l.mu.Unlock()
	if !dirty {
		return "", 0, false
	}
	return l.String(), writes, true
}

// Kept notes that the log as it was after writes writes is on the
// deployment.
func (l *rolloutLog) Kept(writes uint64) {
	l.mu.Lock()
	if l.writes == writes {
		l.flushed = true
	}
	l.mu.Unlock()
}

// flushLog writes the run's log to its deployment every logFlushEvery
// while lines arrive, until ctx ends, as far as the runs' shared share of
// live log writes allows.
func (r *rolloutRunner) flushLog(ctx context.Context, run *run, rc *corev1.ReplicationController, log logr.Logger) {
	t := time.NewTicker(logFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if run.log.pending() && r.liveLogs.Allow() {
				r.writeLog(ctx, run, rc, log)
			}
		}
	}
}

// writeLog writes the run's log to its deployment when it has new lines.
func (r *rolloutRunner) writeLog(ctx context.Context, run *run, rc *corev1.ReplicationController, log logr.Logger) {
	text, writes, ok := run.log.Unkept()
	if !ok {
		return
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": deployment.LogPatch(text)}})
	if err != nil {
		log.Error(err, "encode the rollout's log")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, logWriteTimeout)
	defer cancel()
	if _, err := r.client.CoreV1().ReplicationControllers(rc.Namespace).Patch(ctx, rc.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		log.V(1).Info("could not write the rollout's log", "error", err.Error())
		return
	}
	run.log.Kept(writes)
}

// logWriteTimeout bounds one write of a rollout's log.
const logWriteTimeout = 5 * time.Second
