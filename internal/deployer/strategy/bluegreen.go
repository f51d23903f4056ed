package strategy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// restoreTimeout bounds the switch of the active Service back to the old
// deployment when a postPromotionAnalysis fails or is cancelled (a cancel
// stops the deployer: its own context is over by then). It is well within
// the deployer pod's 10 second termination grace period.
const restoreTimeout = 5 * time.Second

// WithServices makes the rollout point Services (the BlueGreen strategy's
// active and preview Services) with s.
func (r *Rollout) WithServices(s corev1client.ServiceInterface) *Rollout {
	r.services = s
	return r
}

// BlueGreen rolls out to beside from (the live deployment, nil on the
// first rollout): the active Service is pinned to from, to comes up at full
// size, the preview Service selects it, the prePromotionAnalysis runs, and
// once promoted (by `kubectl dc rollout promote` or after
// autoPromotionSeconds) the active Service switches to it; from scales down
// scaleDownDelaySeconds later. A failed prePromotionAnalysis switches
// nothing and scales to away. Services select a deployment by its
// ReplicationController's selector: the DeploymentConfig's selector plus
// the `deployment` label its pods carry.
//
// The switch is recorded on to (DeploymentSwitchedAnnotation) before the
// active Service moves: "trial" while a postPromotionAnalysis may still
// switch back to from, "final" once nothing will. From "final" on, to is
// the live deployment (deployment.Live): a rollout that fails afterwards
// (a newer version arriving during scaleDownDelaySeconds) leaves the active
// Service on it, and the fall-back and the next rollout build on it.
func (r *Rollout) BlueGreen(ctx context.Context, params *dcv1.BlueGreenDeploymentStrategyParams,
	from, to *corev1.ReplicationController, desired int32) (Outcome, error) {
	if params == nil {
		return Completed, errors.New("strategy.blueGreenParams is required with the BlueGreen strategy")
	}
	if r.services == nil {
		return Completed, errors.New("this deployer cannot switch Services")
	}
	if err := r.checkServices(ctx, params); err != nil {
		return Completed, err
	}
	timeout := seconds(params.TimeoutSeconds, dcv1.DefaultTimeoutSeconds)
	if from == nil {
		return Completed, r.firstBlueGreen(ctx, params, to, desired, timeout)
	}
	progress, err := deployment.ReadProgress(to)
	if err != nil {
		return Completed, err
	}
	switch deployment.ResumeOf(dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen, BlueGreenParams: params}, progress).From {
	case deployment.ResumeSwitched:
		// A deployment the active Service was switched to for good (a
		// retried or resumed one) is live: it never goes back to from.
		return Completed, r.resumeSwitched(ctx, params, from, to, desired, timeout)
	case deployment.ResumeOnTrial:
		// An earlier runner of this attempt switched on trial and stopped
		// during the postPromotionAnalysis: the new deployment keeps
		// serving while the analysis runs again.
		r.printf("--> %s serves on trial: resuming its postPromotionAnalysis", to.Name)
		if deployment.Replicas(to) != desired {
			// The DeploymentConfig was scaled while no runner ran.
			r.printf("--> Scaling %s to %d", to.Name, desired)
			if to, err = r.scaleTo(ctx, to, desired, timeout); err != nil {
				return Completed, err
			}
		}
		if err := r.selectDeployment(ctx, params.ActiveService, to); err != nil {
			return Completed, err
		}
		if _, err := r.trial(ctx, params, from, to, timeout); err != nil {
			return Completed, err
		}
		return Completed, r.finishBlueGreen(ctx, params, from, timeout)
	}
	to, err = r.beforeSwitch(ctx, params, from, to, desired, timeout)
	if err != nil {
		return Completed, err
	}
	if _, err := r.switchActive(ctx, params, from, to, timeout); err != nil {
		return Completed, err
	}
	return Completed, r.finishBlueGreen(ctx, params, from, timeout)
}

