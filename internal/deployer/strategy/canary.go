package strategy

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
}

// weightCounts resolves a weight into replica counts as Argo Rollouts (>=
// 1.2) does for a canary without traffic routing. The candidates have
// desired pods in all, or one more when maxSurge allows a pod on top (one
// pod over desired is often what brings a small deployment close to the
// weight: 1 of 11 for 5%); each splits its pods at the weight rounded down
// or up. The one closest to the weight wins. Ties go to the fewer pods, then
// to the larger canary, as in Argo Rollouts. A weight strictly between 0 and
// 100 keeps a pod of each version whenever some candidate does (5 replicas
// at 20%: 1 new, 4 old; 4 replicas without surge at 30%: 1 new, 3 old).
// The total never exceeds desired+surge and is never under desired, so the
// deployment is as available at the step as at rest.
func weightCounts(desired, surge, weight int32) canaryCounts {
	if desired <= 0 {
		return canaryCounts{}
	}
	weight = min(max(weight, 0), 100)
	totals := []int64{int64(desired)}
	if surge > 0 {
		totals = append(totals, int64(desired)+1)
	}
	var best canaryCounts
	bestDelta, bestKeeps, found := int64(0), false, false
	for _, total := range totals {
		floor, ceil := total*int64(weight)/100, (total*int64(weight)+99)/100
		for _, to := range slices.Compact([]int64{ceil, floor}) {
			// |to/total - weight/100|, scaled by 100*desired*(desired+1) so
			// that candidates of both totals compare as integers.
			delta := abs64(to*100-total*int64(weight)) * (2*int64(desired) + 1 - total)
			keeps := (weight == 0 || to > 0) && (weight == 100 || to < total)
			if found && !better(delta, keeps, bestDelta, bestKeeps) {
				continue
			}
			best = canaryCounts{to: int32(to), from: int32(total - to)}
			bestDelta, bestKeeps, found = delta, keeps, true
		}
	}
	return best
}

