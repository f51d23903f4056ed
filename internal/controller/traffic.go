package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/trafficrouting"
)

// Event reasons of trafficRouting's routes.
const (
	EventRouteRestored = "RouteRestored"
	EventRouteInvalid  = "RouteInvalid"
)

// syncTraffic keeps the Services and routes of trafficRouting agreeing
// with the deployments, as syncBlueGreenServices does for BlueGreen:
//   - when no rollout runs (the latest deployment is Complete, Failed or
//     cancelled, or its deployer died and it was marked Failed), the
//     routes are at rest, 100% to the stable Service with no header
//     routes, and both Services select the live deployment. This is what
//     puts the requests back on the stable deployment after every end of a
//     rollout that is not a success, without the deployer: it runs before
//     the fall-back scales the new deployment down;
//   - during a rollout the routes are the deployer's, and the stable
//     Service may select the live or the latest deployment (the deployer
//     switches it to the latest at the end), the canary Service either.
//
// Before a first rollout made a deployment live, nothing is touched.
func (r *DeploymentConfigReconciler) syncTraffic(ctx context.Context, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) error {
	tr := dc.Spec.Strategy.RollingParams.TrafficRouting
	live := deployment.Live(rcs, nil)
	if live == nil {
		return nil
	}
	latest, running, err := r.newestDeployment(ctx, dc, rcs)
	if err != nil {
		return err
	}
	if running {
		allowed := []*corev1.ReplicationController{live, latest}
		if err := r.pointService(ctx, dc, tr.StableService, live, allowed); err != nil {
			return err
		}
		return r.pointService(ctx, dc, tr.CanaryService, latest, allowed)
	}
	if err := r.restRoutes(ctx, dc, tr); err != nil {
		return err
	}
	if err := r.pointService(ctx, dc, tr.StableService, live, nil); err != nil {
		return err
	}
	return r.pointService(ctx, dc, tr.CanaryService, live, nil)
}

// restRoutes puts trafficRouting's routes at rest. A route that is
// missing or has no rule to manage is reported as an event and holds up
// nothing else; other errors retry the sync.
func (r *DeploymentConfigReconciler) restRoutes(ctx context.Context, dc *dcv1.DeploymentConfig, tr *dcv1.TrafficRouting) error {
	router := trafficrouting.Router{Client: routeClient{r.Client}, Namespace: dc.Namespace, Routing: tr}
	wrote, err := router.Set(ctx, trafficrouting.Rest)
	if wrote {
		log.FromContext(ctx).Info("put the routes back at rest", "routes", tr.GatewayAPI)
		r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventRouteRestored, "Route",
			"No rollout runs: the routes of strategy.rollingParams.trafficRouting send %s", trafficrouting.Rest)
	}
	var noRule *trafficrouting.NoRuleError
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err), errors.As(err, &noRule):
		r.Recorder.Eventf(dc, nil, corev1.EventTypeWarning, EventRouteInvalid, "Route", "%v", err)
		return nil
	}
	return err
}

// routeClient reads and writes routes with dc-controller's client. Its
// reads of unstructured objects go to the API server (the manager's
// cache holds typed objects only), so a route is never written from a
// stale copy.
type routeClient struct{ client.Client }

func (c routeClient) Get(ctx context.Context, ref trafficrouting.Ref, namespace string) (*unstructured.Unstructured, error) {
	route := &unstructured.Unstructured{}
	route.SetGroupVersionKind(ref.GroupVersionKind())
	if err := c.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, route); err != nil {
		return nil, err
	}
	return route, nil
}

func (c routeClient) Update(ctx context.Context, _ trafficrouting.Ref, route *unstructured.Unstructured) error {
	if err := c.Client.Update(ctx, route); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	return nil
}
