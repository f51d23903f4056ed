package strategy

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployer/hook"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// errNoProgress is the failure of a rolling update that stood still for the
// whole timeout. The wording is the one OpenShift users know.
var errNoProgress = errors.New("timed out waiting for any update progress to be made")

// rollingPlan is a rolling update's resolved parameters.
type rollingPlan struct {
	desired      int32
	surge        int32
	minAvailable int32
	updatePeriod time.Duration
	timeout      time.Duration
}

// Rolling rolls out to, replacing from (the last complete deployment, nil on
// the first rollout, which then goes as Recreate without a mid hook): pre
// hook, then alternately to scaled up (at most desired+maxSurge pods in all)
// and from scaled down (at least desired-maxUnavailable available), until to
// has every replica available and from has none, then the post hook. With
// steps, a canary (canary.go) runs them between the pre hook and that, with
// the background analysis, if any, beside them (background.go). The
// parameters come with the API's defaults applied (deployment.DecodeConfig
// applies them).
func (r *Rollout) Rolling(ctx context.Context, params *dcv1.RollingDeploymentStrategyParams,
	from, to *corev1.ReplicationController, desired int32) (Outcome, error) {
	if params == nil {
		params = &dcv1.RollingDeploymentStrategyParams{}
	}
	timeout := seconds(params.TimeoutSeconds, dcv1.DefaultTimeoutSeconds)
	if from == nil {
		if err := r.firstTraffic(ctx, params.TrafficRouting, to); err != nil {
			return Completed, err
		}
		return r.recreate(ctx, recreatePlan{pre: params.Pre, post: params.Post, timeout: timeout}, nil, to, desired)
	}
	plan, err := planRolling(params, desired)
	if err != nil {
		return Completed, err
	}
	if err := r.runHook(ctx, params.Pre, to, hook.Pre); err != nil {
		return Completed, err
	}
	// A rolling update has no mid point; mid stops where pre does.
	if r.until.Is(UntilPre) || r.until.Is(UntilMid) || r.until.percentBetween(0, 0) {
		return r.stop()
	}
	if from, to, err = r.settle(ctx, from, to, plan.timeout); err != nil {
		return Completed, err
	}
	outcome, to, err := r.progress(ctx, params, plan, from, to)
	if err != nil || outcome == Stopped {
		return outcome, err
	}
	if to, err = r.accept(ctx, to, timeout); err != nil {
		return Completed, err
	}
	if r.until.percentBetween(1, 100) {
		return r.stop()
	}
	if err := r.runHook(ctx, params.Post, to, hook.Post); err != nil {
		return Completed, err
	}
	return Completed, nil
}

// progress runs the canary steps, if any, and the final roll to 100%, with
// the background analysis (rollingParams.analysis) measuring beside them;
// a failed background analysis ends them at once and is the error.
func (r *Rollout) progress(ctx context.Context, params *dcv1.RollingDeploymentStrategyParams, plan rollingPlan,
	from, to *corev1.ReplicationController) (Outcome, *corev1.ReplicationController, error) {
	if params.TrafficRouting != nil {
		return r.trafficProgress(ctx, params, plan, from, to)
	}
	if len(params.Steps) == 0 {
		return r.roll(ctx, plan, from, to)
	}
	bg := r.startBackground(ctx, params.Analysis, to)
	p := &pair{from: from, to: to}
	plan, err := r.canary(bg.ctx, params, plan, p, bg)
	if err != nil {
		return Completed, p.to, bg.stop(err)
	}
	outcome, to, err := r.roll(bg.ctx, plan, p.from, p.to)
	return outcome, to, bg.stop(err)
}

// settle waits until the RC manager has acted on both deployments' last
// scale, so that the surge and availability bounds count the pods that
// run. Only a resumed or retried rollout finds one not yet acted on.
func (r *Rollout) settle(ctx context.Context, from, to *corev1.ReplicationController, timeout time.Duration) (*corev1.ReplicationController, *corev1.ReplicationController, error) {
	from, err := r.scaler.Settle(ctx, from, timeout)
	if err != nil {
		return from, to, err
	}
	to, err = r.scaler.Settle(ctx, to, timeout)
	return from, to, err
}

// planRolling resolves the rolling parameters for desired replicas.
func planRolling(p *dcv1.RollingDeploymentStrategyParams, desired int32) (rollingPlan, error) {
	surge, unavailable, err := Fenceposts(p.MaxSurge, p.MaxUnavailable, desired)
	if err != nil {
		return rollingPlan{}, err
	}
	return rollingPlan{
		desired:      desired,
		surge:        surge,
		minAvailable: minAvailable(desired, unavailable),
		updatePeriod: seconds(p.UpdatePeriodSeconds, dcv1.DefaultUpdatePeriodSeconds),
		timeout:      seconds(p.TimeoutSeconds, dcv1.DefaultTimeoutSeconds),
	}, nil
}

