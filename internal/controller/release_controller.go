package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// releaseReconciler releases RCs whose DeploymentConfig label was removed.
// The cache holds only RCs that carry the label, so such an RC simply leaves
// it (as a delete event) and the DeploymentConfig controller never sees it
// again; this reconciler, fed by those events, asks the API server whether
// the RC still exists and drops its controller reference if so.
type releaseReconciler struct {
	Client    client.Client
	APIReader client.Reader
}

// Reconcile checks one RC that left the cache.
func (r *releaseReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	rc := &corev1.ReplicationController{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, rc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if _, labelled := rc.Labels[dcv1.DeploymentConfigLabel]; labelled {
		return reconcile.Result{}, nil
	}
	ref := metav1.GetControllerOf(rc)
	if ref == nil || ref.Kind != "DeploymentConfig" || ref.APIVersion != dcv1.GroupVersion.String() {
		return reconcile.Result{}, nil
	}
	if err := releaseRC(ctx, r.Client, rc); err != nil {
		return reconcile.Result{}, err
	}
	log.FromContext(ctx).Info("released replicationcontroller whose label was removed", "rc", rc.Name, "deploymentconfig", ref.Name)
	return reconcile.Result{}, nil
}
