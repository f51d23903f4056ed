package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Event reasons of the deployer controller.
const (
	EventRolloutCancelled   = "RolloutCancelled"
	EventFailedCancellation = "FailedCancellation"
	EventFailedCreate       = "FailedCreate"
	EventDeploymentFailed   = "DeploymentFailed"
	// EventUnknownPhase: the RC's phase annotation holds a value
	// deployconfig never writes (someone edited it); the deployment fails.
	EventUnknownPhase = "UnknownDeploymentPhase"
	// EventInvalidDeployerMode: the DeploymentConfig's deployer-mode
	// annotation holds no mode; the rollout runs in the controller's mode.
	EventInvalidDeployerMode = "InvalidDeployerMode"
)

// Status reasons the deployer controller records on a failed deployment.
const (
	reasonDeployerPodGone       = "deployer pod no longer exists"
	reasonDeployerPodNotCreated = "unable to create deployer pod"
	reasonDeployerPodFailed     = "deployer pod failed"
	reasonDeployerPodConflict   = "a pod named %q already exists and belongs to another deployment"
	reasonUnknownPhase          = "unknown phase %q in annotation %s (expected New, Pending, Running, Complete or Failed)"
	// A rollout dc-controller runs in itself fails with the deployer's
	// error, as dc-deploy prints it in a pod's log.
	reasonDeployerFailed   = "deployer failed: %v"
	reasonDeadlineExceeded = "deployer exceeded its active deadline"
)

// podByDeployment indexes deployer and hook pods by their deployment (RC).
const podByDeployment = "deployconfig.pod.byDeployment"

// pendingGrace is how long a New deployment whose deployer pod has not
// started stays New. The phase follows the pod, and a deployer pod usually
// starts within a second or two of its creation: writing Pending at the
// creation only for Running to replace it a moment later is one RC write
// per rollout through the controller's rate-limited client.
// OpenShift allows New→Running. A pod that has not started by then (no
// node yet, an image to pull) moves the deployment to Pending as before.
// Creation times have a resolution of a second, so the wait is 1 to 2 s.
const pendingGrace = 2 * time.Second

// DeployerReconciler drives a deployment through New, Pending, Running and
// Complete or Failed by running its deployer pod and following its phase.
type DeployerReconciler struct {
	Client    client.Client
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// DeployerImage is the image of deployer pods unless a strategy's
	// customParams names another.
	DeployerImage string
	access        *deployerAccess
	// created remembers the deployer pods this controller created moments
	// ago (see syncNew).
	created recentCreates[types.UID]
	// finished counts the rollouts this controller finishes (metrics.go).
	finished *prometheus.CounterVec
	// runPlacement says where rollouts run; its runner runs those that
	// run in the controller.
	runPlacement
}