// pair is the two deployments of a rolling update as last seen.
type pair struct {
	from, to *corev1.ReplicationController
	// since is when the next pause (updatePeriodSeconds after a scale-up)
	// starts counting: the last scale write, or the end of the pause
	// before. The wait for the RC manager to report a scale then runs
	// inside the pause rather than before it.
	since time.Time
}

// rolledOver reports whether to has all the replicas and from none.
func (p *pair) rolledOver(desired int32) bool {
	return deployment.Replicas(p.to) == desired && deployment.Replicas(p.from) == 0
}

// roll alternates scale-ups of to and scale-downs of from until to has the
// desired replicas and from none. When neither can move it waits for to's
// availability to change; standing still for the whole timeout fails.
func (r *Rollout) roll(ctx context.Context, plan rollingPlan, from, to *corev1.ReplicationController) (Outcome, *corev1.ReplicationController, error) {
	r.printf("--> Scaling up %s from %d to %d, scaling down %s from %d to 0 (keep %d pods available, don't exceed %d pods)",
		to.Name, deployment.Replicas(to), plan.desired, from.Name, deployment.Replicas(from), plan.minAvailable, int64(plan.desired)+int64(plan.surge))
	p := &pair{from: from, to: to}
	deadline := r.now().Add(plan.timeout)
	for !p.rolledOver(plan.desired) {
		moved, outcome, err := r.step(ctx, plan, p)
		if err != nil || outcome == Stopped {
			return outcome, p.to, err
		}
		if moved {
			// The next round plans from the RC manager's report that the
			// scale waited for: intervalSeconds is how often OpenShift
			// polls for that report, and a watch has it as it comes.
			deadline = r.now().Add(plan.timeout)
			continue
		}
		if !r.now().Before(deadline) {
			return Completed, p.to, errNoProgress
		}
		available := p.to.Status.AvailableReplicas
		if p.to, err = r.scaler.WaitAvailableChange(ctx, p.to.Name, available, deadline); err != nil {
			return Completed, p.to, err
		}
		if p.to.Status.AvailableReplicas != available {
			// Pods becoming available (or not) is progress too.
			deadline = r.now().Add(plan.timeout)
		}
	}
	return Completed, p.to, nil
}

// step is one round: scale to up as far as allowed, then scale from down as
// far as allowed. It reports whether anything moved.
func (r *Rollout) step(ctx context.Context, plan rollingPlan, p *pair) (bool, Outcome, error) {
	up, outcome, err := r.stepUp(ctx, plan, p)
	if err != nil || outcome == Stopped {
		return up, outcome, err
	}
	down, err := r.stepDown(ctx, plan, p)
	return up || down, Completed, err
}

// stepUp scales to up as far as the surge allows, and stops there when that
// reaches the --until percentage.
func (r *Rollout) stepUp(ctx context.Context, plan rollingPlan, p *pair) (bool, Outcome, error) {
	current := deployment.Replicas(p.to)
	next := scaleUpTarget(plan.desired, plan.surge, deployment.Replicas(p.from), current)
	if next == current {
		return false, Completed, nil
	}
	r.printf("    Scaling %s up to %d", p.to.Name, next)
	p.since = r.now()
	scaled, err := r.stepTo(ctx, p.to, next, plan.desired, plan.timeout)
	if err != nil {
		return false, Completed, err
	}
	p.to = scaled
	if pct, ok := r.until.Percent(); ok && r.until.percentBetween(1, 99) && percentOf(next, plan.desired) >= pct {
		outcome, err := r.stop()
		return true, outcome, err
	}
	// Give the new pods a moment before judging their availability.
	return true, Completed, r.pauseSince(ctx, p, plan.updatePeriod)
}

// stepDown scales from down as far as availability allows, judged on a
// fresh read of to's available pods.
func (r *Rollout) stepDown(ctx context.Context, plan rollingPlan, p *pair) (bool, error) {
	fresh, err := r.scaler.Get(ctx, p.to.Name)
	if err != nil {
		return false, err
	}
	p.to = fresh
	current := deployment.Replicas(p.from)
	next := scaleDownTarget(plan.desired, plan.minAvailable, current, deployment.Replicas(fresh), fresh.Status.AvailableReplicas)
	if next == current {
		return false, nil
	}
	r.printf("    Scaling %s down to %d", p.from.Name, next)
	p.since = r.now()
	scaled, err := r.stepTo(ctx, p.from, next, 0, plan.timeout)
	if err != nil {
		return false, err
	}
	p.from = scaled
	return true, nil
}