// firstBlueGreen rolls out the first deployment: there is nothing to
// compare it with, so both Services select it once it is available, for
// good.
func (r *Rollout) firstBlueGreen(ctx context.Context, params *dcv1.BlueGreenDeploymentStrategyParams,
	to *corev1.ReplicationController, desired int32, timeout time.Duration) error {
	r.printf("--> Scaling %s to %d", to.Name, desired)
	to, err := r.scaleTo(ctx, to, desired, timeout)
	if err != nil {
		return err
	}
	if to, err = r.accept(ctx, to, timeout); err != nil {
		return err
	}
	if to, err = r.markSwitched(ctx, to, dcv1.SwitchedFinal); err != nil {
		return err
	}
	if err := r.selectDeployment(ctx, params.ActiveService, to); err != nil {
		return err
	}
	if params.PreviewService == "" {
		return nil
	}
	return r.selectDeployment(ctx, params.PreviewService, to)
}

// beforeSwitch brings to up beside from and waits for its promotion. The
// active Service is pinned to from first: left selecting every version's
// pods (a DeploymentConfig switched from another strategy, drift reverted
// by a GitOps tool), it would send live traffic to unpromoted pods.
func (r *Rollout) beforeSwitch(ctx context.Context, params *dcv1.BlueGreenDeploymentStrategyParams,
	from, to *corev1.ReplicationController, desired int32, timeout time.Duration) (*corev1.ReplicationController, error) {
	to, err := r.record(ctx, to, func(p *deployment.Progress) {
		if p.Stage == deployment.StageStarted {
			p.Stage = deployment.StageBeforeSwitch
		}
	})
	if err != nil {
		return to, err
	}
	if err := r.selectDeployment(ctx, params.ActiveService, from); err != nil {
		return to, err
	}
	r.printf("--> Scaling %s to %d", to.Name, desired)
	if to, err = r.scaleTo(ctx, to, desired, timeout); err != nil {
		return to, err
	}
	if to, err = r.accept(ctx, to, timeout); err != nil {
		return to, err
	}
	if params.PreviewService != "" {
		if err := r.selectDeployment(ctx, params.PreviewService, to); err != nil {
			return to, err
		}
	}
	if a := params.PrePromotionAnalysis; a != nil {
		if to, err = r.prePromotionAnalysis(ctx, a, to, timeout); err != nil {
			return to, err
		}
	}
	return r.awaitPromotion(ctx, params, to)
}

// switchActive points the active Service at to, marked as a trial when a
// postPromotionAnalysis follows and for good otherwise (a full promote
// skips the analysis). A failed or cancelled postPromotionAnalysis switches
// the active Service back to from and fails the rollout; a passed one
// makes the switch final.
func (r *Rollout) switchActive(ctx context.Context, params *dcv1.BlueGreenDeploymentStrategyParams,
	from, to *corev1.ReplicationController, timeout time.Duration) (*corev1.ReplicationController, error) {
	a := params.PostPromotionAnalysis
	if a != nil && fullPending(to) {
		r.printf("--> postPromotion: promoted in full: analysis skipped")
		a = nil
	}
	mark := deployment.SwitchFinal
	if a != nil {
		mark = deployment.SwitchTrial
	}
	to, err := r.markSwitched(ctx, to, mark)
	if err != nil {
		return to, err
	}
	if err := r.selectDeployment(ctx, params.ActiveService, to); err != nil {
		return to, err
	}
	if a == nil {
		return to, nil
	}
	return r.trial(ctx, params, from, to, timeout)
}

// trial runs the postPromotionAnalysis of a deployment the active Service
// selects on trial, and makes the switch final when it passes. One that
// fails, or a user's cancel, switches the active Service back to from. A
// runner that stops for another reason (a new dc-controller leader takes
// the rollout over) leaves the trial as it is, for the next runner to
// resume: switching back would send live traffic back and forth.
func (r *Rollout) trial(ctx context.Context, params *dcv1.BlueGreenDeploymentStrategyParams,
	from, to *corev1.ReplicationController, timeout time.Duration) (*corev1.ReplicationController, error) {
	r.printf("--> Running postPromotionAnalysis")
	fresh, err := r.gate(ctx, params.PostPromotionAnalysis, to, "postPromotion", deployment.GatePostPromotion)
	if err != nil {
		if !r.handedOver(ctx, to) {
			r.switchBack(ctx, params.ActiveService, from, to, timeout)
		}
		return to, fmt.Errorf("postPromotionAnalysis: %w", err)
	}
	return r.markSwitched(ctx, fresh, deployment.SwitchFinal)
}

