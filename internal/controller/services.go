package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Event reasons of the Services the DeploymentConfig controller keeps
// pointed at a deployment.
const (
	EventServiceSelected = "ServiceSelected"
	EventServiceMissing  = "ServiceMissing"
	EventServiceConflict = "ServiceConflict"
)

// The BlueGreen strategy's Services. The deployer points them during a
// rollout; dc-controller keeps them pointed between rollouts and when a
// deployer dies, so that they agree with the fall-back (which scales every
// deployment but the live one to zero) and so that drift (a selector edited
// by hand, a GitOps tool re-applying `{app: web}`) does not send traffic to
// a deployment that should get none:
//   - the active Service selects the live deployment (deployment.Live),
//     or the latest one while it runs switched on trial; during a rollout
//     it may also select either of the two (the deployer's switch and its
//     record on the RC reach the cache in no fixed order), never a third;
//   - the preview Service selects the live deployment when no rollout
//     runs, and whatever the deployer chose during one;
//   - before the first rollout made a deployment live, nothing is touched.
//
// A Service the controller keeps carries ServiceOfLabel; dc-controller
// watches Services with that label only, so an edit brings the
// DeploymentConfig's sync back, and so does removing the label (the
// label-selected watch reports the Service deleted), which the sync puts
// back.

// syncServices points the Services of dc's strategy at the deployments
// they should select: the BlueGreen strategy's (see above) and those of
// trafficRouting (syncTraffic), and puts trafficRouting's routes at rest
// when no rollout runs. A missing Service is reported as an event; it holds
// up nothing else.
func (r *DeploymentConfigReconciler) syncServices(ctx context.Context, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) error {
	s := dc.Spec.Strategy
	switch {
	case s.Type == dcv1.DeploymentStrategyTypeBlueGreen && s.BlueGreenParams != nil:
		return r.syncBlueGreenServices(ctx, dc, rcs)
	case s.Type == dcv1.DeploymentStrategyTypeRolling && s.RollingParams != nil && s.RollingParams.TrafficRouting != nil:
		return r.syncTraffic(ctx, dc, rcs)
	}
	return nil
}

// syncBlueGreenServices keeps the BlueGreen strategy's Services (see above).
func (r *DeploymentConfigReconciler) syncBlueGreenServices(ctx context.Context, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) error {
	params := dc.Spec.Strategy.BlueGreenParams
	live := deployment.Live(rcs, nil)
	if live == nil {
		return nil
	}
	latest, running, err := r.newestDeployment(ctx, dc, rcs)
	if err != nil {
		return err
	}
	active, allowed := live, []*corev1.ReplicationController(nil)
	if running {
		if deployment.IsOnTrial(latest) {
			active = latest
		}
		allowed = []*corev1.ReplicationController{live, latest}
	}
	if err := r.pointService(ctx, dc, params.ActiveService, active, allowed); err != nil {
		return err
	}
	if params.PreviewService == "" || running {
		return nil
	}
	return r.pointService(ctx, dc, params.PreviewService, live, nil)
}

// newestDeployment returns the DeploymentConfig's newest deployment, the
// one that may run (an older one still running is being cancelled for it),
// and whether it runs. rcs (oldest first) come from the cache, which may
// not hold the newest yet while the DeploymentConfig's status already
// names it; then it is read from the API server, so that a sync that saw
// the DeploymentConfig before its RC does not undo what a deployer already
// working on it did to Services and routes.
func (r *DeploymentConfigReconciler) newestDeployment(ctx context.Context, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) (*corev1.ReplicationController, bool, error) {
	latest := rcs[len(rcs)-1]
	if deployment.Version(latest) >= dc.Status.LatestVersion {
		return latest, !deployment.IsTerminal(deployment.Phase(latest)), nil
	}
	newest := &corev1.ReplicationController{}
	key := types.NamespacedName{Namespace: dc.Namespace, Name: deployment.Name(dc.Name, dc.Status.LatestVersion)}
	err := r.APIReader.Get(ctx, key, newest)
	if apierrors.IsNotFound(err) {
		// Not created yet: nothing runs until it is.
		return latest, !deployment.IsTerminal(deployment.Phase(latest)), nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get replicationcontroller %s: %w", key, err)
	}
	return newest, !deployment.IsTerminal(deployment.Phase(newest)), nil
}

