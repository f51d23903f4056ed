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
// deployment when the rollout ends after the switch (a cancel stops the
// deployer: its own context is over by then). It is well within the
// deployer pod's 10 second termination grace period.
const restoreTimeout = 5 * time.Second

// WithServices makes the rollout point Services (the BlueGreen strategy's
// active and preview Services) with s.
func (r *Rollout) WithServices(s corev1client.ServiceInterface) *Rollout {
	r.services = s
	return r
}

// BlueGreen rolls out to beside from (the last complete deployment, nil on
// the first rollout): to comes up at full size, the preview Service selects
// it, the prePromotionAnalysis runs, and once promoted (by `kubectl dc
// rollout promote` or after autoPromotionSeconds) the active Service
// switches to it; from scales down scaleDownDelaySeconds later. A failed
// analysis switches nothing and scales to away. Services select a
// deployment by its ReplicationController's selector: the DeploymentConfig's
// selector plus the `deployment` label its pods carry.
func (r *Rollout) BlueGreen(ctx context.Context, params *dcv1.BlueGreenDeploymentStrategyParams,
	from, to *corev1.ReplicationController, desired int32) (outcome Outcome, err error) {
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
	r.printf("--> Scaling %s to %d", to.Name, desired)
	if to, err = r.scaleTo(ctx, to, desired, timeout); err != nil {
		return Completed, err
	}
	if to, err = r.accept(ctx, to, timeout); err != nil {
		return Completed, err
	}
	if from == nil {
		return Completed, r.selectDeployment(ctx, params.ActiveService, to)
	}
	if params.PreviewService != "" {
		if err := r.selectDeployment(ctx, params.PreviewService, to); err != nil {
			return Completed, err
		}
	}
	if a := params.PrePromotionAnalysis; a != nil {
		if err := r.prePromotionAnalysis(ctx, a, to, timeout); err != nil {
			return Completed, err
		}
	}
	if to, err = r.awaitPromotion(ctx, params, to); err != nil {
		return Completed, err
	}
	if err := r.selectDeployment(ctx, params.ActiveService, to); err != nil {
		return Completed, err
	}
	// From here on the old deployment is not serving; should the rollout
	// still fail (a cancel during the delay), the fall-back brings the old
	// one back, and the active Service must follow it.
	defer func() {
		if err != nil {
			r.restoreActive(ctx, params.ActiveService, from)
		}
	}()
	if d := params.ScaleDownDelaySeconds; d != nil && *d > 0 && deployment.Replicas(from) > 0 {
		r.printf("--> Keeping %s for %ds (scaleDownDelaySeconds)", from.Name, *d)
		if err := r.pause(ctx, time.Duration(*d)*time.Second); err != nil {
			return Completed, err
		}
	}
	return Completed, r.scaleDownOld(ctx, from, timeout)
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

// restoreActive points the active Service back at the old deployment after
// a rollout that failed past the switch.
func (r *Rollout) restoreActive(ctx context.Context, service string, from *corev1.ReplicationController) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	if err := r.selectDeployment(ctx, service, from); err != nil {
		r.printf("--> Warning: could not point service %s back at %s: %v", service, from.Name, err)
	}
}

// prePromotionAnalysis runs the analysis; when it fails, the new
// deployment is scaled away (the active Service never left the old one).
func (r *Rollout) prePromotionAnalysis(ctx context.Context, a *dcv1.Analysis, to *corev1.ReplicationController, timeout time.Duration) error {
	r.printf("--> Running prePromotionAnalysis")
	if r.analysis == nil {
		return errors.New("prePromotionAnalysis: this deployer cannot run analyses")
	}
	err := r.analysis.Run(ctx, a, to, "prePromotion")
	if err == nil {
		return nil
	}
	r.printf("--> prePromotionAnalysis failed: scaling %s down to zero", to.Name)
	if _, serr := r.scaleTo(ctx, to, 0, timeout); serr != nil {
		r.printf("--> Warning: %v", serr)
	}
	return fmt.Errorf("prePromotionAnalysis: %w", err)
}

// awaitPromotion waits for `kubectl dc rollout promote` or, with
// autoPromotionSeconds, that long at most. Like a canary pause, the wait is
// bounded by the deployer pod's activeDeadlineSeconds only.
func (r *Rollout) awaitPromotion(ctx context.Context, params *dcv1.BlueGreenDeploymentStrategyParams, to *corev1.ReplicationController) (*corev1.ReplicationController, error) {
	if to.Annotations[dcv1.PromoteRequestAnnotation] != "" {
		return to, nil
	}
	dcName := to.Annotations[dcv1.DeploymentConfigAnnotation]
	values := map[string]*string{dcv1.DeploymentPausedSinceAnnotation: new(r.now().UTC().Format(time.RFC3339))}
	waitCtx := ctx
	if s := params.AutoPromotionSeconds; s != nil {
		d := time.Duration(*s) * time.Second
		values[dcv1.DeploymentPauseDurationAnnotation] = new(d.String())
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
		r.printf("--> Promoting %s in %s (or on 'kubectl dc rollout promote %s')", to.Name, d, dcName)
	} else {
		r.printf("--> Waiting for 'kubectl dc rollout promote %s' to switch service %s to %s", dcName, params.ActiveService, to.Name)
	}
	to, err := r.scaler.Annotate(ctx, to.Name, values)
	if err != nil {
		return to, err
	}
	fresh, err := r.scaler.WaitFor(waitCtx, to.Name, func(rc *corev1.ReplicationController) bool {
		return rc.Annotations[dcv1.PromoteRequestAnnotation] != ""
	})
	switch {
	case err == nil:
		to = fresh
		r.printf("    Promoted")
	case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		r.printf("    Promoted automatically after %ds", *params.AutoPromotionSeconds)
	default:
		return to, err
	}
	return r.scaler.Annotate(ctx, to.Name, map[string]*string{
		dcv1.DeploymentPausedSinceAnnotation:   nil,
		dcv1.DeploymentPauseDurationAnnotation: nil,
	})
}
