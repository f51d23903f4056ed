package controller

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// policyReconciler keeps a RolloutPolicy's status, and wakes the waiters
// its decision lets start or holds for a new reason. It is the only writer
// of a RolloutPolicy's status.
type policyReconciler struct {
	client client.Client
	gate   *policyGate
}

// Reconcile decides for one policy, wakes its waiters and writes its status.
func (r *policyReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := &dcv1.RolloutPolicy{}
	if err := r.gate.reader.Get(ctx, req.NamespacedName, p); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		// Gone: its waiters go by another policy, the flags, or at once.
		for _, name := range r.gate.forget(req.NamespacedName) {
			r.gate.notify(ctx, r.gate.wakeDC, types.NamespacedName{Namespace: req.Namespace, Name: name}, &dcv1.DeploymentConfig{})
		}
		return reconcile.Result{}, nil
	}
	g := r.gate
	g.mu.Lock()
	st := g.state(p)
	d, err := g.decide(ctx, p, st, nil)
	if err != nil {
		g.mu.Unlock()
		return reconcile.Result{}, err
	}
	var wake []string
	for _, w := range st.line {
		told := "Start"
		if h, ok := d.Holds[w.Name]; ok {
			told = toldOf(h)
		}
		if st.told[w.Name] != told {
			st.told[w.Name] = told
			wake = append(wake, w.Name)
		}
	}
	now := g.clock.Now()
	status := statusOf(p, st, d, st.selected, st.runningNow, now)
	requeue := g.schedule(ctx, req.NamespacedName, st, d.WakeAt)
	g.mu.Unlock()

	for _, name := range wake {
		g.notify(ctx, g.wakeDC, types.NamespacedName{Namespace: p.Namespace, Name: name}, &dcv1.DeploymentConfig{})
	}
	if !apiequality.Semantic.DeepEqual(status, &p.Status) {
		p = p.DeepCopy()
		p.Status = *status
		if err := r.client.Status().Update(ctx, p); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return reconcile.Result{Requeue: true}, nil
			}
			return reconcile.Result{}, fmt.Errorf("update status of rolloutpolicy %s: %w", req.NamespacedName, err)
		}
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// policiesOfNamespace maps an object's event to every RolloutPolicy of its
// namespace.
func (r *policyReconciler) policiesOfNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	list := &dcv1.RolloutPolicyList{}
	if err := r.gate.reader.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, p := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)})
	}
	return reqs
}

// dcMatters passes the DeploymentConfig events a policy's decision
// depends on: one appears or goes, is relabelled, paused or resumed, or
// triggered again.
func dcMatters() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*dcv1.DeploymentConfig)
			cur, okNew := e.ObjectNew.(*dcv1.DeploymentConfig)
			if !okOld || !okNew {
				return true
			}
			return !maps.Equal(old.Labels, cur.Labels) || old.Spec.Paused != cur.Spec.Paused ||
				(old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil) || old.Status.LatestVersion != cur.Status.LatestVersion
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// rcMatters passes the deployment events a policy's decision depends on:
// one is created or deleted, or its phase (or cancellation) changes.
func rcMatters() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*corev1.ReplicationController)
			cur, okNew := e.ObjectNew.(*corev1.ReplicationController)
			if !okOld || !okNew {
				return true
			}
			return deployment.Phase(old) != deployment.Phase(cur) || deployment.IsCancelled(old) != deployment.IsCancelled(cur)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// setupPolicies runs the RolloutPolicy controller beside the
// DeploymentConfig controller, whose admission calls into the same gate.
func setupPolicies(mgr manager.Manager, gate *policyGate) error {
	r := &policyReconciler{client: mgr.GetClient(), gate: gate}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("rolloutpolicy").
		For(&dcv1.RolloutPolicy{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&dcv1.DeploymentConfig{}, handler.EnqueueRequestsFromMapFunc(r.policiesOfNamespace), builder.WithPredicates(dcMatters())).
		Watches(&corev1.ReplicationController{}, handler.EnqueueRequestsFromMapFunc(r.policiesOfNamespace), builder.WithPredicates(rcMatters())).
		WatchesRawSource(source.Channel(gate.wakePolicy, &handler.EnqueueRequestForObject{})).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up rolloutpolicy controller: %w", err)
	}
	return nil
}

// admissionSync wraps the DeploymentConfig controller's sync: a
// DeploymentConfig whose sync did not ask for admission (paused, invalid,
// waiting for older pods to go, deleted, or failed before it got there)
// leaves the line at once, rather than hold the DeploymentConfigs behind
// it; it joins again, at the end, when a sync asks.
type admissionSync struct {
	reconcile.Reconciler
	gate *rolloutGate
}

// Reconcile syncs, and takes the DeploymentConfig out of line when its
// sync no longer waits for admission.
func (s admissionSync) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ctx, asked := withAdmissionMark(ctx)
	result, err := s.Reconciler.Reconcile(ctx, req)
	if !*asked {
		s.gate.leave(ctx, req.NamespacedName)
	}
	return result, err
}
