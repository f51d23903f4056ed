package strategy

import (
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/trafficrouting"
)

// Routes moves the Gateway API routes of a canary with trafficRouting;
// trafficrouting.Router is the real one.
type Routes interface {
	// Check returns an error unless every route exists, has a rule to
	// manage and was Accepted by a Gateway.
	Check(ctx context.Context) error
	// Set moves every route to s and reports whether it wrote any.
	Set(ctx context.Context, s trafficrouting.State) (bool, error)
}

// WithRoutes makes the rollout route traffic with the Routes newRoutes
// returns for a DeploymentConfig's trafficRouting.
func (r *Rollout) WithRoutes(newRoutes func(*dcv1.TrafficRouting) Routes) *Rollout {
	r.newRoutes = newRoutes
	return r
}

// traffic is a traffic-routed canary in progress: what its routes say and
// how its new deployment is sized.
type traffic struct {
	params *dcv1.TrafficRouting
	routes Routes
	state  trafficrouting.State
	// scale is the setCanaryScale in force; nil sizes the canary by the
	// weight.
	scale *dcv1.SetCanaryScale
}

// canaryReplicas is the new deployment's size for the state and scale:
// the weight's (or setCanaryScale's) share of desired, rounded up, at most
// desired. A header route keeps at least one pod to send its requests to.
func (t *traffic) canaryReplicas(desired int32) int32 {
	share := func(pct int32) int32 { return int32((int64(desired)*int64(pct) + 99) / 100) }
	n := share(t.state.Weight)
	switch {
	case t.scale == nil:
	case t.scale.Replicas != nil:
		n = *t.scale.Replicas
	case t.scale.Weight != nil:
		n = share(*t.scale.Weight)
	}
	if len(t.state.Headers) > 0 {
		n = max(n, 1)
	}
	return min(max(n, 0), desired)
}

// apply takes up a step's effect on the routes and the canary's size. It
// reports whether the step was one of traffic.
func (t *traffic) apply(step dcv1.RollingStep) bool {
	switch {
	case step.SetWeight != nil:
		t.state.Weight = *step.SetWeight
	case step.SetCanaryScale != nil:
		t.scale = step.SetCanaryScale
		if t.scale.MatchTrafficWeight {
			t.scale = nil
		}
	case step.SetHeaderRoute != nil:
		h := step.SetHeaderRoute
		headers := maps.Clone(t.state.Headers)
		if headers == nil {
			headers = map[string][]dcv1.HeaderRoutingMatch{}
		}
		delete(headers, h.Name)
		if len(h.Match) > 0 {
			headers[h.Name] = h.Match
		}
		t.state.Headers = headers
	default:
		return false
	}
	return true
}

// trafficProgress runs a canary whose weights are the routes' (see
// trafficrouting): the stable Service stays on from and carries the
// stable share, the canary Service selects to; each setWeight,
// setCanaryScale or setHeaderRoute sizes to first and then moves the
// routes (or the reverse when the canary shrinks), so that requests only
// go to pods that are there. After the steps to comes up at full size,
// takes every request, becomes the stable Service's deployment (recorded
// as switched "final": from here on to is live), and from scales down.
//
// Any other end puts the routes back at 100% stable and the canary
// Service on from before returning; dc-controller does the same whenever
// no rollout runs, so a dead deployer leaves no traffic on the canary.
func (r *Rollout) trafficProgress(ctx context.Context, params *dcv1.RollingDeploymentStrategyParams, plan rollingPlan,
	from, to *corev1.ReplicationController) (Outcome, *corev1.ReplicationController, error) {
	t, err := r.startTraffic(ctx, params.TrafficRouting)
	if err != nil {
		return Completed, to, err
	}
	p := &pair{from: from, to: to}
	progress, err := deployment.ReadProgress(to)
	if err != nil {
		return Completed, to, err
	}
	resume := deployment.ResumeOf(dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: params}, progress)
	if resume.From == deployment.ResumeSwitched {
		r.printf("--> %s already takes the stable Service's requests: finishing", to.Name)
		if err := r.finishTraffic(ctx, t, plan, p); err != nil {
			return Completed, p.to, err
		}
		// The DeploymentConfig may have been scaled while no runner ran:
		// the old deployment is gone, so the new one grows to the count
		// within the surge.
		if deployment.Replicas(p.to) != plan.desired {
			r.printf("--> Scaling %s to %d", p.to.Name, plan.desired)
			p.to, err = r.scaleTo(ctx, p.to, plan.desired, plan.timeout)
		}
		return Completed, p.to, err
	}
	if err := r.selectDeployment(ctx, t.params.StableService, from); err != nil {
		return Completed, to, err
	}
	if err := r.selectDeployment(ctx, t.params.CanaryService, to); err != nil {
		return Completed, to, err
	}
	if err := r.trafficSteps(ctx, params, plan, t, p); err != nil {
		if !r.handedOver(ctx, p.to) {
			r.restoreTraffic(ctx, t, p)
		}
		return Completed, p.to, err
	}
	return Completed, p.to, r.finishTraffic(ctx, t, plan, p)
}