// Reconcile syncs one deployment.
func (r *DeployerReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	rc := &corev1.ReplicationController{}
	if err := r.Client.Get(ctx, req.NamespacedName, rc); err != nil {
		if apierrors.IsNotFound(err) {
			r.runner.forget(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if rc.Labels[dcv1.DeploymentConfigLabel] == "" || rc.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	if runInController(rc) && deployerStepOf(rc) == stepActive {
		return r.syncInController(ctx, rc)
	}
	pod, err := r.deployerPod(ctx, rc)
	if err != nil {
		return reconcile.Result{}, err
	}
	switch deployerStepOf(rc) {
	case stepNew:
		return r.syncNew(ctx, rc, pod)
	case stepActive:
		return reconcile.Result{}, r.syncActive(ctx, rc, pod)
	case stepTerminal:
		return reconcile.Result{}, r.syncTerminal(ctx, rc)
	default:
		return reconcile.Result{}, r.failUnknownPhase(ctx, rc, deployment.Phase(rc))
	}
}

// deployerStep is what the deployer controller does with a deployment.
type deployerStep int

const (
	stepNew          deployerStep = iota // create the deployer pod
	stepActive                           // follow the deployer pod
	stepTerminal                         // tidy a finished deployment
	stepUnknownPhase                     // fail a deployment of an unknown phase
)

// deployerStepOf decides the deployer controller's step from the
// deployment's phase annotation, whatever its value.
func deployerStepOf(rc *corev1.ReplicationController) deployerStep {
	switch deployment.Phase(rc) {
	case dcv1.DeploymentPhaseNew:
		return stepNew
	case dcv1.DeploymentPhasePending, dcv1.DeploymentPhaseRunning:
		return stepActive
	case dcv1.DeploymentPhaseComplete, dcv1.DeploymentPhaseFailed:
		return stepTerminal
	}
	return stepUnknownPhase
}

// failUnknownPhase fails a deployment whose phase annotation holds a value
// deployconfig never writes. Nothing can tell how far it got, and left
// alone it would hold up its DeploymentConfig, which waits for every older
// deployment to finish and for the latest to before it scales anything.
// Failed lets the DeploymentConfig move on: the fall-back runs, and a new
// rollout or a retry starts as after any failure. Its deployer pod, if one
// is running, is stopped first, as a cancel does.
func (r *DeployerReconciler) failUnknownPhase(ctx context.Context, rc *corev1.ReplicationController, phase dcv1.DeploymentPhase) error {
	reason := fmt.Sprintf(reasonUnknownPhase, phase, dcv1.DeploymentPhaseAnnotation)
	if !deployment.IsCancelled(rc) {
		r.Recorder.Eventf(rc, nil, corev1.EventTypeWarning, EventUnknownPhase, "Deploy", "Deployment %q: %s", rc.Name, reason)
		return cancelDeployment(ctx, r.Client, rc, reason)
	}
	return r.finishCancel(ctx, rc)
}

// deployerPod returns the deployment's deployer pod, or nil when there is none.
func (r *DeployerReconciler) deployerPod(ctx context.Context, rc *corev1.ReplicationController) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	key := types.NamespacedName{Namespace: rc.Namespace, Name: deployment.DeployerPodName(rc.Name)}
	if err := r.Client.Get(ctx, key, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get deployer pod %s: %w", key, err)
	}
	return pod, nil
}

func (r *DeployerReconciler) syncNew(ctx context.Context, rc *corev1.ReplicationController, pod *corev1.Pod) (reconcile.Result, error) {
	if deployment.IsCancelled(rc) {
		return reconcile.Result{}, r.finishCancel(ctx, rc)
	}
	if pod == nil && r.created.within(rc.UID, r.Clock.Now(), 2*pendingGrace) {
		// A New deployment whose pod we created moments ago: the cache
		// has not seen the pod yet. Reading it is cheaper than a create
		// the API server refuses (see pendingGrace: the deployment stays
		// New a while after the create).
		fresh, err := r.livePod(ctx, rc)
		if err != nil {
			return reconcile.Result{}, err
		}
		pod = fresh
	}
	if pod != nil {
		return r.syncNewWithPod(ctx, rc, pod)
	}
	dc, err := encodedConfig(ctx, r.APIReader, rc)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, r.fail(ctx, rc, err.Error())
	}
	if _, ignore := dc.Annotations[dcv1.DeployerPodIgnoreAnnotation]; ignore {
		return reconcile.Result{}, nil
	}
	inController, err := runsInControllerUnder(r.Mode, r.AllowModeChoice, dc)
	if err != nil {
		r.Recorder.Eventf(rc, nil, corev1.EventTypeWarning, EventInvalidDeployerMode, "Deploy",
			"%v; the rollout runs in dc-controller's mode, %s", err, r.Mode)
	}
	if inController && r.runner != nil {
		return r.startInController(ctx, rc, dc)
	}
	pod = deployerPod(rc, dc, r.DeployerImage)
	err = r.Client.Create(ctx, pod)
	if apierrors.IsAlreadyExists(err) {
		// The cache is behind, or holds no such pod: it keeps only
		// deployer pods that have not finished, and only ours.
		existing, err := r.livePod(ctx, rc)
		if err != nil || existing == nil {
			return reconcile.Result{RequeueAfter: time.Second}, err
		}
		return r.syncNewWithPod(ctx, rc, existing)
	}
	if err != nil {
		return r.createFailed(ctx, rc, dc, err)
	}
	r.created.record(rc.UID, r.Clock.Now())
	log.FromContext(ctx).Info("created deployer pod", "pod", pod.Name)
	// The pod's events bring the deployment back; the requeue writes
	// Pending if the pod has not started by then (see pendingGrace).
	return reconcile.Result{RequeueAfter: pendingGrace}, nil
}

// syncNewWithPod handles a New deployment whose deployer pod exists.
func (r *DeployerReconciler) syncNewWithPod(ctx context.Context, rc *corev1.ReplicationController, pod *corev1.Pod) (reconcile.Result, error) {
	if pod.Labels[dcv1.DeployerPodForDeploymentLabel] != rc.Name {
		return reconcile.Result{}, r.fail(ctx, rc, fmt.Sprintf(reasonDeployerPodConflict, pod.Name))
	}
	if !podFinished(pod) && pod.DeletionTimestamp == nil {
		if wait := r.startWait(pod); wait > 0 {
			return reconcile.Result{RequeueAfter: wait}, nil
		}
		return reconcile.Result{}, r.followPod(ctx, rc, pod)
	}
	// A finished or going pod in New is either from the attempt before a
	// user's retry, which the retry deleted, or an earlier sync's pod that
	// finished before its phase was written. Only the API server can say
	// which; its deletion is not watched (the cache drops finished pods), so
	// the new attempt looks again shortly.
	fresh, err := r.livePod(ctx, rc)
	if err != nil || fresh == nil || fresh.UID != pod.UID || fresh.DeletionTimestamp != nil {
		return reconcile.Result{RequeueAfter: time.Second}, err
	}
	return reconcile.Result{}, r.followPod(ctx, rc, fresh)
}

// startWait is how much longer a New deployment's unfinished deployer pod
// may take to start before the deployment is written Pending; 0 when the
// pod runs or pendingGrace has passed since its creation.
func (r *DeployerReconciler) startWait(pod *corev1.Pod) time.Duration {
	if pod.Status.Phase != corev1.PodPending && pod.Status.Phase != "" {
		return 0
	}
	return max(pendingGrace-r.Clock.Since(pod.CreationTimestamp.Time), 0)
}

// livePod reads the deployment's deployer pod from the API server, nil when
// there is none.
func (r *DeployerReconciler) livePod(ctx context.Context, rc *corev1.ReplicationController) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	key := types.NamespacedName{Namespace: rc.Namespace, Name: deployment.DeployerPodName(rc.Name)}
	if err := r.APIReader.Get(ctx, key, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get deployer pod %s: %w", key, err)
	}
	return pod, nil
}

