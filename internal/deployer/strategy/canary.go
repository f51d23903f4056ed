package strategy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// AnalysisRunner measures a deployment with an analysis. It returns nil when
// the analysis passed and otherwise an error whose message says why the
// rollout must not go on. label names the analysis in logs and records
// ("step-3", "prePromotion").
type AnalysisRunner interface {
	Run(ctx context.Context, a *dcv1.Analysis, rc *corev1.ReplicationController, label string) error
}

// WithAnalysis makes the rollout run analysis steps with a.
func (r *Rollout) WithAnalysis(a AnalysisRunner) *Rollout {
	r.analysis = a
	return r
}

// canaryCounts are the replica counts a setWeight step aims at.
type canaryCounts struct {
	// to and from are the new and the old deployment's replicas.
	to, from int32
	// extra is 1 when both counts were rounded up and add up to one more
	// than desired: that pod may come on top of maxSurge.
	extra int32
}

// weightCounts resolves a weight into replica counts as Argo Rollouts does
// for a canary without traffic routing: the new deployment gets
// ceil(desired*weight/100) replicas and the old one
// ceil(desired*(100-weight)/100), both rounded up, so that any weight
// strictly between 0 and 100 keeps at least one pod of each (5 replicas at
// 20%: 1 new, 4 old; 4 replicas at 30%: 2 new, 3 old, one pod over desired).
func weightCounts(desired, weight int32) canaryCounts {
	ceilPct := func(pct int32) int32 {
		return int32((int64(desired)*int64(pct) + 99) / 100)
	}
	c := canaryCounts{to: ceilPct(weight), from: ceilPct(100 - weight)}
	c.extra = max(c.to+c.from-desired, 0)
	return c
}

// canary runs the steps of a Rolling strategy between the pre hook and the
// final roll to 100%. It resumes at the step recorded on to (a restarted
// deployer), and stops early when the rollout is promoted in full.
func (r *Rollout) canary(ctx context.Context, plan rollingPlan, steps []dcv1.RollingStep, p *pair) error {
	start := resumeStep(p.to, len(steps))
	for i := start; i < len(steps); i++ {
		if promotedFull(p.to) {
			r.printf("--> Promoted in full: skipping steps %d to %d", i+1, len(steps))
			break
		}
		if err := r.recordStep(ctx, p, i+1, len(steps)); err != nil {
			return err
		}
		if err := r.runStep(ctx, plan, steps[i], i+1, len(steps), p); err != nil {
			return err
		}
	}
	var err error
	p.to, err = r.scaler.Annotate(ctx, p.to.Name, map[string]*string{dcv1.DeploymentStepAnnotation: nil})
	return err
}

// runStep runs one canary step.
func (r *Rollout) runStep(ctx context.Context, plan rollingPlan, step dcv1.RollingStep, k, n int, p *pair) error {
	switch {
	case step.SetWeight != nil:
		return r.setWeight(ctx, plan, *step.SetWeight, k, n, p)
	case step.Pause != nil:
		return r.pauseStep(ctx, step.Pause, k, n, p)
	case step.Analysis != nil:
		return r.analysisStep(ctx, step.Analysis, k, n, p)
	}
	return fmt.Errorf("step %d of %d has none of setWeight, pause or analysis", k, n)
}

// resumeStep is the index of the step to start at: the one recorded on the
// deployment by an earlier run of the deployer, or the first.
func resumeStep(to *corev1.ReplicationController, n int) int {
	total, err := strconv.Atoi(to.Annotations[dcv1.DeploymentStepsAnnotation])
	if err != nil || total != n {
		return 0
	}
	k, err := strconv.Atoi(to.Annotations[dcv1.DeploymentStepAnnotation])
	if err != nil || k < 1 || k > n {
		return 0
	}
	return k - 1
}

// promotedFull reports whether the user asked to skip every remaining step.
func promotedFull(rc *corev1.ReplicationController) bool {
	return rc.Annotations[dcv1.PromoteRequestAnnotation] == dcv1.PromoteFull
}

