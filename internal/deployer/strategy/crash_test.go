package strategy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
	"github.com/deployconfig/deployconfig/internal/deployer/scaler"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/trafficrouting"
)

// errCrashed is what the API answers a runner that the harness killed.
var errCrashed = errors.New("the runner was killed")

// crasher kills the runner at one of its writes: every create, update,
// patch or delete it makes is counted, and at the chosen one it is killed
// just before the write (the write fails and never happens) or just after
// it (the write happens, and nothing after it does). Once killed, every
// request of the runner fails, as a dead process's would. The RC manager,
// the person who promotes and dc-controller write through the tracker or
// as a person's request, and are not counted.
type crasher struct {
	mu      sync.Mutex
	writes  int
	at      int // 1-based; 0 never kills
	after   bool
	crashed bool
	kill    context.CancelFunc
	// other, when set, is what another process (dc-controller) does at
	// the chosen write instead of killing the runner: the write goes
	// through, other runs, and then the runner is stopped, its last
	// writes (those that put traffic back) going through too.
	other func() error
	// otherDone is closed once other is done; otherErr is its error.
	otherDone chan struct{}
	otherErr  error
}

func (c *crasher) react(action k8stesting.Action) (bool, runtime.Object, error) {
	if isPersonsRequest(action) {
		return false, nil, nil
	}
	c.mu.Lock()
	if c.crashed {
		c.mu.Unlock()
		return true, nil, errCrashed
	}
	switch action.GetVerb() {
	case "create", "update", "patch", "delete":
	default:
		c.mu.Unlock()
		return false, nil, nil
	}
	c.writes++
	if c.writes != c.at {
		c.mu.Unlock()
		return false, nil, nil
	}
	if c.other != nil {
		// The fake serves one request at a time: the other process
		// acts once this write is through.
		c.at = 0
		c.mu.Unlock()
		go func() {
			defer close(c.otherDone)
			c.otherErr = c.other()
			c.kill()
		}()
		return false, nil, nil
	}
	defer c.mu.Unlock()
	c.crashed = true
	c.kill()
	if c.after {
		// The fake ignores the context: the write goes through.
		c.crashed = false
		defer func() { c.crashed = true }()
		return false, nil, nil
	}
	return true, nil, errCrashed
}

// isPersonsRequest reports whether an action is the promoter's: a merge
// patch of the request alone, which a person makes from another process.
func isPersonsRequest(action k8stesting.Action) bool {
	patch, ok := action.(k8stesting.PatchAction)
	return ok && strings.HasPrefix(string(patch.GetPatch()), `{"metadata":{"annotations":{"`+dcv1.PromoteRequestAnnotation+`"`)
}

// count returns how many writes the runner made.
func (c *crasher) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

// disarm lets a fresh runner work.
func (c *crasher) disarm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.crashed = 0, false
}

// promoter plays the person who promotes: whenever the deployment it
// follows records a wait for a person that no pending request answers, it
// writes a request for that wait, and remembers it.
type promoter struct {
	mu       sync.Mutex
	rc       string
	requests map[string][]string // by deployment
	full     bool                // the first request is a promote --full
}

func newPromoter(full bool) *promoter {
	return &promoter{rc: "web-2", requests: map[string][]string{}, full: full}
}

// follow makes the promoter promote deployment rc from now on.
func (p *promoter) follow(rc string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rc = rc
}

func (p *promoter) target() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rc
}