// pointService makes the named Service select rc's pods, unless it
// already selects rc's or one of allowed's, and labels it as kept by dc.
// It writes nothing when the Service is already so.
func (r *DeploymentConfigReconciler) pointService(ctx context.Context, dc *dcv1.DeploymentConfig, name string, rc *corev1.ReplicationController, allowed []*corev1.ReplicationController) error {
	svc, err := r.service(ctx, dc.Namespace, name)
	if apierrors.IsNotFound(err) {
		r.Recorder.Eventf(dc, nil, corev1.EventTypeWarning, EventServiceMissing, "Select",
			"Service %q of the strategy does not exist; it cannot select %s", name, rc.Name)
		return nil
	}
	if err != nil {
		return err
	}
	if owner := svc.Labels[dcv1.ServiceOfLabel]; owner != "" && owner != dc.Name {
		r.Recorder.Eventf(dc, nil, corev1.EventTypeWarning, EventServiceConflict, "Select",
			"Service %q is kept by deploymentconfig %q; it is left as it is", name, owner)
		return nil
	}
	labelled := svc.Labels[dcv1.ServiceOfLabel] == dc.Name
	for _, ok := range append([]*corev1.ReplicationController{rc}, allowed...) {
		if labelled && maps.Equal(svc.Spec.Selector, selectorOf(dc, ok)) {
			return nil
		}
	}
	want, err := r.exactSelector(ctx, dc, rc)
	if err != nil {
		return err
	}
	if labelled && maps.Equal(svc.Spec.Selector, want) {
		return nil
	}
	if err := r.patchService(ctx, svc, dc.Name, want); err != nil {
		return err
	}
	log.FromContext(ctx).Info("pointed a service at the live deployment", "service", name, "rc", rc.Name, "was", svc.Spec.Selector)
	if !maps.Equal(svc.Spec.Selector, want) {
		r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventServiceSelected, "Select",
			"Service %q selects %s again (it selected %v)", name, rc.Name, svc.Spec.Selector)
	}
	return nil
}

// service reads a Service from the cache, which holds the labelled ones
// only, or from the API server.
func (r *DeploymentConfigReconciler) service(ctx context.Context, namespace, name string) (*corev1.Service, error) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	svc := &corev1.Service{}
	err := r.Client.Get(ctx, key, svc)
	if err == nil && svc.Labels[dcv1.ServiceOfLabel] != "" {
		return svc, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get service %s/%s: %w", namespace, name, err)
	}
	if err := r.APIReader.Get(ctx, key, svc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, err
		}
		return nil, fmt.Errorf("get service %s/%s: %w", namespace, name, err)
	}
	return svc, nil
}

// selectorOf returns the selector of a deployment: the RC's own when the
// cache kept it (transformRC drops it once an RC manager reported on the
// RC), else the one deployment.New gave it from the DeploymentConfig as it
// is now.
func selectorOf(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) map[string]string {
	if len(rc.Spec.Selector) > 0 {
		return rc.Spec.Selector
	}
	return deployment.Selector(dc, rc.Name)
}

// exactSelector returns the RC's selector, read from the API server when
// the cache dropped it: the DeploymentConfig's selector (or its template's
// labels) may have changed since the RC was made, and a Service selecting
// labels the RC's pods lack would select nothing. Only a Service that needs
// a write costs the read.
func (r *DeploymentConfigReconciler) exactSelector(ctx context.Context, dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) (map[string]string, error) {
	if len(rc.Spec.Selector) > 0 {
		return rc.Spec.Selector, nil
	}
	fresh := &corev1.ReplicationController{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(rc), fresh); err != nil {
		return nil, fmt.Errorf("get replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	if len(fresh.Spec.Selector) == 0 {
		return deployment.Selector(dc, rc.Name), nil
	}
	return fresh.Spec.Selector, nil
}

// patchService sets a Service's selector to want with a merge patch that
// also removes the keys it had besides, and labels it as kept by dcName.
func (r *DeploymentConfigReconciler) patchService(ctx context.Context, svc *corev1.Service, dcName string, want map[string]string) error {
	selector := map[string]*string{}
	for k := range svc.Spec.Selector {
		selector[k] = nil
	}
	for k, v := range want {
		selector[k] = &v
	}
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"labels": map[string]string{dcv1.ServiceOfLabel: dcName}},
		"spec":     map[string]any{"selector": selector},
	})
	if err != nil {
		return fmt.Errorf("point service %s/%s at %v: %w", svc.Namespace, svc.Name, want, err)
	}
	if err := r.Client.Patch(ctx, svc, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("point service %s/%s at %v: %w", svc.Namespace, svc.Name, want, client.IgnoreNotFound(err))
	}
	return nil
}

// deploymentConfigOfService maps a Service dc-controller keeps to the
// DeploymentConfig that keeps it.
func deploymentConfigOfService(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[dcv1.ServiceOfLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// startsNoRollout is the priority of a Service's event: a Service changes
// no rollout's start.
func startsNoRollout(context.Context, reconcile.Request) bool { return false }
