package realnode

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// The cluster's Gateway API data plane: Traefik's kubernetesgateway
// provider, a process in the cluster's network namespace (like the other
// daemons), serving one Gateway whose listener takes routes from every
// namespace.
const (
	// GatewayClassName is the GatewayClass that Traefik controls.
	GatewayClassName = "traefik"
	// GatewayNamespace and GatewayName name the cluster's Gateway, which
	// HTTPRoutes name as their parent.
	GatewayNamespace = "dc-gateway"
	GatewayName      = "gateway"
	// GatewayListener is the Gateway's HTTP listener.
	GatewayListener = "http"
	// GatewayPort is the listener's port, on every address of the
	// namespace (Traefik's entry point "web").
	GatewayPort = 8000
	// gatewayController is the controllerName Traefik claims GatewayClasses
	// by.
	gatewayController = "traefik.io/gateway-controller"
	// gatewayUser is the user of Traefik's client certificate, which the
	// ClusterRole below is bound to.
	gatewayUser = "deployconfig:gateway"
	// gatewayCRDsDir is where hack/tools.sh puts the Gateway API's
	// standard CRDs, in the binaries' directory.
	gatewayCRDsDir = "gateway-api-crds"
)

// GatewayAddr is the Gateway's HTTP address inside the cluster's network
// namespace: the node's address on the bridge, so that pods reach it too.
var GatewayAddr = fmt.Sprintf("%s:%d", NodeIP, GatewayPort)

// gatewayGVR is the Gateway resource of the Gateway API.
var gatewayGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}