// startTraffic checks what a traffic-routed rollout needs before anything
// moves: the two Services and the routes, Accepted by a Gateway.
func (r *Rollout) startTraffic(ctx context.Context, tr *dcv1.TrafficRouting) (*traffic, error) {
	if r.newRoutes == nil || r.services == nil {
		return nil, errors.New("this deployer cannot route traffic (it has no client for Services and Gateway API routes)")
	}
	for field, name := range map[string]string{"stableService": tr.StableService, "canaryService": tr.CanaryService} {
		if _, err := r.services.Get(ctx, name, metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("strategy.rollingParams.trafficRouting.%s: service %q does not exist", field, name)
			}
			return nil, fmt.Errorf("strategy.rollingParams.trafficRouting.%s: get service %q: %w", field, name, err)
		}
	}
	routes := r.newRoutes(tr)
	if err := routes.Check(ctx); err != nil {
		return nil, fmt.Errorf("strategy.rollingParams.trafficRouting: %w", err)
	}
	return &traffic{params: tr, routes: routes}, nil
}

// trafficSteps runs the steps, with the background analysis beside them
// and the new deployment's scale-up to full size, from the step recorded on
// to (a restarted deployer first restores the traffic of the steps before).
func (r *Rollout) trafficSteps(ctx context.Context, params *dcv1.RollingDeploymentStrategyParams, plan rollingPlan, t *traffic, p *pair) error {
	steps := params.Steps
	start, _ := resumeAt(params, p.to)
	for _, s := range steps[:start] {
		t.apply(s)
	}
	if err := r.resumeTraffic(ctx, plan, t, p, start, len(steps)); err != nil {
		return err
	}
	bg := r.startBackground(ctx, params.Analysis, p.to)
	scale := &scaleWatch{seen: p.to.Annotations[dcv1.DesiredReplicasAnnotation]}
	err := r.runTrafficSteps(bg.ctx, params, plan, t, p, bg, scale, start)
	if err == nil {
		err = r.fullSize(bg.ctx, params, plan, scale, p)
	}
	return bg.stop(err)
}

// resumeTraffic brings the routes and the canary's size back to where the
// steps before start left them. A rollout resumed in its final roll keeps
// its pods (it grows from there to full size) and only gets the routes of
// the last step back.
func (r *Rollout) resumeTraffic(ctx context.Context, plan rollingPlan, t *traffic, p *pair, start, n int) error {
	if start == n {
		r.printf("--> Resuming the final roll past step %d of %d: routes at %s", n, n, t.state)
		_, err := t.routes.Set(ctx, t.state)
		return err
	}
	if start == 0 && deployment.Replicas(p.to) == 0 {
		return r.moveTraffic(ctx, plan, t, p)
	}
	r.printf("--> Resuming at step %d of %d: back to %s", start+1, n, t.state)
	if t.canaryReplicas(plan.desired) < deployment.Replicas(p.to) {
		// The canary keeps the pods it reached; the next step sizes it.
		_, err := t.routes.Set(ctx, t.state)
		return err
	}
	return r.moveTraffic(ctx, plan, t, p)
}

