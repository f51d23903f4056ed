// Package integration tests deployconfig against a real kube-apiserver and
// etcd (envtest on the binaries hack/tools.sh builds into bin/), with the
// CRD of config/crd installed.
package integration

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/registry"
	"github.com/deployconfig/deployconfig/test/integration/controlplane"
)

// cluster is the control plane every test of the package shares. It is set
// once by TestMain and only read afterwards.
var cluster *controlPlane

type controlPlane struct {
	cfg        *rest.Config
	client     client.Client
	kubeconfig string
	kubectl    string
	// metricsURL and healthURL are where the in-process controllers serve.
	metricsURL string
	healthURL  string
}

// freeAddress returns a loopback address with a port nobody listens on.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	plane, err := controlplane.Start(controlplane.Options{
		Root: filepath.Join("..", ".."),
		// The Gateway API's CRDs (hack/tools.sh gateway-api-crds), for
		// trafficRouting's routes.
		MoreCRDs: []string{filepath.Join("bin", "gateway-api-crds")},
		RBAC:     true,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer plane.Stop()
	cluster = &controlPlane{cfg: plane.Config, client: plane.Client, kubeconfig: plane.Kubeconfig, kubectl: plane.Kubectl}
	stop, err := startControllers(plane.ControllerConfig())
	if err != nil {
		fmt.Fprintf(os.Stderr, "start controllers: %v\n", err)
		return 1
	}
	defer stop()
	return m.Run()
}

// startControllers runs dc-controller's manager in this process as its
// ServiceAccount (cfg).
func startControllers(cfg *rest.Config) (func(), error) {
	metricsAddr, err := freeAddress()
	if err != nil {
		return nil, err
	}
	healthAddr, err := freeAddress()
	if err != nil {
		return nil, err
	}
	cluster.metricsURL = "http://" + metricsAddr + "/metrics"
	cluster.healthURL = "http://" + healthAddr
	return controlplane.RunManager(cfg, controller.Options{
		DeployerImage:     controlplane.DeployerImage,
		Workers:           2,
		ImagePollInterval: imagePollInterval,
		// Secrets that configuration snapshots follow are read, not
		// watched: look often, so that a test sees a change quickly.
		SnapshotSecretInterval: time.Second,
		// Registries of these tests listen on 127.0.0.1, and only there:
		// the rest of loopback stays refused, as without the flag
		// (TestImageTriggerRefusesLoopbackRegistry).
		RegistryNetworks: registry.NetworkPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
		// Analyses run in the controller get no network allowed:
		// TestInControllerAnalysisQueriesGoThroughTheDialPolicy.
		// DeploymentConfigs may ask for in-controller rollouts, which the
		// tests of both deployer modes do.
		AllowDeployerModeChoice: true,
		MetricsAddr:             metricsAddr,
		HealthAddr:              healthAddr,
		LeaderElection:          true,
		LeaderElectionNamespace: "deployconfig-system",
	})
}

// kubectlRun runs kubectl against the control plane as a user would, with
// stdin as its input, and returns its stdout and stderr.
func kubectlRun(ctx context.Context, stdin string, args ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, cluster.kubectl, append([]string{"--kubeconfig", cluster.kubeconfig}, args...)...)
	cmd.Stdin = bytes.NewBufferString(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}