func (p *promoter) run(ctx context.Context, c *fc.Cluster) error {
	rcs := corev1.SchemeGroupVersion.WithResource("replicationcontrollers")
	for ctx.Err() == nil {
		name := p.target()
		obj, err := c.Client.Tracker().Get(rcs, ns, name)
		if err != nil {
			return err
		}
		rc := obj.(*corev1.ReplicationController)
		if req, ok := p.next(rc); ok {
			patch, err := deployment.RequestPatch(req)
			if err == nil {
				_, err = c.Client.CoreV1().ReplicationControllers(ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{})
			}
			if err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// next returns the request to write now, if any: a new one for a wait no
// pending request answers. A pending one is left to the runner: the fake's
// watches start with the objects as they are, so a request written between
// a runner's read and its watch still reaches it.
func (p *promoter) next(rc *corev1.ReplicationController) (deployment.Request, bool) {
	pr := deployment.ProgressOf(rc)
	w := pr.Wait
	if w == nil || timedOut(w) {
		return deployment.Request{}, false
	}
	if _, answered := deployment.Pending(rc, pr, w.Gate); answered {
		return deployment.Request{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.requests["web-2"]) + len(p.requests["web-3"]) + 1
	req := deployment.Request{ID: fmt.Sprintf("r%d", n), Kind: deployment.RequestPromote, Gate: w.Gate}
	if p.full && n == 1 {
		req = deployment.Request{ID: "r1", Kind: deployment.RequestPromoteFull}
	}
	p.requests[rc.Name] = append(p.requests[rc.Name], req.ID)
	return req, true
}

// timedOut: a timed wait ends by itself; nobody promotes it.
func timedOut(w *deployment.Wait) bool {
	_, timed := w.Ends()
	return timed && w.Reason != dcv1.PauseReasonInconclusive
}

// sent returns the requests written for deployment rc.
func (p *promoter) sent(rc string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests[rc])
}

// crashCase is one strategy the harness kills at each of its writes.
type crashCase struct {
	name string
	run  func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController, desired int32) error
	// routed: the rollout sets routes, which must end at rest.
	routed bool
	// waits: the rollout waits for a person somewhere; a full promote
	// then differs from a plain one.
	waits bool
}

func crashCases() []crashCase {
	canarySteps := steps("1", "0", weight(25), pauseUntilPromoted, analysisStep, weight(75), pauseUntilPromoted)
	routedSteps := trafficSteps(weight(25), pauseUntilPromoted, headerRoute("beta"), weight(50), pauseUntilPromoted)
	bg := blueGreen.DeepCopy()
	bg.PrePromotionAnalysis = &dcv1.Analysis{}
	bg.PostPromotionAnalysis = &dcv1.Analysis{}
	hooks := &dcv1.RecreateDeploymentStrategyParams{Pre: someHook, Mid: someHook, Post: someHook, TimeoutSeconds: ptr.To[int64](10)}
	rollingOnly := rolling("1", "0", 10)
	rollingOnly.Pre, rollingOnly.Post = someHook, someHook
	return []crashCase{
		{name: "recreate with hooks", run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController, desired int32) error {
			_, err := r.Recreate(ctx, hooks, from, to, desired)
			return err
		}},
		{name: "rolling with hooks", run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController, desired int32) error {
			_, err := r.Rolling(ctx, rollingOnly, from, to, desired)
			return err
		}},
		{name: "canary steps", waits: true, run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController, desired int32) error {
			_, err := r.Rolling(ctx, canarySteps, from, to, desired)
			return err
		}},
		{name: "routed canary", waits: true, routed: true, run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController, desired int32) error {
			_, err := r.Rolling(ctx, routedSteps, from, to, desired)
			return err
		}},
		{name: "blue-green with analyses", waits: true, run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController, desired int32) error {
			_, err := r.BlueGreen(ctx, bg, from, to, desired)
			return err
		}},
	}
}

// runnerMode is where the runner runs. The deployer's code is the same in
// both; dc-controller also keeps the rollout's log on the deployment, with
// each write of the record, and a new leader starts from the lines kept.
type runnerMode struct {
	name     string
	keepsLog bool
}

var runnerModes = []runnerMode{{name: "deployer pod"}, {name: "dc-controller", keepsLog: true}}

// actionKind is what happens at the chosen write of the runner.
type actionKind int

const (
	// actKilled: the runner is killed, and a fresh one resumes.
	actKilled actionKind = iota
	// actScaled: the runner is killed after the write, and the
	// DeploymentConfig scaled to scaledReplicas before a fresh one
	// resumes.
	actScaled
	// actCancelled: a user cancels the rollout, then retries it.
	actCancelled
	// actNewVersion and actUndone: a new version (web-3) arrives, with a new
	// template or, from `rollout undo`, web-1's: dc-controller cancels
	// web-2 and web-3 rolls out from the live deployment.
	actNewVersion
	actUndone
)