// runTrafficSteps runs steps start onwards, taking up a new replica
// count of the DeploymentConfig before each.
func (r *Rollout) runTrafficSteps(ctx context.Context, params *dcv1.RollingDeploymentStrategyParams, plan rollingPlan,
	t *traffic, p *pair, bg *background, scale *scaleWatch, start int) error {
	steps := params.Steps
	for i := start; i < len(steps); i++ {
		if fullPending(p.to) {
			r.printf("--> Promoted in full: skipping steps %d to %d", i+1, len(steps))
			break
		}
		next, err := r.replan(ctx, params, plan, scale, p)
		if err != nil {
			return err
		}
		if next.desired != plan.desired {
			plan = next
			if err := r.moveTraffic(ctx, plan, t, p); err != nil {
				return err
			}
		}
		if err := r.recordStep(ctx, p, i+1, len(steps)); err != nil {
			return err
		}
		if err := r.runTrafficStep(ctx, plan, t, steps[i], i+1, len(steps), p); err != nil {
			return err
		}
		if err := r.hold(ctx, bg, i+1, p); err != nil {
			return err
		}
	}
	return r.enterFinalRoll(ctx, p)
}

// runTrafficStep runs one step of a traffic-routed canary.
func (r *Rollout) runTrafficStep(ctx context.Context, plan rollingPlan, t *traffic, step dcv1.RollingStep, k, n int, p *pair) error {
	switch {
	case step.Pause != nil:
		return r.pauseStep(ctx, step.Pause, k, n, p)
	case step.Analysis != nil:
		return r.analysisStep(ctx, step.Analysis, k, n, p)
	}
	if !t.apply(step) {
		return fmt.Errorf("step %d of %d has none of setWeight, pause, analysis, setCanaryScale or setHeaderRoute", k, n)
	}
	r.printf("--> Step %d of %d: %s: %s at %d pods, routes at %s", k, n, describeStep(step), p.to.Name, t.canaryReplicas(plan.desired), t.state)
	if err := r.moveTraffic(ctx, plan, t, p); err != nil {
		return fmt.Errorf("step %d of %d: %w", k, n, err)
	}
	return nil
}

// describeStep names a traffic step for the log.
func describeStep(step dcv1.RollingStep) string {
	switch {
	case step.SetWeight != nil:
		return fmt.Sprintf("setWeight %d%%", *step.SetWeight)
	case step.SetCanaryScale != nil:
		return step.SetCanaryScale.String()
	case step.SetHeaderRoute != nil:
		return step.SetHeaderRoute.String()
	}
	return "step"
}

// moveTraffic sizes the new deployment for t and sets the routes to t's
// state. A growing canary gets its pods (available) before the requests;
// a shrinking one loses the requests before its pods. The weight is
// recorded on the deployment.
func (r *Rollout) moveTraffic(ctx context.Context, plan rollingPlan, t *traffic, p *pair) error {
	want := t.canaryReplicas(plan.desired)
	if want == 0 && !t.state.IsRest() {
		r.printf("--> Warning: the routes send %s to %s, which is scaled to 0 pods", t.state, p.to.Name)
	}
	if want >= deployment.Replicas(p.to) {
		if err := r.sizeCanary(ctx, plan, want, p); err != nil {
			return err
		}
	}
	wrote, err := t.routes.Set(ctx, t.state)
	if err != nil {
		return err
	}
	if wrote {
		r.printf("    Routes now send %s", t.state)
	}
	if want < deployment.Replicas(p.to) {
		if err := r.sizeCanary(ctx, plan, want, p); err != nil {
			return err
		}
	}
	return r.recordWeight(ctx, p, t.state.Weight)
}

