package cli

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Factory is what the commands need from outside the process: the
// terminal, a clock and a way to reach the cluster. Tests fill it with fake
// clients and a fixed clock.
type Factory struct {
	// Streams are standard input, output and error.
	Streams genericiooptions.IOStreams
	// Clock gives "now" for relative times and ages.
	Clock clock.PassiveClock
	// IsTerminal reports whether w is an interactive terminal, where
	// `rollout status -w` draws a progress bar.
	IsTerminal func(w io.Writer) bool
	// Connect returns clients for the kubeconfig, context and namespace the
	// flags select. It is called after flag parsing, once per command.
	Connect func(flags *genericclioptions.ConfigFlags) (*Clients, error)
}

// Clients reach one cluster and namespace.
type Clients struct {
	// Kube reads and writes core objects: ReplicationControllers, pods,
	// events and logs.
	Kube kubernetes.Interface
	// DC reads, writes and watches DeploymentConfigs.
	DC client.WithWatch
	// Scheme knows the core types and DeploymentConfigs.
	Scheme *runtime.Scheme
	// Namespace is the namespace the flags or the kubeconfig select.
	Namespace string
	// Server is the API server's address, for messages.
	Server string
}

// NewScheme returns a scheme with the core Kubernetes types and
// DeploymentConfigs.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register the core types: %w", err)
	}
	if err := dcv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register DeploymentConfig: %w", err)
	}
	return scheme, nil
}

// NewFactory returns the Factory of the real program: the process's
// streams, the wall clock and clients from the kubeconfig.
func NewFactory(streams genericiooptions.IOStreams) *Factory {
	return &Factory{
		Streams:    streams,
		Clock:      clock.RealClock{},
		IsTerminal: func(w io.Writer) bool { return printers.IsTerminal(w) },
		Connect:    connect,
	}
}

// connect builds clients from the standard kubectl flags.
func connect(flags *genericclioptions.ConfigFlags) (*Clients, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("load the kubeconfig: %w", err)
	}
	namespace, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("find the namespace in the kubeconfig: %w", err)
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create the Kubernetes client: %w", err)
	}
	dc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme, Mapper: newRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("create the DeploymentConfig client: %w", err)
	}
	return &Clients{Kube: kube, DC: dc, Scheme: scheme, Namespace: namespace, Server: cfg.Host}, nil
}

// newRESTMapper maps only deployconfig's own kinds, the types the
// controller-runtime client is used for: it spares every command a
// discovery round trip.
func newRESTMapper() meta.RESTMapper {
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{dcv1.GroupVersion})
	for _, kind := range []string{"DeploymentConfig", "RolloutPolicy"} {
		mapper.Add(dcv1.GroupVersion.WithKind(kind), meta.RESTScopeNamespace)
	}
	return mapper
}
