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

// logFlushEvery is how often, at most, the log of a rollout run in the
// controller is written to its deployment while lines arrive: a user
// following it sees each line within this long. A rollout shorter than
// this has its log written once, with its outcome; a runner that stops
// (this replica no longer leads) writes what it has first.
const logFlushEvery = 5 * time.Second

// liveLogWrites is how many writes a second the logs of all the rollouts
// running in the controller may take together while they run, and
// liveLogBurst how many at once. A few rollouts are written every
// logFlushEvery; a thousand at once would add 200 writes a second of logs
// alone to the API server, each a write of a whole ReplicationController,
// so theirs wait for a free write, or go with the record when the rollout
// waits, stops or ends.
const (
	liveLogWrites = 2
	liveLogBurst  = 10
)

// runInController reports whether the deployment's rollout runs (or ran)
// in dc-controller rather than in a deployer pod.
func runInController(rc *corev1.ReplicationController) bool {
	return deployment.RunsInController(rc)
}

// startInController moves a New deployment to Running, recording in its
// progress record that the controller runs it and since when, and starts
// its rollout. It takes a slot of --max-controller-rollouts first: with
// none free it stays New, in line behind the deployments that asked
// before it.
func (r *DeployerReconciler) startInController(ctx context.Context, rc *corev1.ReplicationController, dc *dcv1.DeploymentConfig) (reconcile.Result, error) {
	if !r.runner.reserve(rc) {
		return reconcile.Result{RequeueAfter: time.Second, Priority: ptr(0)}, nil
	}
	now := r.Clock.Now()
	extra, err := deployment.ControllerRunnerPatch(rc, now)
	if err != nil {
		r.runner.release(rc)
		return reconcile.Result{}, r.fail(ctx, rc, err.Error())
	}
	if err := r.setPhaseWith(ctx, rc, dcv1.DeploymentPhaseRunning, "", extra); err != nil {
		r.runner.release(rc)
		return reconcile.Result{}, err
	}
	if deployment.Phase(rc) != dcv1.DeploymentPhaseRunning {
		// The phase moved under us; the RC's event brings us back.
		r.runner.release(rc)
		return reconcile.Result{}, nil
	}
	log.FromContext(ctx).Info("running the rollout in the controller", "rc", rc.Name)
	return r.runInController(ctx, rc, dc, now, false)
}

// syncInController follows a Running deployment whose rollout runs in the
// controller: it resumes one no run of this replica carries out (the
// leader that ran it is gone) and records the outcome of one that ended.
func (r *DeployerReconciler) syncInController(ctx context.Context, rc *corev1.ReplicationController) (reconcile.Result, error) {
	if deployment.IsCancelled(rc) {
		return reconcile.Result{}, r.finishCancel(ctx, rc)
	}
	run, ok := r.runner.lookup(rc)
	if !ok && r.runner.reserved(rc) {
		// Created Running moments ago (createRunning): its creator starts
		// it, and its end wakes this controller.
		return reconcile.Result{}, nil
	}
	if !ok {
		return r.resumeInController(ctx, rc)
	}
	if !isDone(run) {
		return reconcile.Result{}, nil
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
// replica carries out. The strategies pick up from the deployment's
// progress record, as a retried deployer does. The deployment is read from
// the API server: the cache holds neither its encoded configuration nor
// its log, which the resumed run goes on from.
func (r *DeployerReconciler) resumeInController(ctx context.Context, rc *corev1.ReplicationController) (reconcile.Result, error) {
	fresh := &corev1.ReplicationController{}
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(rc), fresh)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("read replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	dc, err := deployment.DecodeConfig(fresh)
	if err != nil {
		return reconcile.Result{}, r.fail(ctx, rc, err.Error())
	}
	started := fresh.CreationTimestamp.Time
	if since := deployment.ProgressOf(fresh).Runner.Since; since != nil {
		started = since.Time
	}
	log.FromContext(ctx).Info("resuming the rollout in the controller", "rc", rc.Name)
	return r.runInController(ctx, fresh, dc, started, true)
}

// runInController hands the rollout to the runner.
func (r *DeployerReconciler) runInController(ctx context.Context, rc *corev1.ReplicationController, dc *dcv1.DeploymentConfig, started time.Time, resume bool) (reconcile.Result, error) {
	err := r.runner.start(newRolloutStart(rc, dc, started, resume))
	if errors.Is(err, errNotLeading) {
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	return reconcile.Result{}, err
}

// newRolloutStart says how to run the rollout of rc, with the deadline
// its strategy's activeDeadlineSeconds sets from started.
func newRolloutStart(rc *corev1.ReplicationController, dc *dcv1.DeploymentConfig, started time.Time, resume bool) rolloutStart {
	budget := dcv1.DefaultActiveDeadlineSeconds
	if s := dc.Spec.Strategy.ActiveDeadlineSeconds; s != nil {
		budget = *s
	}
	return rolloutStart{rc: rc, started: started, deadline: started.Add(time.Duration(budget) * time.Second), resume: resume}
}

// runPlacement says where dc-controller runs rollouts: the deployer
// controller, which runs them, and the DeploymentConfig controller, which
// creates their deployments, decide alike.
type runPlacement struct {
	// Mode says where rollouts run unless a DeploymentConfig says
	// otherwise; AllowModeChoice lets its annotation ask for the
	// controller under DeployerModePod.
	Mode            DeployerMode
	AllowModeChoice bool
	runner          *rolloutRunner
}

// createRunning prepares rc, about to be created for dc, to be created
// Running in the controller, and takes a slot of --max-controller-rollouts
// for it: when the rollout runs in the controller, this replica leads and
// a slot is free with none in line. It reports whether it did; otherwise
// the deployment is created New, and the deployer controller places it
// (and reports an invalid deployer-mode annotation). The caller starts the
// run once the create succeeds (startCreated) and gives the slot back
// when it fails.
func (p runPlacement) createRunning(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController, now time.Time) bool {
	if !p.runsInController(dc) || !p.runner.tryReserve(rc) {
		return false
	}
	if err := deployment.StartInController(rc, now); err != nil {
		p.runner.release(rc)
		return false
	}
	return true
}

// runsInController reports whether createRunning would take dc's next
// deployment into the controller, slots aside: what the deployment's phase
// at creation will most likely be.
func (p runPlacement) runsInController(dc *dcv1.DeploymentConfig) bool {
	if p.runner == nil {
		return false
	}
	if _, ignore := dc.Annotations[dcv1.DeployerPodIgnoreAnnotation]; ignore {
		return false
	}
	inController, err := runsInControllerUnder(p.Mode, p.AllowModeChoice, dc)
	return err == nil && inController
}

// startCreated starts the run of a deployment createRunning prepared and
// the API server created. A replica that has just stopped leading starts
// nothing: the next leader's deployer controller resumes the rollout.
func (p runPlacement) startCreated(ctx context.Context, rc *corev1.ReplicationController, dc *dcv1.DeploymentConfig, started time.Time) error {
	err := p.runner.start(newRolloutStart(rc, dc, started, false))
	if err != nil {
		p.runner.release(rc)
	}
	if errors.Is(err, errNotLeading) {
		return nil
	}
	if err == nil {
		log.FromContext(ctx).Info("running the rollout in the controller", "rc", rc.Name)
	}
	return err
}

// logAnnotation is the annotation that keeps the run's log on its
// deployment; nil without a run.
func (run *run) logAnnotation() map[string]*string {
	if run == nil {
		return nil
	}
	return deployment.LogPatch(run.log.String())
}
