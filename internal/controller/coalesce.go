package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// countsSettle is how long a DeploymentConfig's sync waits after one of its
// RCs changed nothing but the pod counts in its status.
//
// kube-controller-manager's RC manager writes an RC's status as each pod
// comes, gets ready and goes: on kwok a new pod's "1 replica" and "1 ready"
// land milliseconds apart, and a real kubelet's are seldom further apart
// than a readiness probe period. Synced at once, each would be a
// DeploymentConfig status write of its own (the benchmark counted 11.4
// per template change against a Deployment's 8.9). Waiting a second folds them
// into one. Counts in a DeploymentConfig's status lag its RCs' by at most
// that second; everything else is synced at once: a phase or any other
// change of an RC, any change of the DeploymentConfig, and a count change
// that lets a waiting rollout start (its older pods are gone).
const countsSettle = time.Second

// dcsOfRC is the DeploymentConfig controller's handler of RC events:
// enqueueByPriority's, except that an update that changed only the RC's
// status counts queues its DeploymentConfigs countsSettle later.
type dcsOfRC struct {
	handler.EventHandler
	startsRollout func(context.Context, reconcile.Request) bool
}

// enqueueDCsOfRC returns the handler of RC events for the DeploymentConfig
// controller; startsRollout is the priority decision of enqueueByPriority.
func enqueueDCsOfRC(startsRollout func(context.Context, reconcile.Request) bool) handler.EventHandler {
	return dcsOfRC{EventHandler: enqueueByPriority(deploymentConfigsOfRC, startsRollout), startsRollout: startsRollout}
}

// Update implements handler.EventHandler.
func (h dcsOfRC) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if !onlyCountsChanged(e.ObjectOld, e.ObjectNew) {
		h.EventHandler.Update(ctx, e, q)
		return
	}
	seen := map[reconcile.Request]bool{}
	for _, o := range []client.Object{e.ObjectOld, e.ObjectNew} {
		for _, req := range deploymentConfigsOfRC(ctx, o) {
			if seen[req] {
				continue
			}
			seen[req] = true
			if h.startsRollout(ctx, req) {
				addByPriority(ctx, q, req, h.startsRollout)
				continue
			}
			addAfter(q, req, countsSettle)
		}
	}
}

// addAfter queues req after d, keeping an earlier or immediate add of it.
func addAfter(q workqueue.TypedRateLimitingInterface[reconcile.Request], req reconcile.Request, d time.Duration) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{After: d}, req)
		return
	}
	q.AddAfter(req, d)
}

// onlyCountsChanged reports whether an RC update changed its status's pod
// counts (or observedGeneration) and nothing else a DeploymentConfig's sync
// reads: labels, annotations (the phase), owners, deletion, spec and status
// conditions. A resync (same resourceVersion) is not such an update.
func onlyCountsChanged(oldObj, newObj client.Object) bool {
	older, ok1 := oldObj.(*corev1.ReplicationController)
	newer, ok2 := newObj.(*corev1.ReplicationController)
	if !ok1 || !ok2 || older.ResourceVersion == newer.ResourceVersion {
		return false
	}
	return equality.Semantic.DeepEqual(older.Labels, newer.Labels) &&
		equality.Semantic.DeepEqual(older.Annotations, newer.Annotations) &&
		equality.Semantic.DeepEqual(older.OwnerReferences, newer.OwnerReferences) &&
		equality.Semantic.DeepEqual(older.DeletionTimestamp, newer.DeletionTimestamp) &&
		equality.Semantic.DeepEqual(older.Spec, newer.Spec) &&
		equality.Semantic.DeepEqual(older.Status.Conditions, newer.Status.Conditions)
}