// createFailed retries a deployer pod that could not be created until the
// strategy's timeout, counted from the first failure (recorded on the RC so
// that a controller restart or a user's retry counts afresh), has passed.
func (r *DeployerReconciler) createFailed(ctx context.Context, rc *corev1.ReplicationController, dc *dcv1.DeploymentConfig, createErr error) (reconcile.Result, error) {
	r.access.forget(rc.Namespace)
	r.Recorder.Eventf(rc, nil, corev1.EventTypeWarning, EventFailedCreate, "Create", "Error creating deployer pod: %v", createErr)
	timeout := strategyTimeout(dc)
	since, err := time.Parse(time.RFC3339, rc.Annotations[dcv1.DeployerPodCreateFailingSinceAnnotation])
	if err != nil {
		patch := client.MergeFrom(rc.DeepCopy())
		rc.Annotations[dcv1.DeployerPodCreateFailingSinceAnnotation] = r.Clock.Now().UTC().Format(time.RFC3339)
		if err := r.Client.Patch(ctx, rc, patch); err != nil {
			return reconcile.Result{}, fmt.Errorf("record deployer pod failure of %s/%s: %w", rc.Namespace, rc.Name, client.IgnoreNotFound(err))
		}
		since = r.Clock.Now()
	}
	if r.Clock.Since(since) > timeout {
		return reconcile.Result{}, r.fail(ctx, rc, reasonDeployerPodNotCreated)
	}
	log.FromContext(ctx).Error(createErr, "create deployer pod", "rc", rc.Name)
	return createRetry(timeout), nil
}

