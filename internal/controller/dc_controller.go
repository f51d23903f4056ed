package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/cachedconfig"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Event reasons of the DeploymentConfig controller. They are stable: users
// and alerts select on them.
const (
	EventDeploymentCreated              = "DeploymentCreated"
	EventDeploymentCreationFailed       = "DeploymentCreationFailed"
	EventDeploymentCancelled            = "DeploymentCancelled"
	EventDeploymentAwaitingCancellation = "DeploymentAwaitingCancellation"
	EventReplicationControllerScaled    = "ReplicationControllerScaled"
	EventDeploymentCleanupFailed        = "DeploymentCleanupFailed"
)

// rcByDeploymentConfig indexes RCs by the DeploymentConfig that names them in
// its label and by the one that controls them, so a sync finds both the RCs
// to adopt and those to release without scanning the namespace.
const rcByDeploymentConfig = "deployconfig.rc.byDeploymentConfig"

// DeploymentConfigReconciler turns a DeploymentConfig into deployments: it
// fires triggers, creates the RC of each new version, keeps only the last
// good version scaled up, prunes history and reports status.
type DeploymentConfigReconciler struct {
	Client    client.Client
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	access    *deployerAccess
	// gate admits rollouts under the concurrency limits (nil: none).
	gate *rolloutGate
	// memo spares reads of followed ConfigMaps that did not change (nil:
	// every sync reads them).
	memo *sourceMemo
	// invalid remembers the specs whose analyses are invalid (nil: none).
	invalid *invalidAnalyses
	// keys holds the namespaces' keys of Secret copy names (nil: read
	// every time).
	keys *snapshotKeys
	// placement creates the deployments of rollouts that run in the
	// controller already Running, and starts them (zero: every deployment
	// is created New).
	placement runPlacement
	// created remembers the deployments created that the cache may not
	// show yet.
	created recentCreates[createdVersion]
}

