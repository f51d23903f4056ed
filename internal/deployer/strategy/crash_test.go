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
}

func (c *crasher) react(action k8stesting.Action) (bool, runtime.Object, error) {
	if isPersonsRequest(action) {
		return false, nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return true, nil, errCrashed
	}
	switch action.GetVerb() {
	case "create", "update", "patch", "delete":
	default:
		return false, nil, nil
	}
	c.writes++
	if c.writes != c.at {
		return false, nil, nil
	}
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
	// canary: the new deployment's replicas only ever grow.
	routed bool
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
		{name: "canary steps", run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController) error {
			_, err := r.Rolling(ctx, canarySteps, from, to, 4)
			return err
		}},
		{name: "routed canary", routed: true, run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController) error {
			_, err := r.Rolling(ctx, routedSteps, from, to, 4)
			return err
		}},
		{name: "blue-green with analyses", run: func(ctx context.Context, r *Rollout, from, to *corev1.ReplicationController) error {
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
	e.cluster.Client.PrependReactor("*", "*", c.react)
	err = tc.run(killed, e.newRunner(routes), e.from, e.to)
	writes := c.writes
	if at > 0 && writes >= at {
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
					for _, after := range []bool{false, true} {
						wg.Add(1)
						slots <- struct{}{}
						go func() {
							defer func() { <-slots; wg.Done() }()
							cases.Add(1)
							where := fmt.Sprintf("killed %s write %d of %d", map[bool]string{false: "before", true: "after"}[after], at, want.writes)
							got, err := runCrashCase(t, tc, at, after, full)
							if err != nil {
								t.Errorf("%s: %v", where, err)
								return
							}
							checkResumed(t, where, tc, want, got)
						}()
					}
				}
				wg.Wait()
			})
		}
	}
	t.Cleanup(func() {
		t.Logf("crash-point cases: %d (strategies × promote kinds × runner writes × before/after)", cases.Load())
	})
}

// crashParallel is how many crash cases of a strategy run at once.
const crashParallel = 12

// checkResumed compares a resumed run with the uninterrupted one.
func checkResumed(t *testing.T, where string, tc crashCase, want, got crashRun) {
	t.Helper()
	if got.to != want.to || got.from != want.from {
		t.Errorf("%s: ended with web-2=%d web-1=%d, want %d and %d", where, got.to, got.from, want.to, want.from)
	}
	if !got.grew {
		t.Errorf("%s: web-2 was scaled down on the way", where)
	}
	if len(got.requests) != len(want.requests) {
		t.Errorf("%s: needed %d promote requests, the uninterrupted run %d", where, len(got.requests), len(want.requests))
	}
	for _, id := range got.requests {
		if !got.record.HasConsumed(id) {
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
