package clusterenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

// Paths of the checkout that Setup installs from.
const (
	crdDir        = "config/crd/bases"
	rbacDir       = "config/rbac"
	namespaceYAML = "config/manager/namespace.yaml"
)

// ControllerNamespace is where the dc-controller ServiceAccount and its
// leader election Lease live (config/rbac and config/manager).
const ControllerNamespace = "deployconfig-system"

// controllerServiceAccount is the account dc-controller replicas act as.
const controllerServiceAccount = "dc-controller"

// Env is a running cluster with its pod runtime and controllers.
type Env struct {
	// Cluster is the playground cluster, with an admin client.
	Cluster *playground.Cluster
	// Options describe the cluster.
	Options playground.Options
	// BinDir holds the cluster binaries and deployconfig's own.
	BinDir string
	// Root is the deployconfig checkout.
	Root string
	// Client reads and writes DeploymentConfigs and core objects as the
	// cluster's admin.
	Client client.WithWatch
	// Controllers are the dc-controller replicas.
	Controllers *Controllers

	runtime *playground.Server
	// components restarts control plane processes that exit.
	components *components
	// dir holds the controllers' kubeconfig, PID files and logs, in the
	// cluster's directory so that they go with it.
	dir string
	log io.Writer
}

// Setup creates the cluster, installs the CRD and the controller's RBAC,
// starts the pod runtime and one dc-controller replica.
func Setup(ctx context.Context, o playground.Options, root string) (*Env, error) {
	for _, name := range []string{"dc-local", "dc-controller", "kubectl-dc"} {
		if _, err := os.Stat(filepath.Join(o.BinDir, name)); err != nil {
			return nil, fmt.Errorf("no %s in %s: run `make build`", name, o.BinDir)
		}
	}
	cluster, err := playground.Create(ctx, o)
	if err != nil {
		return nil, err
	}
	clusterDir, err := o.ClusterDir()
	if err != nil {
		return nil, err
	}
	e := &Env{Cluster: cluster, Options: o, BinDir: o.BinDir, Root: root, dir: filepath.Join(clusterDir, "dc-controllers"), log: logOf(o)}
	e.components = e.superviseComponents(ctx)
	if err := cluster.InstallCRDs(ctx, filepath.Join(root, crdDir)); err != nil {
		return e, err
	}
	if err := e.installRBAC(ctx); err != nil {
		return e, err
	}
	scheme, err := controller.NewScheme()
	if err != nil {
		return e, err
	}
	if e.Client, err = client.NewWithWatch(cluster.Config, client.Options{Scheme: scheme}); err != nil {
		return e, fmt.Errorf("making a client: %w", err)
	}
	if err := e.startRuntime(ctx); err != nil {
		return e, err
	}
	kubeconfig, err := e.writeControllerKubeconfig()
	if err != nil {
		return e, err
	}
	e.Controllers = newControllers(e.dir, filepath.Join(o.BinDir, "dc-controller"), kubeconfig, e.log)
	return e, e.Controllers.Ensure(ctx, ControllerSpec{Replicas: 1})
}

// Teardown stops the controllers and removes the cluster, with its runtime.
func (e *Env) Teardown(ctx context.Context) error {
	var errs []error
	if e.Controllers != nil {
		errs = append(errs, e.Controllers.StopAll(ctx))
	}
	if e.components != nil {
		e.components.stop()
	}
	errs = append(errs, playground.Delete(ctx, e.Options))
	return errors.Join(errs...)
}

// Clientset is an admin client of the cluster's built-in APIs.
func (e *Env) Clientset() kubernetes.Interface {
	return e.Cluster.Clientset
}

// Config is the cluster's admin client configuration.
func (e *Env) Config() *rest.Config {
	return e.Cluster.Config
}

// installRBAC applies the controller's namespace, ServiceAccount, roles and
// bindings as shipped.
func (e *Env) installRBAC(ctx context.Context) error {
	namespace, files, err := playground.KustomizationFiles(filepath.Join(e.Root, rbacDir))
	if err != nil {
		return err
	}
	objs, err := playground.ReadManifests(append([]string{filepath.Join(e.Root, namespaceYAML)}, files...)...)
	if err != nil {
		return err
	}
	a, err := playground.NewApplier(e.Cluster.Config)
	if err != nil {
		return err
	}
	if _, err := a.Apply(ctx, namespace, objs...); err != nil {
		return fmt.Errorf("installing the controller's RBAC: %w", err)
	}
	return nil
}

// startRuntime starts `dc-local serve --controller=false`: the pod runtime
// without a controller.
func (e *Env) startRuntime(ctx context.Context) error {
	command := []string{filepath.Join(e.BinDir, "dc-local"), "serve", "--controller=false", "--name", e.Options.Name, "--bin", e.BinDir}
	server, err := e.Cluster.StartServer(ctx, command)
	if err != nil {
		return fmt.Errorf("starting the pod runtime: %w", err)
	}
	e.runtime = server
	return nil
}

// writeControllerKubeconfig writes a kubeconfig that reaches the cluster as
// the admin impersonating the dc-controller ServiceAccount, so that the
// controller has exactly the permissions config/rbac gives it.
func (e *Env) writeControllerKubeconfig() (string, error) {
	cfg, err := clientcmd.LoadFromFile(e.Cluster.Kubeconfig)
	if err != nil {
		return "", fmt.Errorf("reading the cluster's kubeconfig: %w", err)
	}
	user := "system:serviceaccount:" + ControllerNamespace + ":" + controllerServiceAccount
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ControllerNamespace, "system:authenticated"}
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = user
		auth.ImpersonateGroups = groups
	}
	path := filepath.Join(e.dir, "dc-controller.kubeconfig")
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return "", fmt.Errorf("making the controllers' directory: %w", err)
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing the controller's kubeconfig: %w", err)
	}
	return path, nil
}

// RuntimeLog is the path of the pod runtime's log.
func (e *Env) RuntimeLog() string {
	if e.runtime == nil {
		return ""
	}
	return e.runtime.Log
}

// logOf is where progress lines go.
func logOf(o playground.Options) io.Writer {
	if o.Log == nil {
		return io.Discard
	}
	return o.Log
}

// logf writes one progress line.
func logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "%s clusterenv: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
