package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// logQuiet is how long a rollout run in the controller goes without a log
// line before its log so far is written to its deployment: it waits (a
// pause, a promotion, an analysis) and its user may look. Shorter rollouts
// have their log written once, with their outcome.
const logQuiet = 30 * time.Second

// runInController reports whether the deployment's rollout runs (or ran)
// in dc-controller rather than in a deployer pod.
func runInController(rc *corev1.ReplicationController) bool {
	return rc.Annotations[dcv1.DeploymentRunnerAnnotation] == dcv1.DeploymentRunnerController
}

// startInController moves a New deployment to Running, recording that the
// controller runs it and since when, and starts its rollout. With the
// runner full, it stays New and waits for a slot.
func (r *DeployerReconciler) startInController(ctx context.Context, rc *corev1.ReplicationController, dc *dcv1.DeploymentConfig) (reconcile.Result, error) {
	if r.runner.full() {
		return reconcile.Result{RequeueAfter: time.Second, Priority: ptr(0)}, nil
	}
	now := r.Clock.Now()
	started := now.UTC().Format(time.RFC3339)
	runner := dcv1.DeploymentRunnerController
	err := r.setPhaseWith(ctx, rc, dcv1.DeploymentPhaseRunning, "", map[string]*string{
		dcv1.DeploymentRunnerAnnotation:        &runner,
		dcv1.DeploymentRunnerStartedAnnotation: &started,
		// No deployer pod runs it (the RC was made naming one).
		dcv1.DeployerPodAnnotation: nil,
	})
	if err != nil {
		return reconcile.Result{}, err
	}
	if deployment.Phase(rc) != dcv1.DeploymentPhaseRunning {
		// The phase moved under us; the RC's event brings us back.
		return reconcile.Result{}, nil
	}
	log.FromContext(ctx).Info("running the rollout in the controller", "rc", rc.Name)
	return r.runInController(ctx, rc, dc, now, false)
}

// syncInController follows a Running deployment whose rollout runs in the
// controller: it resumes one no run of this replica carries out (the
// leader that ran it is gone), writes the log of one that waits, and
// records the outcome of one that ended.
func (r *DeployerReconciler) syncInController(ctx context.Context, rc *corev1.ReplicationController) (reconcile.Result, error) {
	if deployment.IsCancelled(rc) {
		return reconcile.Result{}, r.finishCancel(ctx, rc)
	}
	run, ok := r.runner.lookup(rc)
	if !ok {
		return r.resumeInController(ctx, rc)
	}
	if !isDone(run) {
		return reconcile.Result{RequeueAfter: logQuiet, Priority: ptr(0)}, r.writeQuietLog(ctx, rc, run)
	}
	if !run.finished {
		// Stopped, not ended: run it again.
		r.runner.forget(client.ObjectKeyFromObject(rc))
		return reconcile.Result{Requeue: true}, nil
	}
	if run.err != nil {
		reason := fmt.Sprintf(reasonDeployerFailed, run.err)
		if errors.Is(run.err, errDeadlineExceeded) {
			reason = reasonDeadlineExceeded
		}
		return reconcile.Result{}, r.failWith(ctx, rc, reason, run.logAnnotation())
	}
	return reconcile.Result{}, r.setPhaseWith(ctx, rc, dcv1.DeploymentPhaseComplete, "", run.logAnnotation())
}

// resumeInController runs again a Running rollout that no run of this
// replica carries out. The strategies pick up from what the deployment
// records (scale, step, pause, switch), as a retried deployer does.
func (r *DeployerReconciler) resumeInController(ctx context.Context, rc *corev1.ReplicationController) (reconcile.Result, error) {
	dc, err := encodedConfig(ctx, r.APIReader, rc)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, r.fail(ctx, rc, err.Error())
	}
	started, err := time.Parse(time.RFC3339, rc.Annotations[dcv1.DeploymentRunnerStartedAnnotation])
	if err != nil {
		started = rc.CreationTimestamp.Time
	}
	log.FromContext(ctx).Info("resuming the rollout in the controller", "rc", rc.Name)
	return r.runInController(ctx, rc, dc, started, true)
}

// runInController hands the rollout to the runner, with the deadline its
// strategy's activeDeadlineSeconds sets from started.
func (r *DeployerReconciler) runInController(ctx context.Context, rc *corev1.ReplicationController, dc *dcv1.DeploymentConfig, started time.Time, resume bool) (reconcile.Result, error) {
	budget := dcv1.DefaultActiveDeadlineSeconds
	if s := dc.Spec.Strategy.ActiveDeadlineSeconds; s != nil {
		budget = *s
	}
	err := r.runner.start(rolloutStart{rc: rc, started: started, deadline: started.Add(time.Duration(budget) * time.Second), resume: resume})
	if errors.Is(err, errNotLeading) {
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	return reconcile.Result{RequeueAfter: logQuiet, Priority: ptr(0)}, err
}

// writeQuietLog writes the log of a rollout that has waited logQuiet
// without a new line.
func (r *DeployerReconciler) writeQuietLog(ctx context.Context, rc *corev1.ReplicationController, run *run) error {
	text, ok := run.log.quietFor(r.Clock.Now(), logQuiet)
	if !ok {
		return nil
	}
	patch := client.MergeFrom(rc.DeepCopy())
	rc.Annotations[dcv1.DeploymentLogAnnotation] = text
	if err := r.Client.Patch(ctx, rc, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	run.log.markFlushed()
	return nil
}

// logAnnotation is the annotation that keeps the run's log on its
// deployment; nil without a run.
func (run *run) logAnnotation() map[string]*string {
	if run == nil {
		return nil
	}
	text := run.log.String()
	return map[string]*string{dcv1.DeploymentLogAnnotation: &text}
}
