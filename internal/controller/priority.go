package controller

import (
	"context"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/cachedconfig"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Both rollout controllers serve their workqueues by priority (the
// controller-runtime priority queue: highest first, first in first out
// within a priority), each writing through one client limited to the
// configured QPS. With every event at one priority, a new rollout waited
// behind every queued sync of the rollouts already running: with a
// thousand in flight, a minute before its deployment or deployer pod was
// made. So work that starts a rollout goes first:
//
//   - priorityRollout: a DeploymentConfig whose change makes a trigger
//     fire, or whose latestVersion a user raised (kubectl dc rollout
//     latest); one whose deployment of latestVersion waits for older
//     rollouts to stop, when one of its RCs changes; a deployment that
//     needs its deployer pod (New, no pod yet) or must stop (cancelled)
//     so that a newer one can start;
//   - 0, controller-runtime's default: the bookkeeping of rollouts under
//     way (RC status changes reported to their DeploymentConfig, deployer
//     pod phases, status writes, scaling, cleanup), and the echoes of the
//     controllers' own writes;
//   - handler.LowPriority: controller-runtime's priority of the initial
//     list and of resyncs that change nothing, kept for bookkeeping.
//
// The decisions read the cache, which may lag the controllers' own writes:
// the event of a DeploymentConfig status write that raised latestVersion
// can come before the RC the same sync created, and the event of a
// deployer pod before its RC's phase. Were such echoes taken for rollouts
// to start, a thousand rollouts started at once would put a thousand
// bookkeeping syncs ahead of the next trigger. So a latestVersion raised by
// a trigger (the controller's own write) counts only when an RC changes,
// and a New deployment whose deployer pod the cache has counts as started.
//
// Nothing starves. Every level is served, highest first: bookkeeping
// waits only while starts are queued, and the starts are bounded by the
// triggers: each brings a few syncs at priorityRollout and, once its
// deployment and deployer pod exist, its events fall back to 0. A start
// that fails is retried with the queue's exponential backoff, waiting
// outside the queue. Only a sustained stream of new rollouts faster than
// the controllers' QPS can make them start (about 10 per second at 20 QPS,
// two writes each) could hold bookkeeping back, and then only as long as
// it lasts; every rollout it started would wait for its bookkeeping too,
// as it would have without priorities. The priority is a hint read from the
// cache when the event arrives: a wrong guess changes the order of the
// work, never what a sync does.
//
// Delaying bookkeeping under load also coalesces it: the queue holds a key
// once, so the RC status changes that arrive while a DeploymentConfig waits
// make one sync and one status write.
const priorityRollout = 100

// dcStartsRollout reports whether a change of the DeploymentConfig starts
// a rollout, given its deployment of latestVersion (nil when there is
// none): a trigger fires, or a user raised latestVersion and its
// deployment is still to be made.
func dcStartsRollout(dc *dcv1.DeploymentConfig, latest *corev1.ReplicationController) bool {
	if dc.DeletionTimestamp != nil || dc.Spec.Paused {
		return false
	}
	if triggeredRollout(dc, latest) != nil || dc.Annotations[dcv1.RolloutRequestAnnotation] == rolloutRequestRetry {
		return true
	}
	// A latestVersion a trigger raised was raised by a sync that went on
	// to make its deployment (or to wait for older ones, whose RCs' events
	// say when that can go on).
	return dcAwaitsDeployment(dc, latest) && !raisedByTrigger(dc.Status.Details)
}

// dcAwaitsDeployment reports whether the deployment of latestVersion is
// still to be made: its sync waits for older rollouts to stop or for their
// pods to go, which a change of one of its RCs may end.
func dcAwaitsDeployment(dc *dcv1.DeploymentConfig, latest *corev1.ReplicationController) bool {
	return dc.DeletionTimestamp == nil && !dc.Spec.Paused && dc.Status.LatestVersion > 0 && latest == nil
}

// raisedByTrigger reports whether the details of the latest rollout are a
// trigger's (the controller's own), rather than a user's.
func raisedByTrigger(details *dcv1.DeploymentDetails) bool {
	if details == nil || len(details.Causes) == 0 {
		return false
	}
	for _, c := range details.Causes {
		if c.Type != dcv1.DeploymentTriggerOnConfigChange && c.Type != dcv1.DeploymentTriggerOnImageChange {
			return false
		}
	}
	return true
}

// rcStartsRollout reports whether a sync of the deployment would start a
// rollout: create its deployer pod (New, and the cache has no pod of
// its), or stop it (cancelled) so that a newer deployment of its
// DeploymentConfig can start.
func rcStartsRollout(rc *corev1.ReplicationController, hasDeployerPod bool) bool {
	if rc.Labels[dcv1.DeploymentConfigLabel] == "" || rc.DeletionTimestamp != nil {
		return false
	}
	phase := deployment.Phase(rc)
	if deployment.IsTerminal(phase) {
		return false
	}
	return deployment.IsCancelled(rc) || phase == dcv1.DeploymentPhaseNew && !hasDeployerPod
}

// rolloutPriorities decides, from the cache, whether a request of either
// controller starts a rollout.
type rolloutPriorities struct {
	reader client.Reader
}

// deploymentConfig says whether a change of the DeploymentConfig of req
// starts a rollout (see dcStartsRollout).
func (p rolloutPriorities) deploymentConfig(ctx context.Context, req reconcile.Request) bool {
	dc, latest := p.lookUpDC(ctx, req)
	if dc == nil {
		return false
	}
	// Triggers read the template, and of SetDefaults' defaults only the
	// triggers' matter. Setting the copy's fields leaves the cache's object
	// as it is.
	if err := cachedconfig.Expand(dc); err != nil {
		return false
	}
	dc.Spec.Triggers = dcv1.TriggersOrDefault(dc.Spec.Triggers)
	return dcStartsRollout(dc, latest)
}

// deploymentConfigOfRC says whether a change of one of its RCs lets the
// DeploymentConfig of req go on with a rollout: it awaits its deployment
// of latestVersion. (RC changes make no trigger fire, so the template is
// not read: RC events are most events.)
func (p rolloutPriorities) deploymentConfigOfRC(ctx context.Context, req reconcile.Request) bool {
	dc, latest := p.lookUpDC(ctx, req)
	return dc != nil && dcAwaitsDeployment(dc, latest)
}

// lookUpDC returns the DeploymentConfig of req and its deployment of
// latestVersion (or nil) from the cache; nil when the DeploymentConfig is
// not there. The DeploymentConfig is a shallow copy of the cache's own
// object: read it only. Every event of a DeploymentConfig and of its RCs
// asks, and a deep copy for each was most of dc-controller's garbage while
// its caches filled.
func (p rolloutPriorities) lookUpDC(ctx context.Context, req reconcile.Request) (*dcv1.DeploymentConfig, *corev1.ReplicationController) {
	dc := &dcv1.DeploymentConfig{}
	if err := p.reader.Get(ctx, req.NamespacedName, dc, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil
	}
	return dc, p.latestDeployment(ctx, dc)
}

// latestDeployment returns the DeploymentConfig's deployment of
// latestVersion from the cache (the cache's own object: read it only), or
// nil.
func (p rolloutPriorities) latestDeployment(ctx context.Context, dc *dcv1.DeploymentConfig) *corev1.ReplicationController {
	v := dc.Status.LatestVersion
	if v == 0 {
		return nil
	}
	rc := &corev1.ReplicationController{}
	key := types.NamespacedName{Namespace: dc.Namespace, Name: deployment.Name(dc.Name, v)}
	if err := p.reader.Get(ctx, key, rc, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	if deployment.Version(rc) != v || rc.Labels[dcv1.DeploymentConfigLabel] != dc.Name {
		return nil
	}
	return rc
}

// deployment says whether the deployment (RC) of req starts a rollout
// (see rcStartsRollout).
func (p rolloutPriorities) deployment(ctx context.Context, req reconcile.Request) bool {
	// Read-only: every event asks, and a deep copy of each would be garbage.
	rc := &corev1.ReplicationController{}
	if err := p.reader.Get(ctx, req.NamespacedName, rc, client.UnsafeDisableDeepCopy); err != nil {
		return false
	}
	key := types.NamespacedName{Namespace: rc.Namespace, Name: deployment.DeployerPodName(rc.Name)}
	err := p.reader.Get(ctx, key, &corev1.Pod{}, client.UnsafeDisableDeepCopy)
	return rcStartsRollout(rc, err == nil)
}

// requestFor maps an object to a request for itself.
func requestFor(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
}

// enqueueByPriority returns an event handler that enqueues the requests
// mapFn makes of an event's objects: at priorityRollout when startsRollout
// says so, else at controller-runtime's priority for the event (lower for
// the initial list and resyncs).
func enqueueByPriority(mapFn handler.MapFunc, startsRollout func(context.Context, reconcile.Request) bool) handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	enqueue := func(ctx context.Context, q queue, objs ...client.Object) {
		seen := map[reconcile.Request]bool{}
		for _, o := range objs {
			for _, req := range mapFn(ctx, o) {
				if !seen[req] {
					seen[req] = true
					addByPriority(ctx, q, req, startsRollout)
				}
			}
		}
	}
	// handler.Funcs gives the queue of create and update events the
	// event's default priority before calling these.
	return handler.Funcs{
		CreateFunc:  func(ctx context.Context, e event.CreateEvent, q queue) { enqueue(ctx, q, e.Object) },
		UpdateFunc:  func(ctx context.Context, e event.UpdateEvent, q queue) { enqueue(ctx, q, e.ObjectOld, e.ObjectNew) },
		DeleteFunc:  func(ctx context.Context, e event.DeleteEvent, q queue) { enqueue(ctx, q, e.Object) },
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) { enqueue(ctx, q, e.Object) },
	}
}

// addByPriority adds one request, at priorityRollout when it starts a
// rollout and the queue has priorities.
func addByPriority(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], req reconcile.Request, startsRollout func(context.Context, reconcile.Request) bool) {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if ok && startsRollout(ctx, req) {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr(priorityRollout)}, req)
		return
	}
	q.Add(req)
}

// kindLogger is the logger controller-runtime gives a controller built
// with For, for one built with Watches only: each request is logged under
// the kind it names. Its values are encoded only into lines written (see
// deferValues).
func kindLogger(mgr manager.Manager, name string, gvk schema.GroupVersionKind) func(*reconcile.Request) logr.Logger {
	log := deferValues(mgr.GetLogger()).WithValues("controller", name, "controllerGroup", gvk.Group, "controllerKind", gvk.Kind)
	return func(req *reconcile.Request) logr.Logger {
		if req == nil {
			return log
		}
		return log.WithValues(gvk.Kind, klog.KRef(req.Namespace, req.Name), "namespace", req.Namespace, "name", req.Name)
	}
}