// createRetry is when a deployer pod that could not be created is tried
// again: every 5 seconds (or the strategy's timeout, if shorter), at the
// priority of bookkeeping. A new deployment is queued ahead of the
// bookkeeping (see priority.go), but its retries wait their turn: pods
// that keep failing to be created (a namespace out of quota, say) would
// otherwise take the controller's writes every 5 seconds, ahead of all
// else, until their timeout.
func createRetry(timeout time.Duration) reconcile.Result {
	return reconcile.Result{RequeueAfter: min(timeout, 5*time.Second), Priority: ptr(0)}
}

// syncActive follows a Pending or Running deployment's deployer pod.
func (r *DeployerReconciler) syncActive(ctx context.Context, rc *corev1.ReplicationController, pod *corev1.Pod) error {
	if deployment.IsCancelled(rc) {
		return r.finishCancel(ctx, rc)
	}
	if pod == nil {
		// The cache keeps only deployer pods that have not finished, and
		// may not have seen one created moments ago: only the API server
		// can say whether the pod finished or is gone.
		fresh, err := r.livePod(ctx, rc)
		if err != nil {
			return err
		}
		if fresh == nil {
			return r.fail(ctx, rc, reasonDeployerPodGone)
		}
		if fresh.Labels[dcv1.DeployerPodForDeploymentLabel] == rc.Name && !podFinished(fresh) {
			return nil
		}
		pod = fresh
	}
	if pod.Labels[dcv1.DeployerPodForDeploymentLabel] != rc.Name {
		return r.fail(ctx, rc, fmt.Sprintf(reasonDeployerPodConflict, pod.Name))
	}
	return r.followPod(ctx, rc, pod)
}

// followPod moves the deployment to the phase its deployer pod is in.
func (r *DeployerReconciler) followPod(ctx context.Context, rc *corev1.ReplicationController, pod *corev1.Pod) error {
	if deployerSucceeded(pod) {
		return r.setPhase(ctx, rc, dcv1.DeploymentPhaseComplete, "")
	}
	switch pod.Status.Phase {
	case corev1.PodRunning:
		return r.setPhase(ctx, rc, dcv1.DeploymentPhaseRunning, "")
	case corev1.PodFailed:
		return r.fail(ctx, rc, podFailureReason(pod))
	default:
		return r.setPhase(ctx, rc, dcv1.DeploymentPhasePending, "")
	}
}

// deployerSucceeded reports whether the deployer pod has done its work:
// it Succeeded, or every container of a pod that is never restarted has
// exited 0. A real kubelet reports the container's exit about a second
// before it has stopped the pod's sandbox and reports the phase (the
// real-node benchmark measured 1.2 s at p50); the outcome is decided then,
// and the rollout is complete for its user.
func deployerSucceeded(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded {
		return true
	}
	if pod.Status.Phase != corev1.PodRunning || pod.Spec.RestartPolicy != corev1.RestartPolicyNever || pod.DeletionTimestamp != nil {
		return false
	}
	if len(pod.Status.ContainerStatuses) != len(pod.Spec.Containers) {
		return false
	}
	for _, s := range pod.Status.ContainerStatuses {
		if t := s.State.Terminated; t == nil || t.ExitCode != 0 {
			return false
		}
	}
	return true
}

func podFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// podFailureReason says why a deployer pod failed, from its status. A pod
// that failed because it is being deleted is "no longer there": a real
// kubelet stops the deleted pod's container, so it reports Failed before it
// goes, where kwok (and a pod deleted with no grace) just goes.
func podFailureReason(pod *corev1.Pod) string {
	if pod.DeletionTimestamp != nil {
		return reasonDeployerPodGone
	}
	if pod.Status.Reason == "DeadlineExceeded" {
		return "deployer pod exceeded its active deadline"
	}
	for _, s := range pod.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil && t.Message != "" {
			return fmt.Sprintf("%s: %s", reasonDeployerPodFailed, t.Message)
		}
	}
	return reasonDeployerPodFailed
}

