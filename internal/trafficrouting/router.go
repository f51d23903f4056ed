package trafficrouting

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Client reads and writes routes. Dynamic adapts client-go's dynamic
// client; dc-controller adapts its own.
type Client interface {
	Get(ctx context.Context, ref Ref, namespace string) (*unstructured.Unstructured, error)
	Update(ctx context.Context, ref Ref, route *unstructured.Unstructured) error
}

// Dynamic adapts a dynamic client.
func Dynamic(d dynamic.Interface) Client { return dynamicClient{d} }

type dynamicClient struct{ dynamic.Interface }

func (d dynamicClient) Get(ctx context.Context, ref Ref, namespace string) (*unstructured.Unstructured, error) {
	return d.Resource(ref.Resource).Namespace(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
}

func (d dynamicClient) Update(ctx context.Context, ref Ref, route *unstructured.Unstructured) error {
	_, err := d.Resource(ref.Resource).Namespace(route.GetNamespace()).Update(ctx, route, metav1.UpdateOptions{})
	return err
}

// Router reads and writes the routes of one DeploymentConfig.
type Router struct {
	// Client reaches the routes.
	Client Client
	// Namespace is the DeploymentConfig's, and its routes'.
	Namespace string
	// Routing is the DeploymentConfig's rollingParams.trafficRouting.
	Routing *dcv1.TrafficRouting
}

// Check returns nil when every route exists and a Gateway accepted it,
// and otherwise an error that names the route and what is wrong.
func (r Router) Check(ctx context.Context) error {
	for _, ref := range Refs(r.Routing) {
		route, err := r.get(ctx, ref)
		if err != nil {
			return err
		}
		if err := Accepted(route, ref); err != nil {
			return err
		}
		if _, err := Apply(route.DeepCopy(), ref, r.Routing, Rest); err != nil {
			return err
		}
	}
	return nil
}

// Set moves every route to s, and reports whether it wrote any. A write
// that loses a race with another writer of the route is redone on the
// route as it now is.
func (r Router) Set(ctx context.Context, s State) (bool, error) {
	wrote := false
	for _, ref := range Refs(r.Routing) {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			route, err := r.get(ctx, ref)
			if err != nil {
				return err
			}
			changed, err := Apply(route, ref, r.Routing, s)
			if err != nil || !changed {
				return err
			}
			if err := r.Client.Update(ctx, ref, route); err != nil {
				return err
			}
			wrote = true
			return nil
		})
		if err != nil {
			return wrote, fmt.Errorf("set %s/%s to %s: %w", r.Namespace, ref, s, err)
		}
	}
	return wrote, nil
}

// get reads a route, with an error that says what is missing.
func (r Router) get(ctx context.Context, ref Ref) (*unstructured.Unstructured, error) {
	route, err := r.Client.Get(ctx, ref, r.Namespace)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s/%s of strategy.rollingParams.trafficRouting.gatewayAPI does not exist: %w", r.Namespace, ref, err)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s/%s: %w", r.Namespace, ref, err)
	}
	return route, nil
}

// String says what s sends to the canary, for logs and errors.
func (s State) String() string {
	if s.IsRest() {
		return "100% stable"
	}
	if len(s.Headers) == 0 {
		return fmt.Sprintf("%d%% canary", s.Weight)
	}
	return fmt.Sprintf("%d%% canary and %d header routes", s.Weight, len(s.Headers))
}
