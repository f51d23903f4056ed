package playground

import (
	"context"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// The real node's traffic-routing sample: a DeploymentConfig of the sample
// application whose canary gets a share of the requests through the
// node's Gateway (docs/traffic-routing.md), with its two Services and its
// HTTPRoute.
const (
	// TrafficSample names the DeploymentConfig and its HTTPRoute.
	TrafficSample = "canary"
	// TrafficSampleHost is the HTTPRoute's hostname: requests through the
	// Gateway reach the sample with this Host header.
	TrafficSampleHost = "canary.test"
	// TrafficSampleWeight is the share of the requests, in percent, that
	// the sample's rollouts send to the new version before they pause.
	TrafficSampleWeight = 10
)

// trafficSampleYAML is the sample; %[1]s is the sample application's
// image, %[2]q its VERSION, %[3]s and %[4]s the Gateway's namespace and
// name, %[5]s the hostname, %[6]d the weight.
const trafficSampleYAML = `apiVersion: v1
kind: Service
metadata:
  name: canary-stable
spec:
  selector: {app: canary}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata:
  name: canary-canary
spec:
  selector: {app: canary}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: canary
spec:
  parentRefs: [{name: %[4]s, namespace: %[3]s}]
  hostnames: [%[5]s]
  rules:
  - backendRefs: [{name: canary-stable, port: 80}]
---
apiVersion: apps.deployconfig.io/v1
kind: DeploymentConfig
metadata:
  name: canary
  labels: {app: canary}
spec:
  replicas: 2
  selector: {app: canary}
  strategy:
    type: Rolling
    rollingParams:
      maxSurge: 1
      maxUnavailable: 0
      trafficRouting:
        stableService: canary-stable
        canaryService: canary-canary
        managedRoutes: [{name: canary-header}]
        gatewayAPI: {httpRoute: canary}
      steps:
      - setHeaderRoute: {name: canary-header, match: [{headerName: X-Canary, headerValue: {exact: "yes"}}]}
      - setWeight: %[6]d
      - pause: {}
  triggers:
  - type: ConfigChange
  template:
    metadata:
      labels: {app: canary}
    spec:
      terminationGracePeriodSeconds: 1
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: app
        image: %[1]s
        env: [{name: VERSION, value: %[2]q}]
        ports: [{name: http, containerPort: 8080}]
        readinessProbe:
          httpGet: {path: /readyz, port: 8080}
          periodSeconds: 1
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
`

// TrafficSampleYAML is the traffic-routing sample with the sample
// application's image at version, its route on the Gateway gatewayNS/gateway.
func TrafficSampleYAML(image, version, gatewayNS, gateway string) string {
	return fmt.Sprintf(trafficSampleYAML, image, version, gatewayNS, gateway, TrafficSampleHost, TrafficSampleWeight)
}

// RollOutTrafficSample rolls the traffic-routing sample out until a
// rollout pauses with TrafficSampleWeight% of the requests, and returns
// that rollout. A new sample is applied at VERSION 1, which goes live at
// once (a first rollout has nothing to share the requests with), then at
// VERSION 2; a sample already paused is left as it is; any other gets
// VERSION N+1, N its latest rollout.
func (c *Cluster) RollOutTrafficSample(ctx context.Context, out io.Writer, namespace, image, gatewayNS, gateway string, timeout time.Duration) (Rollout, error) {
	r, err := c.WaitRollout(ctx, namespace, TrafficSample, timeout, func(Rollout) bool { return true })
	if err != nil && !apierrors.IsNotFound(err) {
		return r, err
	}
	if trafficPaused(r) {
		return r, nil
	}
	if r.Version == 0 {
		if r, err = c.applyTrafficSample(ctx, out, namespace, image, gatewayNS, gateway, 1, timeout); err != nil {
			return r, err
		}
		if r.Phase() != dcv1.DeploymentPhaseComplete {
			return r, fmt.Errorf("the rollout of dc/%s ended %s: %s", TrafficSample, r.Phase(), r.RC.Annotations[dcv1.DeploymentStatusReasonAnnotation])
		}
	}
	if r, err = c.applyTrafficSample(ctx, out, namespace, image, gatewayNS, gateway, r.Version+1, timeout); err != nil {
		return r, err
	}
	if !trafficPaused(r) {
		return r, fmt.Errorf("the rollout of dc/%s ended %s before its pause: %s", TrafficSample, r.Phase(), r.RC.Annotations[dcv1.DeploymentStatusReasonAnnotation])
	}
	return r, nil
}

// trafficPaused reports whether the rollout waits in a pause.
func trafficPaused(r Rollout) bool {
	return r.RC != nil && !r.Done() && deployment.ProgressOf(r.RC).Wait != nil
}

// applyTrafficSample applies the sample at VERSION version and waits until
// the rollout that starts ends or pauses.
func (c *Cluster) applyTrafficSample(ctx context.Context, out io.Writer, namespace, image, gatewayNS, gateway string, version int64, timeout time.Duration) (Rollout, error) {
	a, err := NewApplier(c.Config)
	if err != nil {
		return Rollout{}, err
	}
	objs, err := DecodeManifests([]byte(TrafficSampleYAML(image, fmt.Sprint(version), gatewayNS, gateway)))
	if err != nil {
		return Rollout{}, fmt.Errorf("the traffic sample: %w", err)
	}
	if _, err := a.Apply(ctx, namespace, objs...); err != nil {
		return Rollout{}, err
	}
	fmt.Fprintf(out, "Applied dc/%s with VERSION=%d; waiting for its rollout...\n", TrafficSample, version)
	if err := c.waitObserved(ctx, namespace, TrafficSample, timeout); err != nil {
		return Rollout{}, err
	}
	return c.WaitRollout(ctx, namespace, TrafficSample, timeout, func(r Rollout) bool {
		return r.Version >= version && (r.Done() || trafficPaused(r))
	})
}

// waitObserved waits until dc-controller has acted on the
// DeploymentConfig's current spec.
func (c *Cluster) waitObserved(ctx context.Context, namespace, name string, timeout time.Duration) error {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("making a client: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, rolloutPoll, timeout, true, func(ctx context.Context) (bool, error) {
		dc, err := dyn.Resource(dcv1.GroupVersion.WithResource("deploymentconfigs")).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		observed, _, _ := unstructured.NestedInt64(dc.Object, "status", "observedGeneration")
		return observed >= dc.GetGeneration(), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for dc-controller to observe deploymentconfig %s/%s: %w", namespace, name, err)
	}
	return nil
}
