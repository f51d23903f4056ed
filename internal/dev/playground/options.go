package playground

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// DefaultName is the name of the playground cluster dc-local manages.
	DefaultName = "deployconfig"
	// DefaultNodes is the number of fake nodes of a playground cluster.
	DefaultNodes = 3
	// DefaultWait bounds how long kwokctl waits for a new cluster.
	DefaultWait = 2 * time.Minute

	// workdirEnv is the environment variable kwokctl reads its working
	// directory from.
	workdirEnv = "KWOK_WORKDIR"
)

// Binaries the playground needs in Options.BinDir.
const (
	KubeAPIServerBinary         = "kube-apiserver"
	KubeControllerManagerBinary = "kube-controller-manager"
	KubeSchedulerBinary         = "kube-scheduler"
	EtcdBinary                  = "etcd"
	KwokBinary                  = "kwok"
	KwokctlBinary               = "kwokctl"
)

// Options describes a playground cluster: a kwok cluster of the binary
// runtime, made from the binaries in BinDir, with fake nodes.
type Options struct {
	// Name is the kwok cluster's name; DefaultName when empty.
	Name string
	// BinDir holds kube-apiserver, etcd, kube-controller-manager,
	// kube-scheduler, kwok and kwokctl (what hack/tools.sh builds).
	BinDir string
	// Nodes is the number of fake nodes; DefaultNodes when zero.
	Nodes int
	// NodeCapacity is each fake node's capacity and allocatable;
	// DefaultNodeCapacity() when nil.
	NodeCapacity corev1.ResourceList
	// UnmanagedPodLabels are the label keys of pods kwok leaves bound and
	// Pending for another agent to run; DefaultUnmanagedPodLabels() when nil.
	UnmanagedPodLabels []string
	// Workdir is kwokctl's working directory; clusters live in
	// Workdir/clusters/NAME. Empty means $KWOK_WORKDIR, else ~/.kwok.
	Workdir string
	// Wait bounds how long kwokctl waits for a new cluster to be ready;
	// DefaultWait when zero.
	Wait time.Duration
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Verbose also copies kwokctl's own output to Log.
	Verbose bool
	// APIServerPort is the kube-apiserver's port; 0 lets kwokctl pick one.
	// kwokctl hands every new cluster the highest free ports below 32768,
	// so a cluster whose kube-apiserver is restarted (chaos tests) takes a
	// port of its own, outside that range: otherwise another cluster made
	// meanwhile could take the port it left for a moment.
	APIServerPort int
	// ExtraArgs are kwokctl's `--extra-args` values, component=key=value,
	// e.g. kube-controller-manager=kube-api-qps=100 (the benchmark's
	// client settings); none when empty.
	ExtraArgs []string
}

// DefaultNodeCapacity is room for thousands of pods on each fake node.
func DefaultNodeCapacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1000"),
		corev1.ResourceMemory: resource.MustParse("4Ti"),
		corev1.ResourcePods:   resource.MustParse("10000"),
	}
}

// withDefaults returns a copy of o with every empty field filled in and
// BinDir and Workdir made absolute.
func (o Options) withDefaults() (Options, error) {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Nodes == 0 {
		o.Nodes = DefaultNodes
	}
	if o.NodeCapacity == nil {
		o.NodeCapacity = DefaultNodeCapacity()
	}
	if o.UnmanagedPodLabels == nil {
		o.UnmanagedPodLabels = DefaultUnmanagedPodLabels()
	}
	if o.Wait == 0 {
		o.Wait = DefaultWait
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	workdir, err := resolveWorkdir(o.Workdir, os.Getenv(workdirEnv), os.UserHomeDir)
	if err != nil {
		return o, err
	}
	o.Workdir = workdir
	if o.BinDir != "" {
		if o.BinDir, err = filepath.Abs(o.BinDir); err != nil {
			return o, fmt.Errorf("resolving the binary directory: %w", err)
		}
	}
	return o, o.validate()
}

// validate checks what kwokctl would otherwise refuse with a less helpful
// message.
func (o Options) validate() error {
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return fmt.Errorf("invalid cluster name %q: %s", o.Name, strings.Join(errs, "; "))
	}
	if o.Nodes < 0 {
		return fmt.Errorf("invalid node count %d: must not be negative", o.Nodes)
	}
	return nil
}

// resolveWorkdir picks kwokctl's working directory the way kwokctl does: the
// explicit one, else $KWOK_WORKDIR, else ~/.kwok.
func resolveWorkdir(explicit, env string, home func() (string, error)) (string, error) {
	dir := explicit
	if dir == "" {
		dir = env
	}
	if dir == "" {
		h, err := home()
		if err != nil {
			return "", fmt.Errorf("finding kwok's working directory: %w", err)
		}
		dir = filepath.Join(h, ".kwok")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("finding kwok's working directory: %w", err)
	}
	return abs, nil
}

// ClusterDir is the directory kwokctl keeps the cluster's state in.
func (o Options) ClusterDir() (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	return o.clusterDir(), nil
}

// KubeconfigPath is the path of the cluster's kubeconfig, whether or not the
// cluster exists yet.
func (o Options) KubeconfigPath() (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	return o.kubeconfigPath(), nil
}

func (o Options) clusterDir() string {
	return filepath.Join(o.Workdir, "clusters", o.Name)
}

func (o Options) kubeconfigPath() string {
	return filepath.Join(o.clusterDir(), "kubeconfig.yaml")
}

// configPath is the file kwokctl saves a cluster's configuration in; kwokctl
// counts a directory as a cluster only when it has one.
func (o Options) configPath() string {
	return filepath.Join(o.clusterDir(), "kwok.yaml")
}

// binary is the absolute path of one of the binaries in BinDir.
func (o Options) binary(name string) string {
	return filepath.Join(o.BinDir, name)
}

// checkBinaries reports every missing binary in one error.
func (o Options) checkBinaries(names ...string) error {
	if o.BinDir == "" {
		return errors.New("no binary directory given (it holds kube-apiserver, etcd, kwok, kwokctl, ...)")
	}
	var missing []string
	for _, name := range names {
		info, err := os.Stat(o.binary(name))
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s in %s: run `make tools` (hack/tools.sh) to build them", strings.Join(missing, ", "), o.BinDir)
	}
	return nil
}

// clusterBinaries are the binaries a new cluster is made of.
func clusterBinaries() []string {
	return []string{KubeAPIServerBinary, KubeControllerManagerBinary, KubeSchedulerBinary, EtcdBinary, KwokBinary, KwokctlBinary}
}