// finishCancel stops a cancelled deployment: it deletes the deployer and
// hook pods and, once they are gone, fails the deployment.
func (r *DeployerReconciler) finishCancel(ctx context.Context, rc *corev1.ReplicationController) error {
	run, err := r.runner.stop(ctx, rc)
	if err != nil {
		return err
	}
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(rc.Namespace), client.MatchingFields{podByDeployment: rc.Name}); err != nil {
		return fmt.Errorf("list deployer pods of %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil {
			continue
		}
		if err := r.Client.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	if len(pods.Items) > 0 {
		// Their deletion events bring us back.
		return nil
	}
	reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]
	if reason == "" {
		reason = dcv1.DeploymentCancelledByUser
	}
	if err := r.setPhaseWith(ctx, rc, dcv1.DeploymentPhaseFailed, reason, run.logAnnotation()); err != nil {
		return err
	}
	r.Recorder.Eventf(rc, nil, corev1.EventTypeNormal, EventRolloutCancelled, "Cancel", "Rollout for %q cancelled: %s", rc.Name, reason)
	return nil
}

// syncTerminal tidies a finished deployment: a cancel that arrived after
// success is dropped, and a test deployment is scaled to zero.
func (r *DeployerReconciler) syncTerminal(ctx context.Context, rc *corev1.ReplicationController) error {
	// Its outcome is recorded: the run, if it ran here, can go.
	r.runner.forget(client.ObjectKeyFromObject(rc))
	if lateCancel(rc) {
		patch := client.MergeFrom(rc.DeepCopy())
		delete(rc.Annotations, dcv1.DeploymentCancelledAnnotation)
		delete(rc.Annotations, dcv1.DeploymentStatusReasonAnnotation)
		if err := r.Client.Patch(ctx, rc, patch); err != nil {
			return fmt.Errorf("drop cancellation of %s/%s: %w", rc.Namespace, rc.Name, client.IgnoreNotFound(err))
		}
		r.Recorder.Eventf(rc, nil, corev1.EventTypeWarning, EventFailedCancellation, "Cancel", "Succeeded before cancel recorded")
	}
	if !testToScaleDown(rc) {
		return nil
	}
	patch := client.MergeFrom(rc.DeepCopy())
	zero := int32(0)
	rc.Spec.Replicas = &zero
	rc.Annotations[dcv1.DeploymentReplicasAnnotation] = "0"
	if err := r.Client.Patch(ctx, rc, patch); err != nil {
		return fmt.Errorf("scale test deployment %s/%s to 0: %w", rc.Namespace, rc.Name, client.IgnoreNotFound(err))
	}
	return nil
}

// lateCancel reports whether a Complete deployment carries a cancel that
// arrived after it succeeded, which syncTerminal drops.
func lateCancel(rc *corev1.ReplicationController) bool {
	return deployment.Phase(rc) == dcv1.DeploymentPhaseComplete && deployment.IsCancelled(rc)
}

// testToScaleDown reports whether a finished deployment of a test
// DeploymentConfig still has replicas, which syncTerminal takes away.
func testToScaleDown(rc *corev1.ReplicationController) bool {
	s := configSummary(rc)
	return s.Error == "" && s.Test && deployment.Replicas(rc) != 0
}

// finishedAtRest reports whether a deployment is finished with nothing
// left for syncTerminal to tidy.
func finishedAtRest(rc *corev1.ReplicationController) bool {
	return deployment.IsTerminal(deployment.Phase(rc)) && !lateCancel(rc) && !testToScaleDown(rc)
}

// fail moves the deployment to Failed with a reason.
func (r *DeployerReconciler) fail(ctx context.Context, rc *corev1.ReplicationController, reason string) error {
	return r.failWith(ctx, rc, reason, nil)
}

// failWith moves the deployment to Failed with a reason, writing extra
// annotations with the phase (see setPhaseWith).
func (r *DeployerReconciler) failWith(ctx context.Context, rc *corev1.ReplicationController, reason string, extra map[string]*string) error {
	if err := r.setPhaseWith(ctx, rc, dcv1.DeploymentPhaseFailed, reason, extra); err != nil {
		return err
	}
	r.Recorder.Eventf(rc, nil, corev1.EventTypeWarning, EventDeploymentFailed, "Deploy", "Deployment %q failed: %s", rc.Name, reason)
	return nil
}

