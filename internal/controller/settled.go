package controller

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Settled deployments. Of a DeploymentConfig with ten revisions, nine RCs are
// finished, scaled to zero and older than the active deployment: nothing
// happens to them until history cleanup deletes them. The controller labels
// such a deployment settled (one write, once), and its cache leaves settled
// RCs out, so dc-controller's memory grows with the number of
// DeploymentConfigs rather than with their history. What needs them reads
// them from the API server:
//   - history cleanup, when the history may have grown past
//     revisionHistoryLimit (a deployment settled, or the cached finished
//     deployments alone exceed it) or the DeploymentConfig's spec changed;
//   - the fall-back, when no Complete deployment is cached (the active one
//     was deleted): the newest settled Complete one is taken back;
//   - a settled RC scaled by hand: a second cache watches settled RCs that
//     have pods, and the label comes off, so the controller scales it back.

// settledValue is DeploymentSettledLabel's value.
const settledValue = "true"

// settleable returns the deployments of rcs that can be set aside: older
// than the active deployment and settled (finished, scaled to zero and
// reported so).
func settleable(rcs []*corev1.ReplicationController) []*corev1.ReplicationController {
	active := deployment.Live(rcs, nil)
	if active == nil {
		return nil
	}
	var out []*corev1.ReplicationController
	for _, rc := range rcs {
		if deployment.Version(rc) < deployment.Version(active) && settled(rc) && rc.Labels[dcv1.DeploymentSettledLabel] != settledValue {
			out = append(out, rc)
		}
	}
	return out
}

// tidyHistory deletes the oldest finished deployments beyond
// revisionHistoryLimit, the settled ones included, and labels the
// deployments that have settled since the last sync. Failures are reported
// as events: they hold up nothing else.
func (r *DeploymentConfigReconciler) tidyHistory(ctx context.Context, dc *dcv1.DeploymentConfig, original *dcv1.DeploymentConfigStatus, rcs []*corev1.ReplicationController) {
	toSettle := settleable(rcs)
	history := rcs
	if len(toSettle) > 0 || len(prunable(dc, rcs)) > 0 || original.ObservedGeneration != dc.Generation {
		set, err := r.settledDeployments(ctx, dc)
		if err != nil {
			r.Recorder.Eventf(dc, nil, corev1.EventTypeWarning, EventDeploymentCleanupFailed, "Delete",
				"Couldn't read the settled deployments: %v", err)
			return
		}
		history = withSettled(rcs, set)
	}
	pruned := map[string]bool{}
	for _, rc := range prunable(dc, history) {
		pruned[rc.Name] = true
		err := r.Client.Delete(ctx, rc, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) {
			r.Recorder.Eventf(dc, rc, corev1.EventTypeWarning, EventDeploymentCleanupFailed, "Delete",
				"Couldn't clean up deployment %q: %v", rc.Name, err)
		}
	}
	for _, rc := range toSettle {
		if pruned[rc.Name] {
			continue
		}
		if err := setSettled(ctx, r.Client, rc, true); err != nil {
			log.FromContext(ctx).Error(err, "labelling a settled deployment", "rc", rc.Name)
		}
	}
}

// withSettled adds to the cached deployments the settled ones the cache does
// not hold (it may still hold one just labelled), oldest first.
func withSettled(cached, set []*corev1.ReplicationController) []*corev1.ReplicationController {
	names := map[string]bool{}
	for _, rc := range cached {
		names[rc.Name] = true
	}
	all := append([]*corev1.ReplicationController(nil), cached...)
	for _, rc := range set {
		if !names[rc.Name] {
			all = append(all, rc)
		}
	}
	deployment.SortByVersion(all)
	return all
}

// settledDeployments reads the DeploymentConfig's settled deployments from
// the API server, adopting orphans among them as claimDeployments does
// cached ones (a DeploymentConfig deleted with its RCs orphaned and created
// again).
func (r *DeploymentConfigReconciler) settledDeployments(ctx context.Context, dc *dcv1.DeploymentConfig) ([]*corev1.ReplicationController, error) {
	list := &corev1.ReplicationControllerList{}
	err := r.APIReader.List(ctx, list, client.InNamespace(dc.Namespace),
		client.MatchingLabels{dcv1.DeploymentConfigLabel: dc.Name, dcv1.DeploymentSettledLabel: settledValue})
	if err != nil {
		return nil, fmt.Errorf("list the settled deployments of %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	return r.claim(ctx, dc, list)
}

// restoreActive takes the newest settled Complete deployment back into the
// cache when none of the cached deployments is Complete but older versions
// may exist: the active deployment was deleted, and the fall-back needs the
// one before it. It reports whether it took one back; the RC's return to
// the cache syncs the DeploymentConfig again.
func (r *DeploymentConfigReconciler) restoreActive(ctx context.Context, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) (bool, error) {
	if deployment.Live(rcs, nil) != nil || len(rcs) == 0 || deployment.Version(rcs[0]) <= 1 {
		return false, nil
	}
	set, err := r.settledDeployments(ctx, dc)
	if err != nil {
		return false, err
	}
	rc := deployment.Live(set, nil)
	if rc == nil {
		return false, nil
	}
	if err := setSettled(ctx, r.Client, rc, false); err != nil {
		return false, err
	}
	log.FromContext(ctx).Info("took a settled deployment back for the fall-back", "rc", rc.Name)
	return true, nil
}

// setSettled labels an RC settled, or takes the label off.
func setSettled(ctx context.Context, c client.Client, rc *corev1.ReplicationController, on bool) error {
	patch := client.MergeFrom(rc.DeepCopy())
	labels := maps.Clone(rc.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	if on {
		labels[dcv1.DeploymentSettledLabel] = settledValue
	} else {
		delete(labels, dcv1.DeploymentSettledLabel)
	}
	rc.Labels = labels
	if err := c.Patch(ctx, rc, patch); err != nil {
		return fmt.Errorf("label replicationcontroller %s/%s settled=%t: %w", rc.Namespace, rc.Name, on, client.IgnoreNotFound(err))
	}
	return nil
}

// settledScaleReconciler takes the settled label off an RC that has pods
// (someone scaled it by hand): back in the cache, the DeploymentConfig
// controller scales it to zero again, as it does any old deployment. It is
// fed by a cache of settled RCs whose status counts pods, which is empty
// but for such hand edits.
type settledScaleReconciler struct {
	Client    client.Client
	APIReader client.Reader
}

// Reconcile checks one settled RC that has pods.
func (r *settledScaleReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	rc := &corev1.ReplicationController{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, rc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if rc.Labels[dcv1.DeploymentSettledLabel] != settledValue || (deployment.Replicas(rc) == 0 && rc.Status.Replicas == 0) {
		return reconcile.Result{}, nil
	}
	if err := setSettled(ctx, r.Client, rc, false); err != nil {
		return reconcile.Result{}, err
	}
	log.FromContext(ctx).Info("a settled deployment has pods; the controller takes it back", "rc", rc.Name)
	return reconcile.Result{}, nil
}