// scaledReplicas is the DeploymentConfig's size after actScaled.
const scaledReplicas = 6

// crashAction is what happens at a runner's write.
type crashAction struct {
	name  string
	kind  actionKind
	after bool
}

// crashActions are the actions at each write: the runner killed before
// it or after it and, as a deployer pod, killed after it and scaled, and
// (with plain promotes) a user's cancel then retry, a new version and an
// undo. The runner modes differ only in dc-controller's kept log, which
// matters when a runner resumes: the other actions run in one mode.
func crashActions(full bool, mode runnerMode) []crashAction {
	actions := []crashAction{
		{name: "killed before", kind: actKilled},
		{name: "killed after", kind: actKilled, after: true},
	}
	if mode.keepsLog {
		return actions
	}
	actions = append(actions, crashAction{name: "killed after, then scaled to 6,", kind: actScaled, after: true})
	if !full {
		actions = append(actions,
			crashAction{name: "cancelled then retried after", kind: actCancelled},
			crashAction{name: "new version after", kind: actNewVersion},
			crashAction{name: "undone after", kind: actUndone})
	}
	return actions
}

// crashRun is what one run of a case, killed or not, left.
type crashRun struct {
	// writes counts the first runner's writes.
	writes int
	// rc is the deployment that rolled out last (web-2, or web-3 after
	// a new version), and requests the promotes written for it.
	rc       string
	requests []string
	record   deployment.Progress
	replicas map[string]int32
	// grew: rc's replicas never went down.
	grew bool
	// most is the most pods the deployments had at once, and fewest the
	// fewest available ones, once the old deployment was up.
	most, fewest int32
	active       map[string]string
	routes       []string
	// log is the last runner's log; kept, the lines the killed runner
	// kept on the deployment with its last write of the record.
	log, kept string
}

// caseStall is how long a case may go without a write before it fails: a
// rollout that stopped moving. Time alone would fail cases that a loaded
// machine only slows down.
const caseStall = 60 * time.Second

// errStalled ends a case whose cluster took no write for caseStall.
var errStalled = fmt.Errorf("no write for %s: the rollout stopped moving", caseStall)

// untilStalled returns a context that ends, with errStalled as its cause,
// once the cluster has taken no write for stall.
func untilStalled(parent context.Context, c *fc.Cluster, stall time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		tick := time.NewTicker(stall / 20)
		defer tick.Stop()
		writes, since := c.Writes(), time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				if n := c.Writes(); n != writes {
					writes, since = n, now
				} else if now.Sub(since) >= stall {
					cancel(errStalled)
					return
				}
			}
		}
	}()
	return ctx, func() { cancel(nil) }
}

// runCase runs tc in mode, with action at write at (0: nothing happens),
// with a person promoting each wait. It runs beside other cases: it
// reports what goes wrong as an error rather than failing t.
func runCase(t *testing.T, tc crashCase, mode runnerMode, at int, action crashAction, full bool) (_ crashRun, err error) {
	e := setup(t, fc.Options{}, 4, "")
	e.withServices(t)
	routes := &fakeRoutes{cluster: e.cluster}
	ctx, cancel := untilStalled(t.Context(), e.cluster, caseStall)
	defer cancel()
	p := newPromoter(full)
	promoting, stopPromoting := context.WithCancel(ctx)
	promoted := make(chan error, 1)
	go func() { promoted <- p.run(promoting, e.cluster) }()
	defer func() {
		stopPromoting()
		if perr := <-promoted; perr != nil && err == nil {
			err = fmt.Errorf("the person promoting: %w", perr)
		}
	}()

	stopped, stop := context.WithCancel(ctx)
	c := &crasher{at: at, after: action.after, kill: stop}
	if action.kind == actCancelled || action.kind == actNewVersion || action.kind == actUndone {
		c.other = func() error { return e.setCancelled(true) }
		c.otherDone = make(chan struct{})
	}
	e.cluster.Client.PrependReactor("*", "*", c.react)
	first := e.newRunner(mode, routes, "")
	err = tc.run(stopped, first.Rollout, e.from, e.to, 4)
	writes := c.count()
	last, name := first, "web-2"
	if at > writes {
		// This run made fewer writes than the uninterrupted one (how
		// many scales a rollout needs depends on when its pods become
		// available): the action never happened.
		stop()
		return crashRun{}, errNotReached
	}
	if at > 0 {
		if c.otherDone != nil {
			<-c.otherDone
			if c.otherErr != nil {
				return crashRun{}, c.otherErr
			}
		}
		c.disarm()
		last, name, err = e.after(ctx, t, tc, mode, routes, p, action, err)
	}
	stop()
	if err != nil {
		return crashRun{}, fmt.Errorf("the rollout after it failed: %w\n%s", err, e.out.String())
	}
	return e.result(ctx, p, routes, name, writes, last, first)
}