// setPhase writes a phase (and status reason) if the move is allowed; an
// illegal move is never written. The write is a JSON patch that first tests
// the phase it moves from, so it cannot undo a move someone else (a user's
// retry) made meanwhile, yet does not fail on unrelated changes to the RC
// (its status, other annotations) as a resourceVersion check would.
func (r *DeployerReconciler) setPhase(ctx context.Context, rc *corev1.ReplicationController, phase dcv1.DeploymentPhase, reason string) error {
	return r.setPhaseWith(ctx, rc, phase, reason, nil)
}

// setPhaseWith is setPhase writing extra annotations in the same patch: a
// value sets one, nil removes one that is there.
func (r *DeployerReconciler) setPhaseWith(ctx context.Context, rc *corev1.ReplicationController, phase dcv1.DeploymentPhase, reason string, extra map[string]*string) error {
	current := deployment.Phase(rc)
	if current == phase || !deployment.CanTransition(current, phase) {
		return nil
	}
	patch, err := phasePatch(rc, phase, reason, extra)
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, rc, patch); err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsConflict(err) {
			// The phase moved under us; the RC's event brings us back.
			return nil
		}
		return fmt.Errorf("set phase of %s/%s to %s: %w", rc.Namespace, rc.Name, phase, client.IgnoreNotFound(err))
	}
	log.FromContext(ctx).Info("deployment phase", "rc", rc.Name, "from", current, "to", phase, "reason", reason)
	countFinished(r.finished, rc, phase)
	return nil
}

// phasePatch builds the JSON patch of setPhaseWith.
func phasePatch(rc *corev1.ReplicationController, phase dcv1.DeploymentPhase, reason string, extra map[string]*string) (client.Patch, error) {
	path := func(key string) string {
		return "/metadata/annotations/" + strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
	}
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value,omitempty"`
	}
	var ops []op
	if current, ok := rc.Annotations[dcv1.DeploymentPhaseAnnotation]; ok {
		ops = append(ops, op{Op: "test", Path: path(dcv1.DeploymentPhaseAnnotation), Value: current})
	} else {
		// An RC made before phases were recorded: take the whole
		// annotations map, guarded by the RC's version.
		ops = append(ops, op{Op: "test", Path: "/metadata/resourceVersion", Value: rc.ResourceVersion})
		if rc.Annotations == nil {
			ops = append(ops, op{Op: "add", Path: "/metadata/annotations", Value: map[string]string{}})
		}
	}
	ops = append(ops, op{Op: "add", Path: path(dcv1.DeploymentPhaseAnnotation), Value: string(phase)})
	if reason != "" {
		ops = append(ops, op{Op: "add", Path: path(dcv1.DeploymentStatusReasonAnnotation), Value: reason})
	}
	if _, ok := rc.Annotations[dcv1.DeployerPodCreateFailingSinceAnnotation]; ok {
		ops = append(ops, op{Op: "remove", Path: path(dcv1.DeployerPodCreateFailingSinceAnnotation)})
	}
	for _, key := range slices.Sorted(maps.Keys(extra)) {
		switch _, ok := rc.Annotations[key]; {
		case extra[key] != nil:
			ops = append(ops, op{Op: "add", Path: path(key), Value: *extra[key]})
		case ok:
			ops = append(ops, op{Op: "remove", Path: path(key)})
		}
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("phase patch for %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	return client.RawPatch(types.JSONPatchType, data), nil
}

// strategyTimeout is how long a deployment may wait for its deployer pod.
func strategyTimeout(dc *dcv1.DeploymentConfig) time.Duration {
	seconds := dcv1.DefaultTimeoutSeconds
	switch s := dc.Spec.Strategy; {
	case s.Type == dcv1.DeploymentStrategyTypeRecreate && s.RecreateParams != nil && s.RecreateParams.TimeoutSeconds != nil:
		seconds = *s.RecreateParams.TimeoutSeconds
	case s.Type == dcv1.DeploymentStrategyTypeRolling && s.RollingParams != nil && s.RollingParams.TimeoutSeconds != nil:
		seconds = *s.RollingParams.TimeoutSeconds
	case s.Type == dcv1.DeploymentStrategyTypeBlueGreen && s.BlueGreenParams != nil && s.BlueGreenParams.TimeoutSeconds != nil:
		seconds = *s.BlueGreenParams.TimeoutSeconds
	}
	return time.Duration(seconds) * time.Second
}