// gatewayManifest is what Traefik needs besides the CRDs: the least RBAC
// its provider runs with (it watches Services, EndpointSlices, Secrets and
// ConfigMaps for backends and TLS, and writes the status of what it
// serves; Traefik's documentation lists the same), the GatewayClass and the
// Gateway.
var gatewayManifest = fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[1]s
rules:
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list, watch]
- apiGroups: [""]
  resources: [services, secrets, configmaps]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses, gateways, httproutes, grpcroutes, tlsroutes, referencegrants, backendtlspolicies]
  verbs: [get, list, watch]
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses/status, gateways/status, httproutes/status, grpcroutes/status, tlsroutes/status, backendtlspolicies/status]
  verbs: [update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %[1]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %[1]s
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: %[1]s
---
apiVersion: v1
kind: Namespace
metadata:
  name: %[2]s
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: %[3]s
spec:
  controllerName: %[4]s
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: %[5]s
  namespace: %[2]s
spec:
  gatewayClassName: %[3]s
  listeners:
  - name: %[6]s
    protocol: HTTP
    port: %[7]d
    allowedRoutes:
      namespaces:
        from: All
`, gatewayUser, GatewayNamespace, GatewayClassName, gatewayController, GatewayName, GatewayListener, GatewayPort)

// traefikArgs run Traefik with the kubernetesgateway provider only, an
// entry point on GatewayPort, the Gateway's status address set to the
// node's, nothing that calls out (version checks, usage statistics), and
// short throttles and grace so that a route's change is served, and a
// stop is done, within a second or so.
func traefikArgs(bin string) []string {
	return []string{filepath.Join(bin, "traefik"),
		"--global.checkNewVersion=false", "--global.sendAnonymousUsage=false",
		"--log.level=INFO", "--log.noColor=true",
		fmt.Sprintf("--entryPoints.web.address=:%d", GatewayPort),
		"--entryPoints.web.transport.lifeCycle.graceTimeOut=1s",
		"--entryPoints.web.transport.lifeCycle.requestAcceptGraceTimeout=0s",
		"--providers.providersThrottleDuration=100ms",
		"--providers.kubernetesgateway=true",
		"--providers.kubernetesgateway.throttleDuration=100ms",
		"--providers.kubernetesgateway.statusAddress.ip=" + NodeIP,
	}
}

// StartGateway installs the Gateway API's CRDs, Traefik's RBAC, the
// GatewayClass and the Gateway, starts Traefik in the cluster's network
// namespace (unless it runs already) with a client certificate of its own,
// and waits until Traefik has programmed the Gateway. Delete stops it.
func (c *Cluster) StartGateway(ctx context.Context, bin string) error {
	for _, need := range []string{"traefik", gatewayCRDsDir} {
		if _, err := os.Stat(filepath.Join(bin, need)); err != nil {
			return fmt.Errorf("real node gateway: %s missing in %s (run 'make tools-node' or 'hack/tools.sh traefik gateway-api-crds')", need, bin)
		}
	}
	if _, err := os.Stat(c.pki("gateway.crt")); err != nil {
		return fmt.Errorf("real node gateway: this node has no certificate for Traefik (it was made before the node had a Gateway): remove it ('make down NODE=real') and start it again: %w", err)
	}
	// kubectl reads a directory's files only when it is no symlink, and
	// hack/tools.sh links the cached one into bin/.
	crds, err := filepath.EvalSymlinks(filepath.Join(bin, gatewayCRDsDir))
	if err != nil {
		return fmt.Errorf("real node gateway: %w", err)
	}
	if err := c.Kubectl(ctx, bin, "apply", "--server-side", "-f", crds); err != nil {
		return fmt.Errorf("real node gateway: installing the Gateway API CRDs: %w", err)
	}
	if err := c.Kubectl(ctx, bin, "wait", "--for=condition=Established", "--timeout=60s", "-f", crds); err != nil {
		return fmt.Errorf("real node gateway: waiting for the Gateway API CRDs: %w", err)
	}
	manifest := c.path("gateway.yaml")
	if err := os.WriteFile(manifest, []byte(gatewayManifest), 0o644); err != nil {
		return fmt.Errorf("real node gateway: %w", err)
	}
	if err := c.Kubectl(ctx, bin, "apply", "--server-side", "-f", manifest); err != nil {
		return fmt.Errorf("real node gateway: installing the Gateway: %w", err)
	}
	if c.pid("traefik") == 0 {
		kubeconfig := c.path("kubeconfigs", "gateway")
		if err := c.writeKubeconfig(kubeconfig, innerServer, "gateway"); err != nil {
			return err
		}
		// Traefik's provider reads a kubeconfig only from KUBECONFIG.
		args := append([]string{"env", "KUBECONFIG=" + kubeconfig}, traefikArgs(bin)...)
		if err := c.start(daemon{name: "traefik", inNamespace: true, args: args}); err != nil {
			return err
		}
	}
	return c.waitGatewayProgrammed(ctx)
}

// gatewayTimeout bounds waiting for Traefik to program the Gateway.
const gatewayTimeout = time.Minute

// waitGatewayProgrammed waits for the Gateway's Programmed condition,
// which Traefik sets once its entry point serves the Gateway's listener.
func (c *Cluster) waitGatewayProgrammed(ctx context.Context) error {
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("real node gateway: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, gatewayTimeout)
	defer cancel()
	var last string
	err = c.poll(ctx, "Traefik to program Gateway "+GatewayNamespace+"/"+GatewayName, func(ctx context.Context) (bool, error) {
		gw, err := client.Resource(gatewayGVR).Namespace(GatewayNamespace).Get(ctx, GatewayName, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		programmed, reason := conditionTrue(gw, "Programmed")
		last = reason
		return programmed, nil
	}, "traefik")
	if err != nil {
		return fmt.Errorf("%w (last: %s)", err, last)
	}
	return nil
}

// conditionTrue reports whether obj's status has the condition with
// status True, and says what it has otherwise.
func conditionTrue(obj *unstructured.Unstructured, condition string) (bool, string) {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conditions {
		cond, ok := raw.(map[string]any)
		if !ok || cond["type"] != condition {
			continue
		}
		return cond["status"] == "True", fmt.Sprintf("%s=%v: %v", condition, cond["status"], cond["message"])
	}
	return false, "no " + condition + " condition yet"
}

// HTTPClient sends requests from inside the cluster's network namespace:
// to the Gateway (GatewayAddr), or to a pod. Traefik balances each
// request, not each connection, so the client keeps its connections.
func (c *Cluster) HTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{DialContext: Dialer{Netns: c.NetnsPath()}.DialContext},
	}
}