// after carries out what follows action: a fresh runner resumes, or the
// rollout is retried, or web-3 rolls out. It returns the last runner and
// the deployment it rolled out.
func (e *env) after(ctx context.Context, t *testing.T, tc crashCase, mode runnerMode, routes *fakeRoutes, p *promoter, action crashAction, runErr error) (*runner, string, error) {
	switch action.kind {
	case actKilled, actScaled:
		if action.kind == actScaled {
			if err := e.setDesired(scaledReplicas); err != nil {
				return nil, "", err
			}
		}
		return e.resume(ctx, tc, mode, routes, "web-2")
	case actCancelled:
		if runErr == nil {
			return nil, "", errNothingToRetry
		}
		if err := e.checkAtRest(tc, routes); err != nil {
			return nil, "", fmt.Errorf("after the cancel: %w", err)
		}
		if err := e.retry(); err != nil {
			return nil, "", err
		}
		r := e.newRunner(mode, routes, "")
		from, to, err := e.reread("web-2")
		if err != nil {
			return nil, "", err
		}
		return r, "web-2", tc.run(ctx, r.Rollout, from, to, 4)
	}
	if runErr != nil {
		if err := e.checkAtRest(tc, routes); err != nil {
			return nil, "", fmt.Errorf("after the cancel: %w", err)
		}
	}
	image := "web:3"
	if action.kind == actUndone {
		image = "web:1"
	}
	from, to, err := e.newVersion(ctx, t, image, runErr == nil)
	if err != nil {
		return nil, "", err
	}
	p.follow("web-3")
	r := e.newRunner(mode, routes, "")
	return r, "web-3", tc.run(ctx, r.Rollout, from, to, 4)
}

// errNotReached: the run ended before the write of the action.
var errNotReached = errors.New("the run ended before the write")

// errNothingToRetry: the cancel came after the rollout's last write.
var errNothingToRetry = errors.New("cancelled after its last write: nothing to retry")

// resume runs a fresh runner of deployment rc, as a restarted deployer
// pod or a new dc-controller leader does: it reads the deployment's
// desired replicas, and dc-controller starts from the log kept on it.
func (e *env) resume(ctx context.Context, tc crashCase, mode runnerMode, routes *fakeRoutes, rc string) (*runner, string, error) {
	from, to, err := e.reread(rc)
	if err != nil {
		return nil, "", err
	}
	desired, ok := deployment.DesiredReplicas(to)
	if !ok {
		return nil, "", fmt.Errorf("%s has no desired replicas", rc)
	}
	r := e.newRunner(mode, routes, deployment.Log(to))
	return r, rc, tc.run(ctx, r.Rollout, from, to, desired)
}

// result reads what the run left, the rollout of deployment name done.
func (e *env) result(ctx context.Context, p *promoter, routes *fakeRoutes, name string, writes int, last, first *runner) (crashRun, error) {
	rcs, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return crashRun{}, err
	}
	run := crashRun{writes: writes, rc: name, requests: p.sent(name), replicas: map[string]int32{}, grew: grewOnly(e.cluster.Scales(), name), routes: routes.states()}
	run.most, run.fewest = podBounds(e.cluster.Scales())
	for i := range rcs.Items {
		rc := &rcs.Items[i]
		run.replicas[rc.Name] = ptr.Deref(rc.Spec.Replicas, 0)
		if rc.Name == name {
			run.record = deployment.ProgressOf(rc)
		}
	}
	active, err := e.cluster.Client.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return crashRun{}, err
	}
	run.active = active.Spec.Selector
	if last.log != nil {
		run.log, run.kept = last.log.String(), first.log.keptText()
	}
	return run, nil
}