// resumeSwitched finishes a rollout whose deployment the active Service
// was switched to for good before (a retried one): it is live and stays
// so, at full size and selected, and from goes.
func (r *Rollout) resumeSwitched(ctx context.Context, params *dcv1.BlueGreenDeploymentStrategyParams,
	from, to *corev1.ReplicationController, desired int32, timeout time.Duration) error {
	r.printf("--> %s was switched to already", to.Name)
	to, err := r.scaleTo(ctx, to, desired, timeout)
	if err != nil {
		return err
	}
	if err := r.selectDeployment(ctx, params.ActiveService, to); err != nil {
		return err
	}
	return r.finishBlueGreen(ctx, params, from, timeout)
}

// finishBlueGreen keeps from scaleDownDelaySeconds for a quick switch back
// by hand, then scales it down. The switch is final: should the rollout
// fail now (a cancel during the delay), the new deployment stays live and
// the active Service stays on it (nothing here switches it back).
func (r *Rollout) finishBlueGreen(ctx context.Context, params *dcv1.BlueGreenDeploymentStrategyParams,
	from *corev1.ReplicationController, timeout time.Duration) error {
	if d := params.ScaleDownDelaySeconds; d != nil && *d > 0 && deployment.Replicas(from) > 0 {
		r.printf("--> Keeping %s for %ds (scaleDownDelaySeconds)", from.Name, *d)
		if err := r.pause(ctx, time.Duration(*d)*time.Second); err != nil {
			return err
		}
	}
	return r.scaleDownOld(ctx, from, timeout)
}

// markSwitched records on to how far the active Service was switched to
// it. A switch for good consumes a full promote that asked for it.
func (r *Rollout) markSwitched(ctx context.Context, to *corev1.ReplicationController, mark deployment.Switch) (*corev1.ReplicationController, error) {
	fresh, err := r.record(ctx, to, func(p *deployment.Progress) {
		p.Switch, p.Wait, p.Analysis = mark, nil, nil
		switch mark {
		case deployment.SwitchNone:
			p.Stage = deployment.StageBeforeSwitch
		case deployment.SwitchFinal:
			p.Stage = deployment.StageSwitched
			consumeFull(p, to)
		default:
			p.Stage = deployment.StageSwitched
		}
	})
	if err != nil {
		return to, fmt.Errorf("record the switch of %s: %w", to.Name, err)
	}
	return fresh, nil
}

// switchBack points the active Service back at from after a trial switch
// whose postPromotionAnalysis failed or was cancelled, and scales to away
// when the deployer may still work (after a cancel the fall-back does).
// The trial record goes first, so that dc-controller, which keeps the
// active Service on a deployment on trial, follows the switch back. A
// cancel ends the deployer's context: the switch back gets its own,
// within the deployer pod's termination grace period.
func (r *Rollout) switchBack(ctx context.Context, service string, from, to *corev1.ReplicationController, timeout time.Duration) {
	cancelled := ctx.Err() != nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	r.printf("--> postPromotionAnalysis did not pass: switching service %s back to %s", service, from.Name)
	if _, err := r.markSwitched(ctx, to, ""); err != nil {
		r.printf("--> Warning: %v", err)
	}
	if err := r.selectDeployment(ctx, service, from); err != nil {
		r.printf("--> Warning: could not point service %s back at %s: %v", service, from.Name, err)
	}
	if cancelled {
		return
	}
	r.printf("--> Scaling %s down to zero", to.Name)
	if _, err := r.scaleTo(ctx, to, 0, min(timeout, restoreTimeout)); err != nil {
		r.printf("--> Warning: %v", err)
	}
}

// checkServices fails the rollout before anything moves when a Service it
// would switch does not exist.
func (r *Rollout) checkServices(ctx context.Context, params *dcv1.BlueGreenDeploymentStrategyParams) error {
	for field, name := range map[string]string{"activeService": params.ActiveService, "previewService": params.PreviewService} {
		if name == "" {
			continue
		}
		if _, err := r.services.Get(ctx, name, metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("strategy.blueGreenParams.%s: service %q does not exist", field, name)
			}
			return fmt.Errorf("strategy.blueGreenParams.%s: get service %q: %w", field, name, err)
		}
	}
	return nil
}