// better reports whether a candidate beats the best so far: keeping a pod
// of each version first, then being closer to the weight. Equal ones keep
// the earlier candidate, which has fewer pods or a larger canary.
func better(delta int64, keeps bool, bestDelta int64, bestKeeps bool) bool {
	if keeps != bestKeeps {
		return keeps
	}
	return delta < bestDelta
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// canary runs the steps of a Rolling strategy between the pre hook and the
// final roll to 100%. It resumes at the step recorded on to (a restarted
// runner), goes straight to the final roll when the record says the steps
// are over, and stops early when the rollout is promoted in full. Before
// each step it takes up a new replica count of the DeploymentConfig (see
// replan); after each step it holds for a person if the background
// analysis bg was Inconclusive (hold). It returns the plan the final roll
// follows.
func (r *Rollout) canary(ctx context.Context, params *dcv1.RollingDeploymentStrategyParams, plan rollingPlan, p *pair, bg *background) (rollingPlan, error) {
	steps := params.Steps
	scale := &scaleWatch{seen: p.to.Annotations[dcv1.DesiredReplicasAnnotation]}
	start, weightStep := resumeAt(params, p.to)
	plan, err := r.replan(ctx, params, plan, scale, p)
	if err != nil {
		return plan, err
	}
	if start == len(steps) {
		r.printf("--> Resuming the final roll past step %d of %d", len(steps), len(steps))
		return plan, nil
	}
	if err := r.reapplyWeight(ctx, plan, steps, start, weightStep, p); err != nil {
		return plan, err
	}
	for i := start; i < len(steps); i++ {
		if fullPending(p.to) {
			r.printf("--> Promoted in full: skipping steps %d to %d", i+1, len(steps))
			break
		}
		if plan, err = r.replan(ctx, params, plan, scale, p); err != nil {
			return plan, err
		}
		if err := r.recordStep(ctx, p, i+1, len(steps)); err != nil {
			return plan, err
		}
		if err := r.runStep(ctx, plan, steps[i], i+1, len(steps), p); err != nil {
			return plan, err
		}
		if err := r.hold(ctx, bg, i+1, p); err != nil {
			return plan, err
		}
	}
	if err := r.enterFinalRoll(ctx, p); err != nil {
		return plan, err
	}
	return r.replan(ctx, params, plan, scale, p)
}

// enterFinalRoll records that the steps are over (consuming a full promote
// that ended them): from here a resumed runner rolls on to 100% and never
// goes back to a step.
func (r *Rollout) enterFinalRoll(ctx context.Context, p *pair) error {
	var err error
	p.to, err = r.record(ctx, p.to, func(pr *deployment.Progress) {
		pr.Stage, pr.Step, pr.Wait, pr.Analysis = deployment.StageFinalRoll, 0, nil, nil
		consumeFull(pr, p.to)
	})
	return err
}

// scaleWatch is the DeploymentConfig's replica count as the canary last
// took it up: the new deployment's desired-replicas annotation, which
// dc-controller rewrites when the DeploymentConfig is scaled during the
// rollout.
type scaleWatch struct{ seen string }

// replan re-reads the new deployment and, when its desired replicas
// changed since the canary last looked, resolves the plan for the new
// count: the next step's weight, and the final roll, count it, as Argo
// Rollouts recomputes its replica counts on a scale.
func (r *Rollout) replan(ctx context.Context, params *dcv1.RollingDeploymentStrategyParams, plan rollingPlan, scale *scaleWatch, p *pair) (rollingPlan, error) {
	fresh, err := r.scaler.Get(ctx, p.to.Name)
	if err != nil {
		return plan, err
	}
	p.to = fresh
	mark := fresh.Annotations[dcv1.DesiredReplicasAnnotation]
	desired, ok := deployment.DesiredReplicas(fresh)
	if mark == scale.seen || !ok || desired == plan.desired {
		scale.seen = mark
		return plan, nil
	}
	scale.seen = mark
	next, err := planRolling(params, desired)
	if err != nil {
		return plan, err
	}
	r.printf("--> The DeploymentConfig now has %d replicas (was %d): the next steps count %d", desired, plan.desired, desired)
	return next, nil
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

// resumeAt is where a canary of params picks up the rollout recorded on
// to (see deployment.ResumeOf): the index of the step to start at (the
// number of steps for the final roll), and the step (1-based, 0 for none)
// whose weight to bring the canary back to first.
func resumeAt(params *dcv1.RollingDeploymentStrategyParams, to *corev1.ReplicationController) (start, weightStep int) {
	res := deployment.ResumeOf(dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: params}, progressOf(to))
	switch res.From {
	case deployment.ResumeFinalRoll:
		return len(params.Steps), 0
	case deployment.ResumeAtStep:
		return res.Step - 1, res.WeightStep
	}
	return 0, 0
}

// recordStep writes the step the rollout is at on the new deployment.
func (r *Rollout) recordStep(ctx context.Context, p *pair, k, n int) error {
	if pr := progressOf(p.to); pr.Stage == deployment.StageSteps && pr.Step == k && pr.Steps == n {
		return nil
	}
	var err error
	p.to, err = r.record(ctx, p.to, func(pr *deployment.Progress) {
		pr.Stage, pr.Step, pr.Steps = deployment.StageSteps, k, n
		if pr.Wait != nil && pr.Wait.Gate != deployment.StepGate(k) {
			pr.Wait = nil
		}
	})
	return err
}

// reapplyWeight brings a resumed canary back to the weight of step
// weightStep (1-based; 0: none), the last setWeight before the step it
// resumes at: since the earlier runner stopped, the weight may have been
// undone (the fall-back of a cancel scales the new deployment to 0) or the
// replicas changed, and a pause or an analysis must not run at another
// weight than the one the steps set.
func (r *Rollout) reapplyWeight(ctx context.Context, plan rollingPlan, steps []dcv1.RollingStep, start, weightStep int, p *pair) error {
	if weightStep == 0 {
		return nil
	}
	w := *steps[weightStep-1].SetWeight
	want := weightCounts(plan.desired, plan.surge, w)
	r.printf("--> Resuming at step %d of %d: back to the weight of step %d (setWeight %d%%): scaling %s to %d and %s to %d",
		start+1, len(steps), weightStep, w, p.to.Name, want.to, p.from.Name, want.from)
	return r.moveToWeight(ctx, plan, w, p)
}

// setWeight moves the replicas to the weight's counts (moveToWeight).
func (r *Rollout) setWeight(ctx context.Context, plan rollingPlan, weight int32, k, n int, p *pair) error {
	want := weightCounts(plan.desired, plan.surge, weight)
	r.printf("--> Step %d of %d: setWeight %d%%: scaling %s to %d and %s to %d (keep %d pods available, don't exceed %d pods)",
		k, n, weight, p.to.Name, want.to, p.from.Name, want.from, plan.minAvailable, int64(plan.desired)+int64(plan.surge))
	return r.moveToWeight(ctx, plan, weight, p)
}

// moveToWeight moves the replicas to the weight's counts, a round at a
// time within maxSurge and maxUnavailable, then waits for the new
// deployment's pods to be available, and records the weight. Standing
// still for the strategy's timeout fails, as in the final roll.
func (r *Rollout) moveToWeight(ctx context.Context, plan rollingPlan, weight int32, p *pair) error {
	want := weightCounts(plan.desired, plan.surge, weight)
	deadline := r.now().Add(plan.timeout)
	for deployment.Replicas(p.to) != want.to || deployment.Replicas(p.from) != want.from {
		moved, err := r.weightRound(ctx, plan, want, p)
		if err != nil {
			return err
		}
		if moved {
			// As in the final roll, the next round plans from the report
			// the scale waited for.
			deadline = r.now().Add(plan.timeout)
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
	return r.recordWeight(ctx, p, weight)
}

// recordWeight records the weight a step reached.
func (r *Rollout) recordWeight(ctx context.Context, p *pair, weight int32) error {
	if w := progressOf(p.to).Weight; w != nil && *w == weight {
		return nil
	}
	var err error
	p.to, err = r.record(ctx, p.to, func(pr *deployment.Progress) { pr.Weight = new(weight) })
	return err
}

// weightRound scales the deployment that grows towards its count as far as
// the surge allows, then the one that shrinks as far as availability
// allows. With a rising weight the new deployment grows; with a falling
// one, the old.
func (r *Rollout) weightRound(ctx context.Context, plan rollingPlan, want canaryCounts, p *pair) (bool, error) {
	capacity := int64(plan.desired) + int64(plan.surge)
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
// only by the runner's activeDeadlineSeconds, not by the strategy's
// timeoutSeconds: waiting for a person is not a lack of progress. A resumed
// pause counts from when it first started.
func (r *Rollout) pauseStep(ctx context.Context, pause *dcv1.RolloutPause, k, n int, p *pair) error {
	gate := deployment.StepGate(k)
	if passed(p.to, gate) {
		r.printf("--> Step %d of %d: the pause is over", k, n)
		return nil
	}
	since := r.since(p.to, gate)
	var d *time.Duration
	waitCtx := ctx
	dcName := p.to.Annotations[dcv1.DeploymentConfigAnnotation]
	if pause.Duration != nil {
		d = &pause.Duration.Duration
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithDeadline(ctx, since.Add(*d))
		defer cancel()
		r.printf("--> Step %d of %d: pausing for %s (or until 'kubectl dc rollout promote %s')", k, n, *d, dcName)
	} else {
		r.printf("--> Step %d of %d: paused until 'kubectl dc rollout promote %s'", k, n, dcName)
	}
	wait := pauseWait(gate, dcv1.PauseReasonPause, since, d)
	var err error
	if p.to, err = r.record(ctx, p.to, func(pr *deployment.Progress) { pr.Wait = wait }); err != nil {
		return err
	}
	fresh, req, err := r.answered(waitCtx, p.to, gate)
	var ended *deployment.Request
	switch {
	case err == nil:
		p.to, ended = fresh, &req
		r.printf("    Promoted")
	case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		r.printf("    Pause of %s ended", pause.Duration.Duration)
	default:
		return err
	}
	p.to, err = r.endWaitFor(ctx, p.to, gate, ended)
	return err
}

// analysisStep runs the step's analysis through gate: a failed analysis
// fails the rollout, an Inconclusive one waits for a promote of step k (or
// --full), and `promote --full` skips it.
func (r *Rollout) analysisStep(ctx context.Context, a *dcv1.Analysis, k, n int, p *pair) error {
	r.printf("--> Step %d of %d: analysis", k, n)
	fresh, err := r.gate(ctx, a, p.to, fmt.Sprintf("step-%d", k), deployment.StepGate(k))
	if err != nil {
		return fmt.Errorf("step %d of %d: %w", k, n, err)
	}
	p.to = fresh
	return nil
}