// sizeCanary scales the new deployment to n and waits for its pods.
func (r *Rollout) sizeCanary(ctx context.Context, plan rollingPlan, n int32, p *pair) error {
	if deployment.Replicas(p.to) != n {
		r.printf("    Scaling %s to %d", p.to.Name, n)
		scaled, err := r.stepTo(ctx, p.to, n, plan.desired, plan.timeout)
		if err != nil {
			return err
		}
		p.to = scaled
	}
	fresh, err := r.accept(ctx, p.to, plan.timeout)
	if err != nil {
		return err
	}
	p.to = fresh
	return nil
}

// fullSize brings the new deployment to the DeploymentConfig's replicas,
// as they are now, before it takes every request.
func (r *Rollout) fullSize(ctx context.Context, params *dcv1.RollingDeploymentStrategyParams, plan rollingPlan, scale *scaleWatch, p *pair) error {
	plan, err := r.replan(ctx, params, plan, scale, p)
	if err != nil {
		return err
	}
	r.printf("--> Scaling %s up to %d before it takes every request", p.to.Name, plan.desired)
	return r.sizeCanary(ctx, plan, plan.desired, p)
}

// finishTraffic makes the new deployment the stable one: every request to
// it, the switch recorded (from here on the fall-back keeps it), the
// stable Service on it, the routes back at rest (which now means it), and
// the old deployment scaled down.
func (r *Rollout) finishTraffic(ctx context.Context, t *traffic, plan rollingPlan, p *pair) error {
	all := trafficrouting.State{Weight: 100}
	if _, err := t.routes.Set(ctx, all); err != nil {
		return err
	}
	r.printf("--> Routes send %s: %s takes every request", all, p.to.Name)
	var err error
	if p.to, err = r.markSwitched(ctx, p.to, dcv1.SwitchedFinal); err != nil {
		return err
	}
	if err := r.selectDeployment(ctx, t.params.StableService, p.to); err != nil {
		return err
	}
	if _, err := t.routes.Set(ctx, trafficrouting.Rest); err != nil {
		return err
	}
	r.printf("--> Routes back at %s, which is now %s", trafficrouting.Rest, p.to.Name)
	if p.to, err = r.accept(ctx, p.to, plan.timeout); err != nil {
		return err
	}
	return r.scaleDownOld(ctx, p.from, plan.timeout)
}

// restoreTraffic puts the routes back at 100% stable and the canary
// Service back on from after a rollout that did not finish. A cancel ends
// the deployer's context: the restore gets its own, within the deployer
// pod's termination grace period. The new deployment's pods are the
// fall-back's to scale away (dc-controller), once no request goes to them.
func (r *Rollout) restoreTraffic(ctx context.Context, t *traffic, p *pair) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	r.printf("--> The rollout did not finish: routes back to %s", trafficrouting.Rest)
	if _, err := t.routes.Set(ctx, trafficrouting.Rest); err != nil {
		r.printf("--> Warning: %v", err)
	}
	if err := r.selectDeployment(ctx, t.params.CanaryService, p.from); err != nil {
		r.printf("--> Warning: could not point service %s back at %s: %v", t.params.CanaryService, p.from.Name, err)
	}
}

// firstTraffic prepares the first rollout of a DeploymentConfig with
// trafficRouting (there is nothing to replace): the routes are checked and
// left at rest, and both Services select the new deployment, which takes
// every request once its pods are ready.
func (r *Rollout) firstTraffic(ctx context.Context, tr *dcv1.TrafficRouting, to *corev1.ReplicationController) error {
	if tr == nil {
		return nil
	}
	t, err := r.startTraffic(ctx, tr)
	if err != nil {
		return err
	}
	if _, err := t.routes.Set(ctx, trafficrouting.Rest); err != nil {
		return err
	}
	for _, service := range []string{tr.StableService, tr.CanaryService} {
		if err := r.selectDeployment(ctx, service, to); err != nil {
			return err
		}
	}
	return nil
}