// selectDeployment points the Service at rc's pods.
func (r *Rollout) selectDeployment(ctx context.Context, service string, rc *corev1.ReplicationController) error {
	if err := r.setSelector(ctx, service, rc.Spec.Selector); err != nil {
		return err
	}
	r.printf("--> Service %s now selects %s", service, rc.Name)
	return nil
}

// setSelector replaces the Service's selector with a merge patch that
// removes the keys it had besides.
func (r *Rollout) setSelector(ctx context.Context, service string, selector map[string]string) error {
	svc, err := r.services.Get(ctx, service, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get service %q: %w", service, err)
	}
	values := map[string]*string{}
	for k := range svc.Spec.Selector {
		values[k] = nil
	}
	for k, v := range selector {
		values[k] = new(v)
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"selector": values}})
	if err != nil {
		return fmt.Errorf("point service %q at %v: %w", service, selector, err)
	}
	if _, err := r.services.Patch(ctx, service, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("point service %q at %v: %w", service, selector, err)
	}
	return nil
}

// prePromotionAnalysis runs the analysis gate before the promotion; when
// it fails, the new deployment is scaled away (the active Service never
// left the old one).
func (r *Rollout) prePromotionAnalysis(ctx context.Context, a *dcv1.Analysis, to *corev1.ReplicationController, timeout time.Duration) (*corev1.ReplicationController, error) {
	r.printf("--> Running prePromotionAnalysis")
	fresh, err := r.gate(ctx, a, to, "prePromotion", deployment.GatePrePromotion)
	if err == nil {
		return fresh, nil
	}
	if ctx.Err() == nil {
		r.printf("--> prePromotionAnalysis failed: scaling %s down to zero", to.Name)
		if _, serr := r.scaleTo(ctx, to, 0, timeout); serr != nil {
			r.printf("--> Warning: %v", serr)
		}
	}
	return to, fmt.Errorf("prePromotionAnalysis: %w", err)
}

// awaitPromotion waits for `kubectl dc rollout promote` or, with
// autoPromotionSeconds, that long at most, counted from the recorded start
// of the wait (a resumed runner does not start the countdown again). Like
// a canary pause, the wait is bounded by the runner's activeDeadlineSeconds
// only. The promote request is consumed: a later gate
// (postPromotionAnalysis) waits for a request of its own.
func (r *Rollout) awaitPromotion(ctx context.Context, params *dcv1.BlueGreenDeploymentStrategyParams, to *corev1.ReplicationController) (*corev1.ReplicationController, error) {
	gate := deployment.GatePromotion
	if passed(to, gate) {
		r.printf("    Promoted")
		return to, nil
	}
	if req, ok := deployment.Pending(to, progressOf(to), gate); ok {
		r.printf("    Promoted")
		return r.endWaitFor(ctx, to, gate, &req)
	}
	since := r.since(to, gate)
	dcName := to.Annotations[dcv1.DeploymentConfigAnnotation]
	var d *time.Duration
	waitCtx := ctx
	if s := params.AutoPromotionSeconds; s != nil {
		d = new(time.Duration(*s) * time.Second)
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithDeadline(ctx, since.Add(*d))
		defer cancel()
		r.printf("--> Promoting %s in %s (or on 'kubectl dc rollout promote %s')", to.Name, max(since.Add(*d).Sub(r.now()), 0).Round(time.Second), dcName)
	} else {
		r.printf("--> Waiting for 'kubectl dc rollout promote %s' to switch service %s to %s", dcName, params.ActiveService, to.Name)
	}
	wait := pauseWait(gate, dcv1.PauseReasonPromotion, since, d)
	to, err := r.record(ctx, to, func(p *deployment.Progress) { p.Stage, p.Wait = deployment.StageBeforeSwitch, wait })
	if err != nil {
		return to, err
	}
	fresh, req, err := r.answered(waitCtx, to, gate)
	switch {
	case err == nil:
		r.printf("    Promoted")
		return r.endWaitFor(ctx, fresh, gate, &req)
	case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		r.printf("    Promoted automatically after %ds", *params.AutoPromotionSeconds)
		return r.endWaitFor(ctx, to, gate, nil)
	}
	return to, err
}
