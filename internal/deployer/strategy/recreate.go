package strategy

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployer/hook"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// recreatePlan is a Recreate rollout: its hooks and its timeout. A Rolling
// strategy's first rollout is one too, without a mid hook.
type recreatePlan struct {
	pre, mid, post *dcv1.LifecycleHook
	timeout        time.Duration
}

// Recreate rolls out to, the deployment being deployed, replacing from (the
// last complete deployment, nil on the first rollout): pre hook, from scaled
// to zero and its pods gone, mid hook, to scaled up (to one pod first, when
// there was a from, so a broken version fails on one pod) until all its pods
// are available, post hook.
func (r *Rollout) Recreate(ctx context.Context, params *dcv1.RecreateDeploymentStrategyParams,
	from, to *corev1.ReplicationController, desired int32) (Outcome, error) {
	if params == nil {
		params = &dcv1.RecreateDeploymentStrategyParams{}
	}
	plan := recreatePlan{
		pre:     params.Pre,
		mid:     params.Mid,
		post:    params.Post,
		timeout: seconds(params.TimeoutSeconds, dcv1.DefaultTimeoutSeconds),
	}
	return r.recreate(ctx, plan, from, to, desired)
}

func (r *Rollout) recreate(ctx context.Context, plan recreatePlan, from, to *corev1.ReplicationController, desired int32) (Outcome, error) {
	if err := r.runHook(ctx, plan.pre, to, hook.Pre); err != nil {
		return Completed, err
	}
	if r.until.Is(UntilPre) {
		return r.stop()
	}
	if from != nil {
		if err := r.scaleDownOld(ctx, from, plan.timeout); err != nil {
			return Completed, err
		}
	}
	if r.until.percentBetween(0, 0) {
		return r.stop()
	}
	if err := r.runHook(ctx, plan.mid, to, hook.Mid); err != nil {
		return Completed, err
	}
	if r.until.Is(UntilMid) {
		return r.stop()
	}
	outcome, to, err := r.scaleUpNew(ctx, plan, from != nil, to, desired)
	if err != nil || outcome == Stopped {
		return outcome, err
	}
	if r.until.percentBetween(1, 100) {
		return r.stop()
	}
	if err := r.runHook(ctx, plan.post, to, hook.Post); err != nil {
		return Completed, err
	}
	return Completed, nil
}

// scaleUpNew brings to up to desired, all pods available. After a previous
// deployment it first tries a single pod, and stops there for an --until
// between 1% and 99%.
func (r *Rollout) scaleUpNew(ctx context.Context, plan recreatePlan, hadFrom bool,
	to *corev1.ReplicationController, desired int32) (Outcome, *corev1.ReplicationController, error) {
	var err error
	if hadFrom && desired > 0 && deployment.Replicas(to) == 0 {
		r.printf("--> Scaling %s to 1", to.Name)
		if to, err = r.stepTo(ctx, to, 1, desired, plan.timeout); err != nil {
			return Completed, to, err
		}
		if to, err = r.accept(ctx, to, plan.timeout); err != nil {
			return Completed, to, err
		}
		if r.until.percentBetween(1, 99) {
			outcome, err := r.stop()
			return outcome, to, err
		}
	}
	if deployment.Replicas(to) != desired {
		r.printf("--> Scaling %s to %d", to.Name, desired)
		if to, err = r.scaleTo(ctx, to, desired, plan.timeout); err != nil {
			return Completed, to, err
		}
	}
	to, err = r.accept(ctx, to, plan.timeout)
	return Completed, to, err
}
