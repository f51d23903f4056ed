package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// walkActions are the steps of a random walk, by weight.
var walkActions = []struct {
	name   string
	weight int
}{
	{"config change", 4},
	{"cancel", 2},
	{"retry", 2},
	{"scale", 2},
	{"wait", 2},
}

// Scenario a: each of several DeploymentConfigs walks at random through
// config changes, cancels, retries, scale changes and waits, with random
// pauses so that each lands in a random phase of the rollout before it;
// then one more config change, which must complete, and the
// DeploymentConfig must settle with no deployment lost or run twice.
func TestRandomWalk(t *testing.T) {
	t.Parallel()
	ensureControllers(t, defaultControllers())
	runRounds(t, "a random walk", func(r *round) {
		var wg sync.WaitGroup
		errs := make([]error, suite.sizes.walkers)
		for i := range suite.sizes.walkers {
			wg.Go(func() { errs[i] = r.walk(i) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				r.t.Errorf("walker %d: %v", i, err)
			}
		}
	})
}

// walker is one DeploymentConfig's walk.
type walker struct {
	r    *round
	rnd  *rand.Rand
	name string
	// retries counts the retries of each version, which each give it one
	// more deployer pod.
	retries map[int64]int
}

// walk runs one DeploymentConfig's random walk and its final rollout.
func (r *round) walk(i int) error {
	w := &walker{r: r, rnd: newRand(r.seed, uint64(i)+1), name: fmt.Sprintf("walk-%d", i), retries: map[int64]int{}}
	ctx := r.ctx
	opts := w.randomOptions()
	r.t.Logf("%s: %d replicas, %s, hooks %v, history %v", w.name, opts.Replicas, opts.Strategy, hookPoints(opts.Hooks), ptr.Deref(opts.HistoryLimit, -1))
	if err := suite.dcs.Create(ctx, rollout.NewDC(r.ns, w.name, opts)); err != nil {
		return fmt.Errorf("creating %s: %w", w.name, err)
	}
	for step := range suite.sizes.steps {
		action := w.pick()
		if err := w.do(ctx, step, action); err != nil {
			return fmt.Errorf("step %d (%s): %w", step, action, err)
		}
		if err := pause(ctx, between(w.rnd, 0, 1500*time.Millisecond)); err != nil {
			return err
		}
	}
	return w.finish(ctx)
}

// randomOptions picks the DeploymentConfig's shape.
func (w *walker) randomOptions() rollout.Options {
	o := rollout.Options{Replicas: 1 + w.rnd.Int32N(4), Strategy: dcv1.DeploymentStrategyTypeRolling}
	if w.rnd.IntN(3) == 0 {
		o.Strategy = dcv1.DeploymentStrategyTypeRecreate
	}
	if o.Strategy == dcv1.DeploymentStrategyTypeRolling {
		surges := []string{"", "0", "1", "50%", "100%"}
		o.MaxSurge = surges[w.rnd.IntN(len(surges))]
		o.MaxUnavailable = []string{"", "1", "25%", "100%"}[w.rnd.IntN(4)]
	}
	if w.rnd.IntN(2) == 0 {
		o.HistoryLimit = ptr.To(1 + w.rnd.Int32N(4))
	}
	if w.rnd.IntN(2) == 0 {
		policies := []dcv1.LifecycleHookFailurePolicy{dcv1.LifecycleHookFailurePolicyAbort, dcv1.LifecycleHookFailurePolicyRetry, dcv1.LifecycleHookFailurePolicyIgnore}
		points := []string{"pre", "post"}
		if o.Strategy == dcv1.DeploymentStrategyTypeRecreate {
			points = append(points, "mid")
		}
		point := points[w.rnd.IntN(len(points))]
		o.Hooks = map[string]*dcv1.LifecycleHook{point: rollout.ExecHook(policies[w.rnd.IntN(3)], "echo hook; sleep 0."+strconv.Itoa(w.rnd.IntN(10)))}
	}
	return o
}

// pick picks the next action at random, by weight.
func (w *walker) pick() string {
	total := 0
	for _, a := range walkActions {
		total += a.weight
	}
	n := w.rnd.IntN(total)
	for _, a := range walkActions {
		if n < a.weight {
			return a.name
		}
		n -= a.weight
	}
	return walkActions[0].name
}

// do runs one step.
func (w *walker) do(ctx context.Context, step int, action string) error {
	ns := w.r.ns
	switch action {
	case "config change":
		w.r.fault("%s step %d: config change", w.name, step)
		return suite.dcs.ChangeConfig(ctx, ns, w.name)
	case "scale":
		replicas := w.rnd.Int32N(5)
		w.r.fault("%s step %d: scale to %d", w.name, step, replicas)
		return suite.dcs.Scale(ctx, ns, w.name, replicas)
	case "cancel":
		out, errOut, err := suite.dcs.KubectlDC(ctx, ns, "rollout", "cancel", w.name)
		w.r.fault("%s step %d: kubectl dc rollout cancel: %s%s", w.name, step, oneLine(out), oneLine(errOut))
		if err != nil {
			return fmt.Errorf("kubectl dc rollout cancel: %w: %s", err, errOut)
		}
	case "retry":
		out, errOut, err := suite.dcs.KubectlDC(ctx, ns, "rollout", "retry", w.name)
		w.r.fault("%s step %d: kubectl dc rollout retry: %s%s", w.name, step, oneLine(out), oneLine(errOut))
		if err != nil && !rollout.Refused(err) {
			return fmt.Errorf("kubectl dc rollout retry: %w: %s", err, errOut)
		}
		if err == nil {
			w.countRetry(out)
		}
	case "wait":
		_, rc, err := suite.dcs.WaitLatestDone(ctx, ns, w.name, 0, rolloutTimeout)
		if err != nil {
			return err
		}
		w.r.t.Logf("%s step %d: waited: %s is %s", w.name, step, rc.Name, deployment.Phase(rc))
	}
	return nil
}

// retriedVersion finds the version in `rollout retry`'s output.
var retriedVersion = regexp.MustCompile(`retrying rollout #(\d+)`)

// countRetry records the version a successful retry restarted.
func (w *walker) countRetry(out string) {
	if m := retriedVersion.FindStringSubmatch(out); m != nil {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		w.retries[v]++
	}
}

// finish makes one more config change, which must complete, and checks the
// DeploymentConfig at rest: its latest deployment is the one of that change,
// Complete and scaled up, the others scaled down, every version appears at
// most once and had at most one deployer pod per attempt.
func (w *walker) finish(ctx context.Context) error {
	before, _, err := suite.dcs.WaitLatestDone(ctx, w.r.ns, w.name, 0, rolloutTimeout)
	if err != nil {
		return err
	}
	if err := suite.dcs.ChangeConfig(ctx, w.r.ns, w.name); err != nil {
		return err
	}
	dc, rc, err := suite.dcs.WaitLatestDone(ctx, w.r.ns, w.name, before.Status.LatestVersion+1, rolloutTimeout)
	if err != nil {
		return err
	}
	if phase := deployment.Phase(rc); phase != dcv1.DeploymentPhaseComplete {
		return fmt.Errorf("the final rollout %s ended %s: %s", rc.Name, phase, rc.Annotations[dcv1.DeploymentStatusReasonAnnotation])
	}
	if !deployment.TemplateMatches(dc, rc) {
		return fmt.Errorf("the final rollout %s does not deploy the current template", rc.Name)
	}
	if err := suite.dcs.WaitSettled(ctx, w.r.ns, w.name, rolloutTimeout); err != nil {
		return err
	}
	return w.checkHistory(ctx, dc.Status.LatestVersion)
}

// checkHistory checks the DeploymentConfig's deployments: none newer than
// latestVersion, no deployment with more deployer pods than attempts, and
// each run where the deployer mode puts it.
func (w *walker) checkHistory(ctx context.Context, latest int64) error {
	rcs, err := suite.dcs.Deployments(ctx, w.r.ns, w.name)
	if err != nil {
		return err
	}
	for _, rc := range rcs {
		v := deployment.Version(rc)
		if v > latest {
			return fmt.Errorf("%s is newer than latestVersion %d", rc.Name, latest)
		}
		if pods, attempts := w.r.tracker.deployerPods(rc.Name), 1+w.retries[v]; pods > attempts {
			return fmt.Errorf("%s had %d deployer pods for %d attempts", rc.Name, pods, attempts)
		}
		if err := w.r.checkRunner(rc); err != nil {
			return err
		}
	}
	return nil
}

// pause waits d, or until ctx ends: the time between two steps of a walk.
func pause(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hookPoints lists the points that have hooks.
func hookPoints(hooks map[string]*dcv1.LifecycleHook) []string {
	var points []string
	for p, h := range hooks {
		points = append(points, p+":"+string(h.FailurePolicy))
	}
	return points
}
