package strategy

import (
	"context"
	"errors"
	"fmt"
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
// request of the runner fails, as a dead process's would. The RC manager
// and the person who promotes write through the tracker, not through
// the client, and are not counted.
type crasher struct {
	mu      sync.Mutex
	writes  int
	at      int // 1-based; 0 never kills
	after   bool
	crashed bool
	kill    context.CancelFunc
	// cancel, at the chosen write, cancels the rollout as dc-controller
	// does for a user (the deployment marked cancelled, then the runner
	// stopped) instead of killing the runner: the write goes through, and
	// so do the runner's last writes that put traffic back.
	cancel func() error
	// cancelled is closed once the cancel is done; cancelErr is its error.
	cancelled chan struct{}
	cancelErr error
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
	if c.cancel != nil {
		// The cancel comes from another process (dc-controller), as
		// the write goes through: the fake serves one request at a time.
		c.at = 0
		c.mu.Unlock()
		go func() {
			defer close(c.cancelled)
			c.cancelErr = c.cancel()
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

// promoter plays the person who promotes: whenever web-2 records a wait
// for a person that no pending request answers, it writes a request for
// that wait, and remembers it.
type promoter struct {
	mu       sync.Mutex
	requests []string
	full     bool // the first request is a promote --full
}

func (p *promoter) run(ctx context.Context, c *fc.Cluster) error {
	rcs := corev1.SchemeGroupVersion.WithResource("replicationcontrollers")
	var last deployment.Request
	for ctx.Err() == nil {
		obj, err := c.Client.Tracker().Get(rcs, ns, "web-2")
		if err != nil {
			return err
		}
		rc := obj.(*corev1.ReplicationController)
		if req, ok := p.next(rc, last); ok {
			// A request still pending is written again, unchanged: the
			// fake's watches do not replay what happened between a
			// runner's read and its watch, as the API server's do.
			last = req
			patch, err := deployment.RequestPatch(req)
			if err == nil {
				_, err = c.Client.CoreV1().ReplicationControllers(ns).Patch(context.Background(), "web-2", types.MergePatchType, patch, metav1.PatchOptions{})
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
// pending request answers, or the last one again while it is pending.
func (p *promoter) next(rc *corev1.ReplicationController, last deployment.Request) (deployment.Request, bool) {
	pr := deployment.ProgressOf(rc)
	w := pr.Wait
	if w == nil || timedOut(w) {
		return deployment.Request{}, false
	}
	if pending, answered := deployment.Pending(rc, pr, w.Gate); answered {
		return pending, pending.ID == last.ID
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	req := deployment.Request{ID: fmt.Sprintf("r%d", len(p.requests)+1), Kind: deployment.RequestPromote, Gate: w.Gate}
	if p.full && len(p.requests) == 0 {
		req = deployment.Request{ID: "r1", Kind: deployment.RequestPromoteFull}
	}
	p.requests = append(p.requests, req.ID)
	return req, true
}

// timedOut: a timed wait ends by itself; nobody promotes it.
func timedOut(w *deployment.Wait) bool {
	_, timed := w.Ends()
	return timed && w.Reason != dcv1.PauseReasonInconclusive
}

func (p *promoter) sent() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// crashCase is one strategy the harness kills at each of its writes.
type crashCase struct {
	name string
	run  func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController) error
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
		{name: "recreate with hooks", run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController) error {
			_, err := r.Recreate(ctx, hooks, from, to, 4)
			return err
		}},
		{name: "rolling with hooks", run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController) error {
			_, err := r.Rolling(ctx, rollingOnly, from, to, 4)
			return err
		}},
		{name: "canary steps", waits: true, run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController) error {
			_, err := r.Rolling(ctx, canarySteps, from, to, 4)
			return err
		}},
		{name: "routed canary", waits: true, routed: true, run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController) error {
			_, err := r.Rolling(ctx, routedSteps, from, to, 4)
			return err
		}},
		{name: "blue-green with analyses", waits: true, run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController) error {
			_, err := r.BlueGreen(ctx, bg, from, to, 4)
			return err
		}},
	}
}

// crashRun is what one run of a case, killed or not, left.
type crashRun struct {
	writes   int
	requests []string
	record   deployment.Progress
	from, to int32
	// grew: the new deployment's replicas never went down.
	grew   bool
	active map[string]string
	routes []string
}

// runCrashCase runs tc, killed at write at (0: never) and then resumed by
// a fresh runner, with a person promoting each wait. It runs beside other
// cases: it reports what goes wrong as an error rather than failing t.
func runCrashCase(t *testing.T, tc crashCase, at int, after, full bool) (_ crashRun, err error) {
	return runCase(t, tc, at, after, full, false)
}

// runCase is runCrashCase, or with cancel the rollout cancelled at write
// at (and checked at rest) and then retried.
func runCase(t *testing.T, tc crashCase, at int, after, full, cancelled bool) (_ crashRun, err error) {
	e := setup(t, fc.Options{}, 4, "")
	e.withServices(t)
	routes := &fakeRoutes{cluster: e.cluster}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	p := &promoter{full: full}
	promoting, stopPromoting := context.WithCancel(ctx)
	promoted := make(chan error, 1)
	go func() { promoted <- p.run(promoting, e.cluster) }()
	defer func() {
		stopPromoting()
		if perr := <-promoted; perr != nil && err == nil {
			err = fmt.Errorf("the person promoting: %w", perr)
		}
	}()

	killed, kill := context.WithCancel(ctx)
	c := &crasher{at: at, after: after, kill: kill}
	if cancelled {
		c.cancel = func() error { return e.setCancelled(true) }
		c.cancelled = make(chan struct{})
	}
	e.cluster.Client.PrependReactor("*", "*", c.react)
	err = tc.run(killed, e.newRunner(routes), e.from, e.to)
	writes := c.count()
	if cancelled && at > 0 && writes >= at {
		<-c.cancelled
		if c.cancelErr != nil {
			return crashRun{}, c.cancelErr
		}
		if err == nil {
			return crashRun{}, nil // cancelled after its last write
		}
		if rerr := e.checkAtRest(tc, routes); rerr != nil {
			return crashRun{}, fmt.Errorf("after the cancel: %w", rerr)
		}
		c.disarm()
		if rerr := e.retry(); rerr != nil {
			return crashRun{}, rerr
		}
		from, to, rerr := e.reread()
		if rerr != nil {
			return crashRun{}, rerr
		}
		err = tc.run(ctx, e.newRunner(routes), from, to)
	} else if at > 0 && writes >= at {
		c.disarm()
		from, to, rerr := e.reread()
		if rerr != nil {
			return crashRun{}, rerr
		}
		err = tc.run(ctx, e.newRunner(routes), from, to)
	}
	kill()
	if err != nil {
		return crashRun{}, fmt.Errorf("the resumed rollout failed: %w\n%s", err, e.out.String())
	}
	from, to, err := e.reread()
	if err != nil {
		return crashRun{}, err
	}
	active, err := e.cluster.Client.CoreV1().Services(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		return crashRun{}, err
	}
	return crashRun{
		writes: writes, requests: p.sent(), record: deployment.ProgressOf(to),
		from: ptr.Deref(from.Spec.Replicas, 0), to: ptr.Deref(to.Spec.Replicas, 0),
		grew: grewOnly(e.cluster.Scales(), "web-2"), active: active.Spec.Selector, routes: routes.states(),
	}, nil
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

// checkAtRest checks what a cancelled rollout leaves: the active Service
// on the live deployment (web-2 only once switched to for good), and the
// routes at rest.
func (e *env) checkAtRest(tc crashCase, routes *fakeRoutes) error {
	_, to, err := e.reread()
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

// newRunner is a fresh runner on the same cluster, as a restarted deployer
// pod or a new dc-controller leader has.
func (e *env) newRunner(routes *fakeRoutes) *Rollout {
	r := New(scaler.New(e.cluster.Client, ns), &hookLog{out: e.out}, e.out, Until{})
	r.pause = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	r.WithAnalysis(passingAnalysis{}).WithServices(e.cluster.Client.CoreV1().Services(ns)).WithRoutes(func(*dcv1.TrafficRouting) Routes { return routes })
	return r
}

// reread reads web-1 and web-2 as a fresh runner finds them.
func (e *env) reread() (from, to *corev1.ReplicationController, err error) {
	rcs := corev1.SchemeGroupVersion.WithResource("replicationcontrollers")
	get := func(name string) *corev1.ReplicationController {
		obj, gerr := e.cluster.Client.Tracker().Get(rcs, ns, name)
		if gerr != nil {
			err = gerr
			return nil
		}
		return obj.(*corev1.ReplicationController).DeepCopy()
	}
	from, to = get("web-1"), get("web-2")
	return from, to, err
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

// TestResumeAtEveryCrashPoint kills the runner of each strategy just
// before and just after each of its writes, resumes it with a fresh
// runner, and checks that the rollout ends as an uninterrupted one does:
// the same replicas and Services, the routes at rest, no promote needed
// twice, each request consumed once, and the new deployment never scaled
// below what it had reached. With "promote --full" the first wait is
// answered with a full promote instead.
func TestResumeAtEveryCrashPoint(t *testing.T) {
	var cases atomic.Int64
	for _, tc := range crashCases() {
		for _, full := range []bool{false, true} {
			if full && !tc.waits {
				continue
			}
			name := tc.name
			if full {
				name += ", promote --full"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				want, err := runCrashCase(t, tc, 0, false, full)
				if err != nil {
					t.Fatalf("the uninterrupted run: %v", err)
				}
				if want.to != 4 || want.from != 0 || !want.grew {
					t.Fatalf("the uninterrupted run ended with web-2=%d web-1=%d (grew only: %v)", want.to, want.from, want.grew)
				}
				// The cases wait on watches far more than they compute:
				// they run side by side, crashParallel at a time.
				var wg sync.WaitGroup
				slots := make(chan struct{}, crashParallel)
				for at := 1; at <= want.writes; at++ {
					for _, action := range crashActions(full) {
						wg.Add(1)
						slots <- struct{}{}
						go func() {
							defer func() { <-slots; wg.Done() }()
							cases.Add(1)
							where := fmt.Sprintf("%s write %d of %d", action.name, at, want.writes)
							got, err := runCase(t, tc, at, action.after, full, action.cancel)
							if err != nil {
								t.Errorf("%s: %v", where, err)
								return
							}
							if got.to == 0 && action.cancel {
								return // cancelled after the last write: nothing to retry
							}
							checkResumed(t, where, tc, want, got, !action.cancel)
						}()
					}
				}
				wg.Wait()
			})
		}
	}
	t.Cleanup(func() {
		t.Logf("crash-point cases: %d (strategies × promote kinds × runner writes × kill before, kill after, cancel and retry)", cases.Load())
	})
}

// crashAction is what happens at a runner's write.
type crashAction struct {
	name          string
	after, cancel bool
}

// crashActions are the actions at each write: the runner killed before
// it or after it, and (with plain promotes) a user's cancel then retry.
func crashActions(full bool) []crashAction {
	actions := []crashAction{{name: "killed before"}, {name: "killed after", after: true}}
	if !full {
		actions = append(actions, crashAction{name: "cancelled then retried after", cancel: true})
	}
	return actions
}

// crashParallel is how many crash cases of a strategy run at once.
const crashParallel = 12

// checkResumed compares a resumed run with the uninterrupted one. A
// resumed run (resumed) goes on where the killed one was: it needs no
// promote twice, consumes each request, and never scales the new version
// down. A retried one starts its strategy again, with promotes of its own.
func checkResumed(t *testing.T, where string, tc crashCase, want, got crashRun, resumed bool) {
	t.Helper()
	if got.to != want.to || got.from != want.from {
		t.Errorf("%s: ended with web-2=%d web-1=%d, want %d and %d", where, got.to, got.from, want.to, want.from)
	}
	if resumed && !got.grew {
		t.Errorf("%s: web-2 was scaled down on the way", where)
	}
	if resumed && len(got.requests) != len(want.requests) {
		t.Errorf("%s: needed %d promote requests, the uninterrupted run %d", where, len(got.requests), len(want.requests))
	}
	for _, id := range got.requests {
		if resumed && !got.record.HasConsumed(id) {
			t.Errorf("%s: request %s was never consumed (record %s)", where, id, got.record.Encode())
		}
	}
	if fmt.Sprint(got.active) != fmt.Sprint(want.active) {
		t.Errorf("%s: the active Service selects %v, want %v", where, got.active, want.active)
	}
	if tc.routed {
		if n := len(got.routes); n == 0 || got.routes[n-1] != trafficrouting.Rest.String() {
			t.Errorf("%s: the routes ended at %v, want at rest", where, got.routes)
		}
	}
	if got.record.Wait != nil || got.record.Analysis != nil {
		t.Errorf("%s: the record still waits or analyses: %s", where, got.record.Encode())
	}
}