// setCancelled marks web-2 cancelled, or not, as dc-controller does.
func (e *env) setCancelled(cancelled bool) error {
	value := "null"
	if cancelled {
		value = `"true"`
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, dcv1.DeploymentCancelledAnnotation, value)
	_, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Patch(context.Background(), "web-2", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// setDesired records web-2's desired replicas as dc-controller does when
// the DeploymentConfig is scaled during its rollout.
func (e *env) setDesired(n int32) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%d"}}}`, dcv1.DesiredReplicasAnnotation, n)
	_, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Patch(context.Background(), "web-2", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// retry resets web-2 for a retry, as `kubectl dc rollout retry` does.
func (e *env) retry() error {
	rc, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Get(context.Background(), "web-2", metav1.GetOptions{})
	if err != nil {
		return err
	}
	patch, err := deployment.RetryPatch(rc)
	if err != nil {
		return err
	}
	_, err = e.cluster.Client.CoreV1().ReplicationControllers(ns).Patch(context.Background(), "web-2", types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// newVersion adds web-3, with the template of image, and readies its
// rollout as the deployer does: the live deployment (web-2 once it
// completed or was switched to for good, web-1 otherwise) is the one it
// replaces, and every other deployment is scaled to 0. It returns the
// live deployment and web-3.
func (e *env) newVersion(ctx context.Context, t *testing.T, image string, web2Done bool) (from, to *corev1.ReplicationController, err error) {
	rc := newRC(t, 3)
	rc.Spec.Template.Spec.Containers[0].Image = image
	if err := e.cluster.Client.Tracker().Add(rc); err != nil {
		return nil, nil, err
	}
	web1, web2, err := e.reread("web-2")
	if err != nil {
		return nil, nil, err
	}
	from, old := web1, web2
	if web2Done || deployment.IsSwitchedFinal(web2) {
		from, old = web2, web1
	}
	if _, err := e.rollout.scaler.Scale(ctx, old.Name, 0, 10*time.Second); err != nil {
		return nil, nil, fmt.Errorf("scale %s down: %w", old.Name, err)
	}
	_, to, err = e.reread("web-3")
	return from, to, err
}

// checkAtRest checks what a cancelled rollout leaves: the active Service
// on the live deployment (web-2 only once switched to for good), and the
// routes at rest.
func (e *env) checkAtRest(tc crashCase, routes *fakeRoutes) error {
	_, to, err := e.reread("web-2")
	if err != nil {
		return err
	}
	svc, err := e.cluster.Client.CoreV1().Services(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		return err
	}
	live := "web-1"
	if deployment.IsSwitchedFinal(to) {
		live = "web-2"
	}
	if got := svc.Spec.Selector["deployment"]; got != "" && got != live {
		return fmt.Errorf("the active Service selects %s, want the live %s", got, live)
	}
	if states := routes.states(); tc.routed && len(states) > 0 && states[len(states)-1] != trafficrouting.Rest.String() && !deployment.IsSwitchedFinal(to) {
		return fmt.Errorf("the routes were left at %v", states)
	}
	return nil
}

// runner is one runner of the harness, and in dc-controller's mode the
// log it keeps on the deployment.
type runner struct {
	*Rollout
	log *keptLog
}

// newRunner is a fresh runner on the same cluster, as a restarted deployer
// pod or a new dc-controller leader has; in dc-controller's mode its log
// starts with the lines kept on the deployment.
func (e *env) newRunner(mode runnerMode, routes *fakeRoutes, kept string) *runner {
	r := &runner{}
	out := io.Writer(e.out)
	if mode.keepsLog {
		r.log = &keptLog{}
		r.log.buf.WriteString(kept)
		out = io.MultiWriter(e.out, r.log)
	}
	r.Rollout = New(scaler.New(e.cluster.Client, ns), &hookLog{out: e.out}, out, Until{})
	r.pause = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	r.WithAnalysis(passingAnalysis{}).WithServices(e.cluster.Client.CoreV1().Services(ns)).WithRoutes(func(*dcv1.TrafficRouting) Routes { return routes })
	if r.log != nil {
		r.WithKeptLog(r.log)
	}
	return r
}

// keptLog is a runner's log as dc-controller keeps it (a
// deployment.KeptLog), and the text it last kept on the deployment.
type keptLog struct {
	mu           sync.Mutex
	buf          strings.Builder
	writes, mark uint64
	text, kept   string
}

func (l *keptLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.buf.Write(p)
}

func (l *keptLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *keptLog) Unkept() (string, uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text = l.buf.String()
	return l.text, l.writes, l.writes != l.mark && l.text != ""
}

func (l *keptLog) Kept(mark uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mark, l.kept = mark, l.text
}

func (l *keptLog) keptText() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kept
}

// reread reads web-1 and rc as a fresh runner finds them.
func (e *env) reread(rc string) (web1, to *corev1.ReplicationController, err error) {
	rcs := corev1.SchemeGroupVersion.WithResource("replicationcontrollers")
	get := func(name string) *corev1.ReplicationController {
		obj, gerr := e.cluster.Client.Tracker().Get(rcs, ns, name)
		if gerr != nil {
			err = gerr
			return nil
		}
		return obj.(*corev1.ReplicationController).DeepCopy()
	}
	web1, to = get("web-1"), get(rc)
	return web1, to, err
}

// podBounds returns the most pods the deployments had at once and the
// fewest available ones, over every scale after the setup's first.
func podBounds(scales []fc.Scale) (most, fewest int32) {
	fewest = -1
	for _, s := range scales[min(1, len(scales)):] {
		var pods, available int32
		for _, counts := range s.After {
			pods, available = pods+counts[0], available+counts[1]
		}
		most = max(most, pods)
		if fewest < 0 || available < fewest {
			fewest = available
		}
	}
	return most, fewest
}

// grewOnly reports whether the RC's scale never went down.
func grewOnly(scales []fc.Scale, rc string) bool {
	last := int32(-1)
	for _, s := range scales {
		if s.RC != rc {
			continue
		}
		if s.Replicas < last {
			return false
		}
		last = s.Replicas
	}
	return true
}

// TestResumeAtEveryCrashPoint runs each strategy in each runner mode, and
// at each of the runner's writes kills it (just before or just after the
// write) and resumes it with a fresh runner, scales the DeploymentConfig
// while it is down, cancels and retries it, or brings a new version or an
// undo. It checks that the rollout ends as an uninterrupted one does: the
// same replicas and Services, the routes at rest, no promote needed twice,
// each request consumed once, the new deployment never scaled below what
// it had reached, never more pods at once (nor, resumed, fewer available)
// than the uninterrupted run, and dc-controller's log keeping every line
// it kept before the kill. With "promote --full" the first wait is answered with
// a full promote instead.
func TestResumeAtEveryCrashPoint(t *testing.T) {
	var cases, skipped atomic.Int64
	for _, mode := range runnerModes {
		for _, tc := range crashCases() {
			for _, full := range []bool{false, true} {
				if full && !tc.waits {
					continue
				}
				name := mode.name + ", " + tc.name
				if full {
					name += ", promote --full"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					runCrashCases(t, tc, mode, full, &cases, &skipped)
				})
			}
		}
	}
	t.Cleanup(func() {
		t.Logf("crash-point cases: %d (runner modes × strategies × promote kinds × runner writes × actions: kill before, kill after, kill and scale, cancel and retry, new version, undo); %d more ended before their write or were cancelled after their last one", cases.Load(), skipped.Load())
	})
}

// runCrashCases runs tc uninterrupted, then with each action at each of
// its writes, and compares.
func runCrashCases(t *testing.T, tc crashCase, mode runnerMode, full bool, cases, skipped *atomic.Int64) {
	want, err := runCase(t, tc, mode, 0, crashAction{}, full)
	if err != nil {
		t.Fatalf("the uninterrupted run: %v", err)
	}
	t.Logf("uninterrupted: %d writes, at most %d pods, at fewest %d available", want.writes, want.most, want.fewest)
	if want.replicas["web-2"] != 4 || want.replicas["web-1"] != 0 || !want.grew {
		t.Fatalf("the uninterrupted run ended with %v (grew only: %v)", want.replicas, want.grew)
	}
	// The cases wait on watches far more than they compute: they run
	// side by side, crashParallel at a time.
	var wg sync.WaitGroup
	slots := make(chan struct{}, crashParallel)
	for at := 1; at <= want.writes; at++ {
		for _, action := range crashActions(full, mode) {
			wg.Add(1)
			slots <- struct{}{}
			go func() {
				defer func() { <-slots; wg.Done() }()
				where := fmt.Sprintf("%s write %d of %d", action.name, at, want.writes)
				got, err := runCase(t, tc, mode, at, action, full)
				if errors.Is(err, errNothingToRetry) || errors.Is(err, errNotReached) {
					skipped.Add(1)
					return
				}
				cases.Add(1)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					return
				}
				checkAfter(t, where, tc, action, want, got)
			}()
		}
	}
	wg.Wait()
}

// crashParallel is how many crash cases of a strategy run at once.
const crashParallel = 12

// checkAfter compares a run with action with the uninterrupted one. A
// resumed run goes on where the killed one was: it needs no promote
// twice, consumes each request, never scales the new version down, and
// keeps dc-controller's log. A retried one starts its strategy again, with
// promotes of its own; a new version rolls out web-3 in web-2's place.
func checkAfter(t *testing.T, where string, tc crashCase, action crashAction, want, got crashRun) {
	t.Helper()
	resumed := action.kind == actKilled || action.kind == actScaled
	size := int32(4)
	if action.kind == actScaled {
		size = scaledReplicas
	}
	for rc, n := range got.replicas {
		wantN := int32(0)
		if rc == got.rc {
			wantN = size
		}
		if n != wantN {
			t.Errorf("%s: ended with %v, want %s at %d and the others at 0", where, got.replicas, got.rc, size)
			break
		}
	}
	// A resumed rollout runs no more pods at once, and no fewer available,
	// than the uninterrupted one (plus the pods a scale adds).
	if got.most > want.most+size-4 {
		t.Errorf("%s: ran %d pods at once, the uninterrupted run at most %d", where, got.most, want.most)
	}
	if resumed && got.fewest < want.fewest {
		t.Errorf("%s: had %d pods available at the fewest, the uninterrupted run %d", where, got.fewest, want.fewest)
	}
	if resumed && !got.grew {
		t.Errorf("%s: %s was scaled down on the way", where, got.rc)
	}
	if resumed && len(got.requests) != len(want.requests) {
		t.Errorf("%s: needed %d promote requests, the uninterrupted run %d", where, len(got.requests), len(want.requests))
	}
	for _, id := range got.requests {
		if (resumed || got.rc == "web-3") && !got.record.HasConsumed(id) {
			t.Errorf("%s: request %s was never consumed (record %s)", where, id, got.record.Encode())
		}
	}
	wantActive := strings.ReplaceAll(fmt.Sprint(want.active), "web-2", got.rc)
	if fmt.Sprint(got.active) != wantActive {
		t.Errorf("%s: the active Service selects %v, want %v", where, got.active, wantActive)
	}
	if tc.routed {
		if n := len(got.routes); n == 0 || got.routes[n-1] != trafficrouting.Rest.String() {
			t.Errorf("%s: the routes ended at %v, want at rest", where, got.routes)
		}
	}
	if got.record.Wait != nil || got.record.Analysis != nil {
		t.Errorf("%s: the record still waits or analyses: %s", where, got.record.Encode())
	}
	if resumed && !strings.HasPrefix(got.log, got.kept) {
		t.Errorf("%s: the resumed runner's log lost lines the killed one kept:\nkept:\n%s\nlog:\n%s", where, got.kept, got.log)
	}
}