// Reconcile syncs one DeploymentConfig.
func (r *DeploymentConfigReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	dc := &dcv1.DeploymentConfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, dc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if err := cachedconfig.Expand(dc); err != nil {
		return reconcile.Result{}, err
	}
	dcv1.SetDefaults(dc)
	original := dc.Status.DeepCopy()

	// latestVersion is the DeploymentConfig's own, as in OpenShift: the
	// version an RC claims (its annotation, which anyone who may edit RCs
	// can write, or the name of an RC made by hand) never raises it, or
	// the CRD's never-decreases rule would make a bogus value permanent.
	// A DeploymentConfig created again over the RCs of an earlier one of
	// the same name walks up to them: each version's RC already exists and
	// is adopted (checkExisting), and its config change trigger fires
	// until a deployment matches the template.
	rcs, err := r.claimDeployments(ctx, dc)
	if err != nil {
		return reconcile.Result{}, err
	}

	if dc.DeletionTimestamp != nil {
		return r.writeStatus(ctx, dc, original, rcs, nil)
	}
	if err := r.access.ensure(ctx, dc.Namespace); err != nil {
		if isNamespaceTerminating(err) {
			// Nothing can be created there any more; the DC is going away.
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if request, ok := dc.Annotations[dcv1.RolloutRequestAnnotation]; ok {
		// The removal of the request brings the sync back.
		return r.handleRolloutRequest(ctx, dc, rcs, request)
	}
	if dc.Spec.Paused {
		r.tidyHistory(ctx, dc, original, rcs)
		return r.writeStatus(ctx, dc, original, rcs, nil)
	}

	latest := findVersion(rcs, dc.Status.LatestVersion)
	if latest != nil {
		r.created.forget(createdVersion{dc.UID, dc.Status.LatestVersion})
	}
	// claimed is the status before a trigger's claim, planned the
	// deployment the claim described (both nil without a claim).
	var claimed *dcv1.DeploymentConfigStatus
	var planned *corev1.ReplicationController
	details := triggeredRollout(dc, latest)
	if details == nil {
		if details, err = r.configDataRollout(ctx, dc, latest); err != nil {
			return reconcile.Result{}, err
		}
	}
	if details != nil {
		dc.Status.LatestVersion++
		dc.Status.Details = details
		log.FromContext(ctx).Info("trigger fired", "version", dc.Status.LatestVersion, "cause", details.Message)
		r.recordConfigDataEvent(dc, details)
		// The status write claims the version: when it conflicts, the cache
		// was behind and nothing may be made from what it showed. When the
		// deployment can be created at once, the claim already says what
		// the status will say once it is (see plannedDeployment): one
		// status write per start, as a Deployment's.
		claimed = original.DeepCopy()
		planned = r.plannedDeployment(dc, rcs)
		written, result, err := r.putStatus(ctx, dc, original, withDeployment(rcs, planned), nil)
		if !written || err != nil {
			return result, err
		}
		// The version is ours: its RC is created in this sync rather than
		// on the next, which under load waits behind every other queued
		// DeploymentConfig. The write replaced dc with the server's copy;
		// make it what a sync reads from the cache before it is encoded.
		dc.ManagedFields = nil
		dcv1.SetDefaults(dc)
		original, latest = dc.Status.DeepCopy(), nil
	}
	if dc.Status.LatestVersion == 0 {
		return r.writeStatus(ctx, dc, original, rcs, nil)
	}
	// The Services go first: pointed at the live deployment before the
	// fall-back scales the others down, they never select one at zero
	// while another one serves.
	if err := r.syncServices(ctx, dc, rcs); err != nil {
		return reconcile.Result{}, err
	}
	if latest == nil && r.created.within(createdVersion{dc.UID, dc.Status.LatestVersion}, r.Clock.Now(), recentCreateTTL) {
		// Created by an earlier sync; its arrival in the cache syncs again.
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	if latest == nil {
		created, createErr := r.startDeployment(ctx, dc, rcs)
		if isNamespaceTerminating(createErr) {
			return reconcile.Result{}, nil
		}
		if planned != nil && created == nil {
			// The claim described a deployment this sync did not make: the
			// Progressing condition goes back to what it said before.
			restoreCondition(&dc.Status, claimed, dcv1.DeploymentProgressing)
		}
		if errors.Is(createErr, errCacheBehind) {
			// The deployment exists; the sync that sees it writes the
			// status, which this one could only write as "waiting for its
			// replication controller".
			return reconcile.Result{RequeueAfter: time.Second}, nil
		}
		rcs = withDeployment(rcs, created)
		result, err := r.writeStatus(ctx, dc, original, rcs, createErr)
		if queued := (*QueuedError)(nil); err == nil && errors.As(createErr, &queued) {
			// What it waits for wakes it (rolloutGate.admit).
			return reconcile.Result{RequeueAfter: queued.Retry}, nil
		}
		if err == nil && createErr != nil {
			// The error requeues the sync; a Requeue result would be ignored.
			return reconcile.Result{}, createErr
		}
		return result, err
	}
	if err := r.ownSnapshots(ctx, latest); err != nil {
		return reconcile.Result{}, err
	}
	if deployment.IsTerminal(deployment.Phase(latest)) {
		if restored, err := r.restoreActive(ctx, dc, rcs); err != nil || restored {
			// The restored deployment's return to the cache syncs again.
			return reconcile.Result{}, err
		}
		if err := r.scaleDeployments(ctx, dc, rcs); err != nil {
			return requeueIfBehind(err)
		}
		r.tidyHistory(ctx, dc, original, rcs)
	} else if err := r.recordDesiredReplicas(ctx, dc, latest); err != nil {
		return requeueIfBehind(err)
	}
	return r.writeStatus(ctx, dc, original, rcs, nil)
}

// claimDeployments returns the RCs of the DeploymentConfig, oldest first,
// after adopting orphans that carry its label and releasing RCs it controls
// that no longer do.
func (r *DeploymentConfigReconciler) claimDeployments(ctx context.Context, dc *dcv1.DeploymentConfig) ([]*corev1.ReplicationController, error) {
	list := &corev1.ReplicationControllerList{}
	if err := r.Client.List(ctx, list, client.InNamespace(dc.Namespace), client.MatchingFields{rcByDeploymentConfig: dc.Name}); err != nil {
		return nil, fmt.Errorf("list replicationcontrollers of %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	return r.claim(ctx, dc, list)
}

// claim returns the RCs of list the DeploymentConfig controls, oldest first,
// after adopting orphans that carry its label and releasing RCs it controls
// that no longer do.
func (r *DeploymentConfigReconciler) claim(ctx context.Context, dc *dcv1.DeploymentConfig, list *corev1.ReplicationControllerList) ([]*corev1.ReplicationController, error) {
	var owned []*corev1.ReplicationController
	for i := range list.Items {
		rc := &list.Items[i]
		labelled := rc.Labels[dcv1.DeploymentConfigLabel] == dc.Name
		ref := metav1.GetControllerOf(rc)
		switch {
		case ref != nil && ref.UID == dc.UID && (labelled || dc.DeletionTimestamp != nil):
			owned = append(owned, rc)
		case ref != nil && ref.UID == dc.UID:
			if err := r.release(ctx, rc); err != nil {
				return nil, err
			}
		case ref == nil && labelled && dc.DeletionTimestamp == nil:
			adopted, err := r.adopt(ctx, dc, rc)
			if err != nil {
				return nil, err
			}
			if adopted {
				owned = append(owned, rc)
			}
		}
	}
	deployment.SortByVersion(owned)
	return owned, nil
}

// adopt makes the DeploymentConfig the controller of an orphan RC, after
// checking with the API server (not the cache) that this DeploymentConfig
// still exists: adopting for a deleted one would keep its RCs alive.
func (r *DeploymentConfigReconciler) adopt(ctx context.Context, dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) (bool, error) {
	fresh := &dcv1.DeploymentConfig{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(dc), fresh); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if fresh.UID != dc.UID || fresh.DeletionTimestamp != nil {
		return false, nil
	}
	patch := client.MergeFromWithOptions(rc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	rc.OwnerReferences = append(rc.OwnerReferences, *metav1.NewControllerRef(dc, dcv1.GroupVersion.WithKind("DeploymentConfig")))
	if err := r.Client.Patch(ctx, rc, patch); err != nil {
		return false, fmt.Errorf("adopt replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, client.IgnoreNotFound(err))
	}
	log.FromContext(ctx).Info("adopted replicationcontroller", "rc", rc.Name)
	return true, nil
}

// release removes the DeploymentConfig's controller reference from an RC
// that no longer carries its label.
func (r *DeploymentConfigReconciler) release(ctx context.Context, rc *corev1.ReplicationController) error {
	if err := releaseRC(ctx, r.Client, rc); err != nil {
		return err
	}
	log.FromContext(ctx).Info("released replicationcontroller", "rc", rc.Name)
	return nil
}

// releaseRC drops the controller reference of an RC.
func releaseRC(ctx context.Context, c client.Client, rc *corev1.ReplicationController) error {
	patch := client.MergeFromWithOptions(rc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	var refs []metav1.OwnerReference
	for _, ref := range rc.OwnerReferences {
		if ref.Controller == nil || !*ref.Controller {
			refs = append(refs, ref)
		}
	}
	rc.OwnerReferences = refs
	if err := c.Patch(ctx, rc, patch); err != nil {
		return fmt.Errorf("release replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, client.IgnoreNotFound(err))
	}
	return nil
}

func findVersion(rcs []*corev1.ReplicationController, version int64) *corev1.ReplicationController {
	if version == 0 {
		return nil
	}
	for _, rc := range rcs {
		if deployment.Version(rc) == version {
			return rc
		}
	}
	return nil
}

// startDeployment creates the RC of latestVersion once every older
// deployment has finished: it cancels the ones still running and waits for
// them, so that two deployers never run at once. It returns the RC when
// the API server created it, and the error of a failed create, which the
// status reports.
func (r *DeploymentConfigReconciler) startDeployment(ctx context.Context, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) (*corev1.ReplicationController, error) {
	running := 0
	for _, rc := range rcs {
		if deployment.IsTerminal(deployment.Phase(rc)) {
			continue
		}
		running++
		if deployment.IsCancelled(rc) {
			continue
		}
		if err := cancelDeployment(ctx, r.Client, rc, dcv1.DeploymentCancelledNewerDeploymentExists); err != nil {
			return nil, fmt.Errorf("cancel %s: %w", rc.Name, err)
		}
		r.Recorder.Eventf(dc, rc, corev1.EventTypeNormal, EventDeploymentCancelled, "Cancel",
			"Cancelled deployment %q superseded by version %d", rc.Name, dc.Status.LatestVersion)
	}
	if running > 0 {
		r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventDeploymentAwaitingCancellation, "Wait",
			"Deployment of version %d awaiting cancellation of older running deployments", dc.Status.LatestVersion)
		return nil, nil
	}
	// A failed or cancelled rollout may have left its deployment with pods
	// when the DeploymentConfig changed before the fall-back ran. The new
	// deployer counts only its own and the active deployment's pods against
	// maxSurge, so the fall-back runs first and the new deployment waits
	// until those pods are gone.
	if err := r.scaleDeployments(ctx, dc, rcs); err != nil {
		return nil, err
	}
	rc, err := r.leftoverPods(ctx, rcs)
	if err != nil {
		return nil, err
	}
	if rc != nil {
		log.FromContext(ctx).Info("waiting for the pods of an earlier deployment to go", "version", dc.Status.LatestVersion, "rc", rc.Name)
		return nil, nil
	}
	if hasEmptyImage(dc.Spec.Template) {
		log.FromContext(ctx).Info("not deploying a template with an empty image", "version", dc.Status.LatestVersion)
		return nil, nil
	}
	if err := r.refuseInvalidAnalyses(dc); err != nil {
		return nil, err
	}
	if err := r.refuseInvalidHeaderRoutes(dc); err != nil {
		return nil, err
	}
	if err := r.checkGatewayAPI(ctx, dc); err != nil {
		return nil, err
	}
	if err := r.gate.admit(ctx, dc); err != nil {
		return nil, err
	}
	return r.createDeployment(ctx, dc)
}

// leftoverPods returns a deployment other than the last complete one that
// still has pods, or nil. RC status answers for an RC the RC manager has
// reported on; an RC it has scaled but never reported on may already have
// pods its status does not count, so those are looked up.
func (r *DeploymentConfigReconciler) leftoverPods(ctx context.Context, rcs []*corev1.ReplicationController) (*corev1.ReplicationController, error) {
	counted, unreported := leftoverDeployments(rcs)
	if counted != nil {
		return counted, nil
	}
	for _, rc := range unreported {
		pods := &metav1.PartialObjectMetadataList{}
		pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
		err := r.APIReader.List(ctx, pods, client.InNamespace(rc.Namespace), client.MatchingLabels(rc.Spec.Selector), client.Limit(1))
		if err != nil {
			return nil, fmt.Errorf("list pods of %s/%s: %w", rc.Namespace, rc.Name, err)
		}
		if len(pods.Items) > 0 {
			return rc, nil
		}
	}
	return nil, nil
}

// leftoverDeployments sorts the deployments other than the last complete
// one: counted is one whose status shows pods, or is older than a spec the
// RC manager has already seen; unreported are those scaled since creation
// whose status no RC manager has written yet, whose pods only a lookup can
// tell.
func leftoverDeployments(rcs []*corev1.ReplicationController) (counted *corev1.ReplicationController, unreported []*corev1.ReplicationController) {
	active := deployment.Live(rcs, nil)
	for _, rc := range rcs {
		if rc == active {
			continue
		}
		observed := rc.Status.ObservedGeneration
		switch {
		case rc.Status.Replicas != 0 || observed > 0 && observed < rc.Generation:
			return rc, nil
		case observed == 0 && rc.Generation > 1:
			unreported = append(unreported, rc)
		}
	}
	return nil, unreported
}

// createDeployment creates the deployment of latestVersion. It returns the
// RC when the API server created it, even if starting it then failed.
func (r *DeploymentConfigReconciler) createDeployment(ctx context.Context, dc *dcv1.DeploymentConfig) (*corev1.ReplicationController, error) {
	rc, err := deployment.New(dc)
	if err != nil {
		return nil, err
	}
	if err := r.snapshotConfig(ctx, dc, rc); err != nil {
		return nil, err
	}
	now := r.Clock.Now()
	running := r.placement.createRunning(dc, rc, now)
	err = r.Client.Create(ctx, rc)
	if err != nil && running {
		r.placement.runner.release(rc)
	}
	if apierrors.IsAlreadyExists(err) {
		return nil, r.checkExisting(ctx, dc, rc.Name)
	}
	if isNamespaceTerminating(err) {
		return nil, err
	}
	if err != nil {
		r.Recorder.Eventf(dc, nil, corev1.EventTypeWarning, EventDeploymentCreationFailed, "Create",
			"Couldn't deploy version %d: %v", dc.Status.LatestVersion, err)
		return nil, fmt.Errorf("create replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	r.created.record(createdVersion{dc.UID, dc.Status.LatestVersion}, now)
	r.Recorder.Eventf(dc, rc, corev1.EventTypeNormal, EventDeploymentCreated, "Create",
		"Created new replication controller %q for version %d", rc.Name, dc.Status.LatestVersion)
	if running {
		if err := r.placement.startCreated(ctx, rc, dc, now); err != nil {
			return rc, err
		}
	}
	return rc, r.ownSnapshots(ctx, rc)
}

// plannedDeployment returns the deployment of latestVersion as this sync
// is about to create it, for the claim's status to describe, or nil when
// something may stand in its way: an older rollout to stop, pods of an
// earlier deployment to go, no image yet. A deployment it did not foresee
// (the rollout gate queued it, the create failed, the runner had no slot)
// costs the status write the claim would have saved, no more: the sync
// writes what it finds.
func (r *DeploymentConfigReconciler) plannedDeployment(dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) *corev1.ReplicationController {
	for _, rc := range rcs {
		if !deployment.IsTerminal(deployment.Phase(rc)) {
			return nil
		}
	}
	if counted, unreported := leftoverDeployments(rcs); counted != nil || len(unreported) > 0 || hasEmptyImage(dc.Spec.Template) {
		return nil
	}
	rc, err := deployment.New(dc)
	if err != nil {
		return nil
	}
	if r.placement.runsInController(dc) {
		if err := deployment.StartInController(rc, r.Clock.Now()); err != nil {
			return nil
		}
	}
	return rc
}

// withDeployment is rcs with rc added, unless it is nil.
func withDeployment(rcs []*corev1.ReplicationController, rc *corev1.ReplicationController) []*corev1.ReplicationController {
	if rc == nil {
		return rcs
	}
	return append(slices.Clip(rcs), rc)
}

// restoreCondition puts back the condition of type t that status had
// before (or removes it, if it had none).
func restoreCondition(status *dcv1.DeploymentConfigStatus, before *dcv1.DeploymentConfigStatus, t dcv1.DeploymentConditionType) {
	conditions := slices.DeleteFunc(slices.Clone(status.Conditions), func(c dcv1.DeploymentCondition) bool { return c.Type == t })
	if c := findCondition(before.Conditions, t); c != nil {
		conditions = append(conditions, *c)
	}
	status.Conditions = conditions
}

// errCacheBehind says the cache is behind the API server: the RC of the
// latest version exists and is ours but is not cached yet, or an RC changed
// since the cached copy a write was based on. The sync is retried without
// reporting a failure.
var errCacheBehind = errors.New("the cache has not shown the deployment yet")

// requeueIfBehind retries a sync whose write met a newer version of an
// object in a second, quietly (the cache will have it by then, or its
// event brings the sync back sooner); other errors are returned.
func requeueIfBehind(err error) (reconcile.Result, error) {
	if errors.Is(err, errCacheBehind) {
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	return reconcile.Result{}, err
}

// checkExisting looks at the RC that holds the name of the deployment to
// create. One of ours the cache has not shown yet is retried quietly; one
// that is not ours (no label, another owner, an OpenShift leftover) is
// reported, with an event and in the Progressing condition, and retried
// with back-off: the RC is outside the cache, so nothing else would bring
// the sync back once the name is free.
func (r *DeploymentConfigReconciler) checkExisting(ctx context.Context, dc *dcv1.DeploymentConfig, name string) error {
	existing := &corev1.ReplicationController{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: dc.Namespace, Name: name}, existing)
	if apierrors.IsNotFound(err) {
		// Deleted since the create: the name may be free now.
		return errCacheBehind
	}
	if err != nil {
		return fmt.Errorf("get replicationcontroller %s/%s: %w", dc.Namespace, name, err)
	}
	why := foreignReason(dc, existing)
	if why == "" {
		if err := r.adoptExisting(ctx, dc, existing); err != nil {
			return err
		}
		return errCacheBehind
	}
	err = fmt.Errorf("replication controller %q already exists and it couldn't be adopted: %s; delete it and version %d rolls out",
		name, why, dc.Status.LatestVersion)
	r.Recorder.Eventf(dc, existing, corev1.EventTypeWarning, EventDeploymentCreationFailed, "Create",
		"Couldn't deploy version %d: %v", dc.Status.LatestVersion, err)
	return err
}

// foreignReason says why an RC that holds the name of the latest
// deployment is not that deployment, or "" when it is: the DeploymentConfig
// controls it or adopts it (an orphan with its label). An RC the cache
// holds is never foreign; one that stays out of the cache (no label) would
// otherwise be waited for in silence.
func foreignReason(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) string {
	ref := metav1.GetControllerOf(rc)
	labelled := rc.Labels[dcv1.DeploymentConfigLabel] == dc.Name
	switch {
	case ref != nil && ref.UID != dc.UID:
		return fmt.Sprintf("it is controlled by %s %q", ref.Kind, ref.Name)
	case !labelled && hasOpenShiftKeys(rc):
		return fmt.Sprintf("it was left over by OpenShift (it carries openshift.io/ keys) and has no %s=%s label", dcv1.DeploymentConfigLabel, dc.Name)
	case !labelled:
		return fmt.Sprintf("it has no %s=%s label", dcv1.DeploymentConfigLabel, dc.Name)
	}
	// The name, not the version annotation, says which version an RC is
	// (a user can write the annotation).
	return ""
}

// hasOpenShiftKeys reports whether an RC carries labels or annotations of
// OpenShift's, as RCs of DeploymentConfigs migrated from OpenShift do.
func hasOpenShiftKeys(rc *corev1.ReplicationController) bool {
	for _, m := range []map[string]string{rc.Labels, rc.Annotations} {
		for k := range m {
			if strings.Contains(k, "openshift.io/") {
				return true
			}
		}
	}
	return false
}

// adoptExisting takes in an RC of the latest version's name that carries
// the DeploymentConfig's label (foreignReason found it ours): adopted when
// it has no controller (left by an earlier DeploymentConfig of the same
// name), as OpenShift claims it, and out of the settled set so that the
// cache, and the next sync, see it.
func (r *DeploymentConfigReconciler) adoptExisting(ctx context.Context, dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) error {
	if metav1.GetControllerOf(rc) == nil {
		if _, err := r.adopt(ctx, dc, rc); err != nil {
			return err
		}
	}
	if rc.Labels[dcv1.DeploymentSettledLabel] == settledValue {
		return setSettled(ctx, r.Client, rc, false)
	}
	return nil
}

// isNamespaceTerminating reports whether err says the namespace is being
// deleted, where nothing new can be created and retrying is pointless.
func isNamespaceTerminating(err error) bool {
	return err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}

// cancelDeployment marks a running deployment cancelled; its deployer
// controller stops it.
func cancelDeployment(ctx context.Context, c client.Client, rc *corev1.ReplicationController, reason string) error {
	patch := client.MergeFrom(rc.DeepCopy())
	if rc.Annotations == nil {
		rc.Annotations = map[string]string{}
	}
	rc.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
	rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] = reason
	return client.IgnoreNotFound(c.Patch(ctx, rc, patch))
}

// scaleDeployments runs when the latest deployment has finished: the newest
// Complete deployment gets the desired replicas (none for a test
// DeploymentConfig) and every other one none. When the latest rollout
// failed this is the fall-back to the last good version; it also reverts
// hand edits of an RC's replicas.
func (r *DeploymentConfigReconciler) scaleDeployments(ctx context.Context, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) error {
	active := deployment.Live(rcs, nil)
	want := func(rc *corev1.ReplicationController) int32 {
		if rc == active && !dc.Spec.Test {
			return dc.Spec.Replicas
		}
		return 0
	}
	// Scale down before up, so that a fall-back never runs more pods than
	// the rollout was allowed to.
	ordered := make([]*corev1.ReplicationController, 0, len(rcs))
	for _, rc := range rcs {
		if rc != active {
			ordered = append(ordered, rc)
		}
	}
	if active != nil {
		ordered = append(ordered, active)
	}
	for _, rc := range ordered {
		want := want(rc)
		have := deployment.Replicas(rc)
		if have == want {
			continue
		}
		if err := scaleRC(ctx, r.Client, rc, want); err != nil {
			return err
		}
		r.Recorder.Eventf(dc, rc, corev1.EventTypeNormal, EventReplicationControllerScaled, "Scale",
			"Scaled replication controller %q from %d to %d", rc.Name, have, want)
	}
	return nil
}

// scaleRC sets an RC's replicas, on the condition that it is still the
// version the decision was made from: the patch carries the cached
// resourceVersion, so a newer write (a deployer's, a user's) makes it fail
// with a conflict rather than be overwritten. A conflict is not retried
// with a fresh copy of this RC alone: which replicas each deployment should
// have depends on the DeploymentConfig and all its deployments, so the sync
// runs again once the cache has the newer write (errCacheBehind).
func scaleRC(ctx context.Context, c client.Client, rc *corev1.ReplicationController, want int32) error {
	patch := client.MergeFromWithOptions(rc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	rc.Spec.Replicas = &want
	if rc.Annotations == nil {
		rc.Annotations = map[string]string{}
	}
	rc.Annotations[dcv1.DeploymentReplicasAnnotation] = strconv.Itoa(int(want))
	err := c.Patch(ctx, rc, patch)
	if apierrors.IsConflict(err) {
		return fmt.Errorf("%w: replicationcontroller %s/%s changed since it was read", errCacheBehind, rc.Namespace, rc.Name)
	}
	if err != nil {
		return fmt.Errorf("scale replicationcontroller %s/%s to %d: %w", rc.Namespace, rc.Name, want, client.IgnoreNotFound(err))
	}
	return nil
}

// prunable returns the deployments history cleanup deletes, oldest first.
// As OpenShift's DeploymentsForCleanup, only deployments older than the
// active one count against revisionHistoryLimit (all but the latest when
// none is active): failed rollouts newer than the active one neither count
// nor go. Of the oldest beyond the limit, one still scaled up, with pods or
// unfinished is kept but counted, so it goes once it is scaled down; so is
// the version the config snapshots are pinned to, whose deployment keeps
// the copies every later rollout runs on until the pin is removed.
func prunable(dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) []*corev1.ReplicationController {
	limit := int(dcv1.DefaultRevisionHistoryLimit)
	if dc.Spec.RevisionHistoryLimit != nil {
		limit = int(*dc.Spec.RevisionHistoryLimit)
	}
	counted := historyOf(dc, rcs)
	if len(counted) <= limit {
		return nil
	}
	var out []*corev1.ReplicationController
	for _, rc := range counted[:len(counted)-limit] {
		if !deployment.IsTerminal(deployment.Phase(rc)) || deployment.Replicas(rc) != 0 || rc.Status.Replicas != 0 {
			continue
		}
		if v, ok := pinnedVersion(dc); ok && dc.Spec.ConfigSnapshots != nil && deployment.Version(rc) == v {
			continue
		}
		out = append(out, rc)
	}
	return out
}

// historyOf returns the deployments that count against
// revisionHistoryLimit, oldest first: those older than the active one, or
// when none is active every one but the latest version.
func historyOf(dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) []*corev1.ReplicationController {
	active := deployment.Live(rcs, nil)
	var out []*corev1.ReplicationController
	for _, rc := range rcs {
		v := deployment.Version(rc)
		switch {
		case active != nil && v < deployment.Version(active):
			out = append(out, rc)
		case active == nil && v != dc.Status.LatestVersion:
			out = append(out, rc)
		}
	}
	return out
}

// writeStatus writes the status computed from the deployments when it
// differs from what the DeploymentConfig had at the start of the sync.
func (r *DeploymentConfigReconciler) writeStatus(ctx context.Context, dc *dcv1.DeploymentConfig, original *dcv1.DeploymentConfigStatus, rcs []*corev1.ReplicationController, createErr error) (reconcile.Result, error) {
	_, result, err := r.putStatus(ctx, dc, original, rcs, createErr)
	return result, err
}

// putStatus is writeStatus, and also says whether the API server took a
// write: false when nothing changed, the DeploymentConfig is gone or it
// changed meanwhile.
func (r *DeploymentConfigReconciler) putStatus(ctx context.Context, dc *dcv1.DeploymentConfig, original *dcv1.DeploymentConfigStatus, rcs []*corev1.ReplicationController, createErr error) (bool, reconcile.Result, error) {
	dc.Status = computeStatus(dc, rcs, createErr, metav1.NewTime(r.Clock.Now()))
	if apiequality.Semantic.DeepEqual(&dc.Status, original) {
		return false, reconcile.Result{}, nil
	}
	if countsOnly(original, &dc.Status) && rolloutMoving(dc, rcs) {
		return false, reconcile.Result{}, nil
	}
	if err := r.Client.Status().Update(ctx, dc); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return false, reconcile.Result{}, nil
		case apierrors.IsConflict(err):
			// A newer version of the object is on its way through the cache.
			return false, reconcile.Result{Requeue: true}, nil
		}
		return false, reconcile.Result{}, fmt.Errorf("update status of %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	return true, reconcile.Result{}, nil
}