// promoted reports whether the user asked to end the pause of step k.
func promoted(rc *corev1.ReplicationController, k int) bool {
	v := rc.Annotations[dcv1.PromoteRequestAnnotation]
	return v == dcv1.PromoteFull || v == strconv.Itoa(k)
}

// recordStep writes the step the rollout is at on the new deployment.
func (r *Rollout) recordStep(ctx context.Context, p *pair, k, n int) error {
	if p.to.Annotations[dcv1.DeploymentStepAnnotation] == strconv.Itoa(k) && p.to.Annotations[dcv1.DeploymentStepsAnnotation] == strconv.Itoa(n) {
		return nil
	}
	step, total := strconv.Itoa(k), strconv.Itoa(n)
	var err error
	p.to, err = r.scaler.Annotate(ctx, p.to.Name, map[string]*string{
		dcv1.DeploymentStepAnnotation:  &step,
		dcv1.DeploymentStepsAnnotation: &total,
	})
	return err
}

// setWeight moves the replicas to the weight's counts, a round at a time
// within maxSurge (plus the rounding's extra pod) and maxUnavailable, then
// waits for the new deployment's pods to be available. Standing still for
// the strategy's timeout fails, as in the final roll.
func (r *Rollout) setWeight(ctx context.Context, plan rollingPlan, weight int32, k, n int, p *pair) error {
	want := weightCounts(plan.desired, weight)
	r.printf("--> Step %d of %d: setWeight %d%%: scaling %s to %d and %s to %d (keep %d pods available, don't exceed %d pods)",
		k, n, weight, p.to.Name, want.to, p.from.Name, want.from, plan.minAvailable, int64(plan.desired)+int64(plan.surge)+int64(want.extra))
	deadline := r.now().Add(plan.timeout)
	for deployment.Replicas(p.to) != want.to || deployment.Replicas(p.from) != want.from {
		moved, err := r.weightRound(ctx, plan, want, p)
		if err != nil {
			return err
		}
		if moved {
			deadline = r.now().Add(plan.timeout)
			if err := r.pauseSince(ctx, p, plan.interval); err != nil {
				return err
			}
			continue
		}
		if !r.now().Before(deadline) {
			return errNoProgress
		}
		growing := p.to
		if deployment.Replicas(p.to) > want.to {
			growing = p.from
		}
		available := growing.Status.AvailableReplicas
		fresh, err := r.scaler.WaitAvailableChange(ctx, growing.Name, available, deadline)
		if err != nil {
			return err
		}
		if fresh.Status.AvailableReplicas != available {
			deadline = r.now().Add(plan.timeout)
		}
		if growing == p.to {
			p.to = fresh
		} else {
			p.from = fresh
		}
	}
	var err error
	if p.to, err = r.accept(ctx, p.to, plan.timeout); err != nil {
		return err
	}
	w := strconv.Itoa(int(weight))
	p.to, err = r.scaler.Annotate(ctx, p.to.Name, map[string]*string{dcv1.DeploymentWeightAnnotation: &w})
	return err
}

