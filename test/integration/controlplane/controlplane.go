// Package controlplane starts what the integration suites run against:
// kube-apiserver and etcd (envtest, on the binaries hack/tools.sh builds
// into bin/ and KUBEBUILDER_ASSETS names) with the CRDs of config/crd, the
// shipped namespace and RBAC when a suite asks, and dc-controller's manager
// in the test process. Every suite under test/integration starts its
// control plane here, so that they differ only in what they test.
package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/deployconfig/deployconfig/internal/controller"
)

// ControllerIdentity is the ServiceAccount dc-controller runs as in the
// suites that install the shipped RBAC: a permission missing from
// config/rbac fails their tests.
const ControllerIdentity = "system:serviceaccount:deployconfig-system:dc-controller"

// DeployerImage is the deployer image the suites' dc-controller puts in
// deployer pods, which no kubelet runs.
const DeployerImage = "example.com/deployconfig/deployer:test"

// Options say what a suite's control plane holds.
type Options struct {
	// Root is the repository's root, relative to the suite's directory,
	// such as "../.." for test/integration.
	Root string
	// MoreCRDs are CRD directories besides config/crd/bases, relative to
	// Root (the Gateway API's, in bin/gateway-api-crds).
	MoreCRDs []string
	// RBAC applies config/manager/namespace.yaml and config/rbac with
	// kubectl, as an operator would, for dc-controller to run under
	// (ControllerConfig).
	RBAC bool
}

// Plane is a running control plane.
type Plane struct {
	// Config and Client reach it as its administrator; Client knows
	// dc-controller's scheme.
	Config *rest.Config
	Client client.WithWatch
	// Kubeconfig is a kubeconfig file of the administrator, Kubectl the
	// kubectl of KUBEBUILDER_ASSETS, for the tests that run commands.
	Kubeconfig, Kubectl string

	env *envtest.Environment
	dir string
}

// Start starts a control plane; Stop removes it. It logs dc-controller to
// stderr with DC_TEST_LOGS set, and nowhere otherwise: its logs drown the
// tests' output.
func Start(o Options) (*Plane, error) {
	if os.Getenv("DC_TEST_LOGS") != "" {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run `make test-integration`, which builds bin/ and sets it")
	}
	crds := []string{filepath.Join(o.Root, "config", "crd", "bases")}
	for _, d := range o.MoreCRDs {
		crds = append(crds, filepath.Join(o.Root, d))
	}
	p := &Plane{env: &envtest.Environment{CRDDirectoryPaths: crds, ErrorIfCRDPathMissing: true}, Kubectl: filepath.Join(assets, "kubectl")}
	cfg, err := p.env.Start()
	if err != nil {
		return nil, fmt.Errorf("start the control plane: %w", err)
	}
	p.Config = cfg
	if err := p.setUp(o); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// setUp makes the administrator's client and kubeconfig and applies the
// RBAC the options ask for.
func (p *Plane) setUp(o Options) error {
	scheme, err := controller.NewScheme()
	if err != nil {
		return err
	}
	if p.Client, err = client.NewWithWatch(p.Config, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("make the administrator's client: %w", err)
	}
	if p.dir, err = os.MkdirTemp("", "dc-integration-"); err != nil {
		return err
	}
	p.Kubeconfig = filepath.Join(p.dir, "kubeconfig")
	if err := os.WriteFile(p.Kubeconfig, p.env.KubeConfig, 0o600); err != nil {
		return err
	}
	if !o.RBAC {
		return nil
	}
	for _, args := range [][]string{
		{"apply", "-f", filepath.Join(o.Root, "config", "manager", "namespace.yaml")},
		{"apply", "-k", filepath.Join(o.Root, "config", "rbac")},
	} {
		var stderr bytes.Buffer
		cmd := exec.Command(p.Kubectl, append([]string{"--kubeconfig", p.Kubeconfig}, args...)...)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("kubectl %v: %v: %s", args, err, stderr.String())
		}
	}
	return nil
}

// Stop stops the control plane and removes its files.
func (p *Plane) Stop() {
	if err := p.env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop the control plane: %v\n", err)
	}
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
	}
}

// ControllerConfig is how dc-controller reaches the API server in a
// suite started with RBAC: as its ServiceAccount, under config/rbac.
func (p *Plane) ControllerConfig() *rest.Config {
	cfg := rest.CopyConfig(p.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: ControllerIdentity,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:deployconfig-system", "system:authenticated"},
	}
	return cfg
}

// RunManager runs dc-controller's manager on cfg in this process until
// the returned function is called.
func RunManager(cfg *rest.Config, o controller.Options) (func(), error) {
	mgr, err := controller.NewManager(cfg, o)
	if err != nil {
		return nil, fmt.Errorf("make dc-controller's manager: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		stop()
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "dc-controller: %v\n", err)
		}
	}, nil
}
