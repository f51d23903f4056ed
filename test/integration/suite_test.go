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

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/registry"
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
	// Controller logs go to stderr with DC_TEST_LOGS=1; they drown test
	// output otherwise.
	if os.Getenv("DC_TEST_LOGS") != "" {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run `make test-integration`, which builds bin/ and sets it")
		return 1
	}
	env := &envtest.Environment{
		// The Gateway API's CRDs (hack/tools.sh gateway-api-crds), for
		// trafficRouting's routes.
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases"), filepath.Join("..", "..", "bin", "gateway-api-crds")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start control plane: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop control plane: %v\n", err)
		}
	}()

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := dcv1.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "dc-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster = &controlPlane{
		cfg:        cfg,
		client:     c,
		kubeconfig: kubeconfig,
		kubectl:    filepath.Join(assets, "kubectl"),
	}
	stop, err := startControllers(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "start controllers: %v\n", err)
		return 1
	}
	defer stop()
	return m.Run()
}

// controllerIdentity is the ServiceAccount the controllers run as, under
// the RBAC of config/rbac: a permission missing there fails the tests.
const controllerIdentity = "system:serviceaccount:deployconfig-system:dc-controller"

// testDeployerImage is the deployer image the tests' controller uses.
const testDeployerImage = "example.com/deployconfig/deployer:test"

// startControllers installs the shipped RBAC and runs dc-controller's
// manager in this process, impersonating its ServiceAccount.
func startControllers(admin *rest.Config) (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"apply", "-f", filepath.Join("..", "..", "config", "manager", "namespace.yaml")},
		{"apply", "-k", filepath.Join("..", "..", "config", "rbac")},
	} {
		if _, stderr, err := kubectlRun(ctx, "", args...); err != nil {
			return nil, fmt.Errorf("kubectl %v: %v: %s", args, err, stderr)
		}
	}
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: controllerIdentity,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:deployconfig-system", "system:authenticated"},
	}
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
	mgr, err := controller.NewManager(cfg, controller.Options{
		DeployerImage:     testDeployerImage,
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
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	return func() {
		stop()
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "controllers: %v\n", err)
		}
	}, nil
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