// weightRound scales the deployment that grows towards its count as far as
// the surge allows, then the one that shrinks as far as availability
// allows. With a rising weight the new deployment grows; with a falling
// one, the old.
func (r *Rollout) weightRound(ctx context.Context, plan rollingPlan, want canaryCounts, p *pair) (bool, error) {
	capacity := int64(plan.desired) + int64(plan.surge) + int64(want.extra)
	rising := deployment.Replicas(p.to) < want.to || deployment.Replicas(p.from) > want.from
	grow, growTarget, shrink, shrinkTarget := &p.to, want.to, &p.from, want.from
	if !rising {
		grow, growTarget, shrink, shrinkTarget = &p.from, want.from, &p.to, want.to
	}
	up := false
	if cur := deployment.Replicas(*grow); cur < growTarget {
		room := capacity - int64(deployment.Replicas(*shrink)) - int64(cur)
		if next := int32(min(int64(growTarget), int64(cur)+max(room, 0))); next != cur {
			r.printf("    Scaling %s up to %d", (*grow).Name, next)
			p.since = r.now()
			scaled, err := r.stepTo(ctx, *grow, next, growTarget, plan.timeout)
			if err != nil {
				return false, err
			}
			*grow, up = scaled, true
			if err := r.pauseSince(ctx, p, plan.updatePeriod); err != nil {
				return up, err
			}
		}
	}
	fresh, err := r.scaler.Get(ctx, (*grow).Name)
	if err != nil {
		return up, err
	}
	*grow = fresh
	cur := deployment.Replicas(*shrink)
	if cur <= shrinkTarget {
		return up, nil
	}
	growAvailable := min(fresh.Status.AvailableReplicas, deployment.Replicas(fresh))
	next := max(shrinkTarget, cur-max(cur+growAvailable-plan.minAvailable, 0))
	if next == cur {
		return up, nil
	}
	r.printf("    Scaling %s down to %d", (*shrink).Name, next)
	p.since = r.now()
	scaled, err := r.stepTo(ctx, *shrink, next, shrinkTarget, plan.timeout)
	if err != nil {
		return up, err
	}
	*shrink = scaled
	return true, nil
}

// pauseStep waits for the pause's duration or, without one, until the step
// is promoted; a promote ends a timed pause early too. The wait is bounded
// only by the deployer pod's activeDeadlineSeconds, not by the strategy's
// timeoutSeconds: waiting for a person is not a lack of progress.
func (r *Rollout) pauseStep(ctx context.Context, pause *dcv1.RolloutPause, k, n int, p *pair) error {
	since := r.now()
	if t, err := time.Parse(time.RFC3339, p.to.Annotations[dcv1.DeploymentPausedSinceAnnotation]); err == nil && resumeStep(p.to, n) == k-1 {
		since = t
	}
	values := map[string]*string{dcv1.DeploymentPausedSinceAnnotation: new(since.UTC().Format(time.RFC3339))}
	waitCtx := ctx
	dcName := p.to.Annotations[dcv1.DeploymentConfigAnnotation]
	if pause.Duration != nil {
		d := pause.Duration.Duration
		values[dcv1.DeploymentPauseDurationAnnotation] = new(d.String())
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithDeadline(ctx, since.Add(d))
		defer cancel()
		r.printf("--> Step %d of %d: pausing for %s (or until 'kubectl dc rollout promote %s')", k, n, d, dcName)
	} else {
		r.printf("--> Step %d of %d: paused until 'kubectl dc rollout promote %s'", k, n, dcName)
	}
	var err error
	if p.to, err = r.scaler.Annotate(ctx, p.to.Name, values); err != nil {
		return err
	}
	fresh, err := r.scaler.WaitFor(waitCtx, p.to.Name, func(rc *corev1.ReplicationController) bool { return promoted(rc, k) })
	switch {
	case err == nil:
		p.to = fresh
		r.printf("    Promoted")
	case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		r.printf("    Pause of %s ended", pause.Duration.Duration)
	default:
		return err
	}
	p.to, err = r.scaler.Annotate(ctx, p.to.Name, map[string]*string{
		dcv1.DeploymentPausedSinceAnnotation:   nil,
		dcv1.DeploymentPauseDurationAnnotation: nil,
	})
	return err
}

// analysisStep runs the step's analysis; a failed analysis fails the
// rollout.
func (r *Rollout) analysisStep(ctx context.Context, a *dcv1.Analysis, k, n int, p *pair) error {
	r.printf("--> Step %d of %d: analysis", k, n)
	if r.analysis == nil {
		return fmt.Errorf("step %d of %d: this deployer cannot run analysis steps", k, n)
	}
	if err := r.analysis.Run(ctx, a, p.to, fmt.Sprintf("step-%d", k)); err != nil {
		return fmt.Errorf("step %d of %d: %w", k, n, err)
	}
	fresh, err := r.scaler.Get(ctx, p.to.Name)
	if err != nil {
		return err
	}
	p.to = fresh
	return nil
}
