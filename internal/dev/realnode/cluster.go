package realnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
)

// PauseImage is the repository of the pod sandbox image Options.Images
// must hold.
const PauseImage = imagebuild.PauseImageName

// Options describes a real-node cluster.
type Options struct {
	// Name names the cluster; its network namespace is "dc-" + Name.
	Name string
	// Dir is the cluster's state directory (DefaultDir(Name) when empty).
	Dir string
	// BinDir holds etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler, kubelet and kubectl (hack/tools.sh) and dc-local
	// (which serves the registry and the API server forwarder).
	BinDir string
	// Images are pushed to the cluster's registry as
	// RegistryHost/NAME:Tag before the node starts; PauseImage among them.
	Images map[string]v1.Image
	// Tag is the tag of Images.
	Tag string
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Timeout bounds bringing the cluster up (2 minutes when zero).
	Timeout time.Duration
}

// DefaultDir is where a cluster called name keeps its state.
func DefaultDir(name string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("real node %s: %w", name, err)
	}
	return filepath.Join(home, ".deployconfig", "realnode", name), nil
}

// Cluster is a running real-node cluster.
type Cluster struct {
	state
	// Kubeconfig is an administrator's kubeconfig that reaches the API
	// server from the host, through the forwarder.
	Kubeconfig string
	// Tag is the tag of the images in the registry.
	Tag string
}

// Image is the reference pods use for one of Options.Images.
func (c *Cluster) Image(repo string) string { return ImageRef(repo, c.Tag) }

// ImageRef is RegistryHost/repo:tag.
func ImageRef(repo, tag string) string { return fmt.Sprintf("%s/%s:%s", RegistryHost, repo, tag) }

// NetnsPath is the bind mount of the cluster's network namespace.
func (c *Cluster) NetnsPath() string { return netnsPath(c.Netns) }

// RESTConfig is an administrator's client configuration.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("real node: %w", err)
	}
	return cfg, nil
}

// RegistryTransport reaches the cluster's registry from the host (for
// pushing images), dialling from inside the namespace.
func (c *Cluster) RegistryTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = Dialer{Netns: c.NetnsPath()}.DialContext
	return t
}

// Up brings a new cluster up: PKI, the network namespace, etcd, the API
// server, the registry with Options.Images, containerd, the controller
// manager, the scheduler and a kubelet whose node is Ready. On failure it
// removes what it made.
func Up(ctx context.Context, o Options) (c *Cluster, err error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Minute
	}
	if _, ok := o.Images[PauseImage]; !ok {
		return nil, fmt.Errorf("real node %s: Options.Images has no %s", o.Name, PauseImage)
	}
	if err := CheckHost(); err != nil {
		return nil, err
	}
	if err := checkBinaries(o.BinDir); err != nil {
		return nil, err
	}
	if o.Dir == "" {
		if o.Dir, err = DefaultDir(o.Name); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(o.Dir); err == nil {
		return nil, fmt.Errorf("real node %s: %s exists: the cluster is up or was not removed (remove it with 'dc-local down --node=real --name %s')", o.Name, o.Dir, o.Name)
	}
	c = &Cluster{state: state{Dir: o.Dir, Netns: "dc-" + o.Name}, Tag: o.Tag}
	defer func() {
		if err != nil {
			cleanupCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			_ = Delete(cleanupCtx, o.Dir, o.BinDir)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if err := c.prepare(ctx, o); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "starting etcd, kube-apiserver and the registry in network namespace %s...\n", c.Netns)
	if err := c.startControlPlane(o.BinDir); err != nil {
		return nil, err
	}
	client, err := c.waitAPIServer(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.PushImages(ctx, o.Images, o.Tag); err != nil {
		return nil, c.explain(err, "registry")
	}
	fmt.Fprintln(o.Log, "starting containerd, kube-controller-manager, kube-scheduler and the kubelet...")
	if err := c.startNode(ctx, o.BinDir); err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx, client); err != nil {
		return nil, c.explain(err, "kubelet")
	}
	fmt.Fprintf(o.Log, "node %s is Ready\n", NodeName)
	return c, nil
}

// explain adds the end of a daemon's log to err.
func (c *Cluster) explain(err error, daemon string) error {
	data, _ := os.ReadFile(c.logPath(daemon))
	return fmt.Errorf("%w\n--- end of %s ---\n%s", err, c.logPath(daemon), lastLines(string(data), 15))
}

// binaries are the programs Up runs from Options.BinDir.
var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kubectl", "dc-local"}

func checkBinaries(dir string) error {
	var missing []string
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("real node: %s missing in %s (run 'make tools build' or 'hack/tools.sh kubelet')", strings.Join(missing, ", "), dir)
	}
	return nil
}

// prepare writes the state directory and makes the network namespace.
func (c *Cluster) prepare(ctx context.Context, o Options) error {
	for _, d := range []string{"logs", "pids", "etcd", "kubelet", "pod-logs", "cni/ipam", "containerd/root", "containerd/state"} {
		if err := os.MkdirAll(c.path(d), 0o755); err != nil {
			return fmt.Errorf("real node %s: %w", o.Name, err)
		}
	}
	if err := os.WriteFile(c.path("netns"), []byte(c.Netns), 0o644); err != nil {
		return fmt.Errorf("real node %s: %w", o.Name, err)
	}
	if err := writePKI(c.path("pki"), identities()); err != nil {
		return err
	}
	c.Kubeconfig = c.path("kubeconfig")
	for _, id := range []string{"controller-manager", "scheduler", "kubelet"} {
		if err := c.writeKubeconfig(c.path("kubeconfigs", id), innerServer, id); err != nil {
			return err
		}
	}
	files := map[string]string{
		c.path("containerd", "config.toml"):                c.containerdConfig(ImageRef(PauseImage, o.Tag)),
		c.registryHostsPath(RegistryHost):                  registryHosts(RegistryHost),
		c.path("cni", "net.d", "10-deployconfig.conflist"): c.cniConfig(),
		c.path("kubelet-config.yaml"):                      c.kubeletConfig(),
		c.path("resolv.conf"):                              "# the real-node cluster has no DNS\n",
	}
	if err := writeFiles(files); err != nil {
		return fmt.Errorf("real node %s: %w", o.Name, err)
	}
	if err := c.createCgroupRoot(); err != nil {
		return err
	}
	return createNetwork(ctx, c.Netns)
}

func (c *Cluster) startControlPlane(bin string) error {
	pki := c.pki
	daemons := []daemon{
		{name: "etcd", inNamespace: true, args: []string{filepath.Join(bin, "etcd"),
			"--data-dir", c.path("etcd"), "--name", "default",
			"--listen-client-urls", "http://127.0.0.1:2379", "--advertise-client-urls", "http://127.0.0.1:2379",
			"--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
			"--initial-cluster", "default=http://127.0.0.1:2380", "--unsafe-no-fsync"}},
		{name: "kube-apiserver", inNamespace: true, args: []string{filepath.Join(bin, "kube-apiserver"),
			"--etcd-servers", "http://127.0.0.1:2379",
			"--bind-address", "0.0.0.0", "--advertise-address", NodeIP, "--secure-port", fmt.Sprint(APIServerPort),
			"--tls-cert-file", pki("apiserver.crt"), "--tls-private-key-file", pki("apiserver.key"),
			"--client-ca-file", pki("ca.crt"),
			"--service-account-issuer", "https://kubernetes.default.svc",
			"--service-account-key-file", pki("sa.pub"), "--service-account-signing-key-file", pki("sa.key"),
			"--service-cluster-ip-range", ServiceCIDR,
			"--authorization-mode", "Node,RBAC",
			"--enable-admission-plugins", "NodeRestriction",
			"--kubelet-client-certificate", pki("apiserver-kubelet-client.crt"),
			"--kubelet-client-key", pki("apiserver-kubelet-client.key"),
			// The node's name resolves nowhere: there is no DNS.
			"--kubelet-preferred-address-types", "InternalIP",
			"--cert-dir", c.path("pki", "apiserver-generated")}},
		{name: "registry", inNamespace: true, args: []string{filepath.Join(bin, "dc-local"), "node-registry",
			"--listen", fmt.Sprintf("0.0.0.0:%d", RegistryPort)}},
		{name: "forwarder", args: []string{filepath.Join(bin, "dc-local"), "node-forward",
			"--netns", c.NetnsPath(), "--to", fmt.Sprintf("127.0.0.1:%d", APIServerPort),
			"--addr-file", c.path("forwarder.addr")}},
	}
	for _, d := range daemons {
		if err := c.start(d); err != nil {
			return err
		}
	}
	return nil
}

// startNode starts containerd, waits for its socket, and starts the
// controller manager, the scheduler and the kubelet, which checks the
// runtime once at start.
func (c *Cluster) startNode(ctx context.Context, bin string) error {
	containerd := daemon{name: "containerd", inNamespace: true, args: []string{"containerd", "--config", c.path("containerd", "config.toml")}}
	if err := c.start(containerd); err != nil {
		return err
	}
	err := c.poll(ctx, "containerd's socket", func(context.Context) (bool, error) {
		_, err := os.Stat(c.containerdSocket())
		return err == nil, nil
	}, "containerd")
	if err != nil {
		return err
	}
	pki := c.pki
	daemons := []daemon{
		{name: "kube-controller-manager", inNamespace: true, args: []string{filepath.Join(bin, "kube-controller-manager"),
			"--kubeconfig", c.path("kubeconfigs", "controller-manager"),
			"--authentication-kubeconfig", c.path("kubeconfigs", "controller-manager"),
			"--authorization-kubeconfig", c.path("kubeconfigs", "controller-manager"),
			"--root-ca-file", pki("ca.crt"), "--service-account-private-key-file", pki("sa.key"),
			"--use-service-account-credentials", "--leader-elect=false",
			"--service-cluster-ip-range", ServiceCIDR,
			"--cert-dir", c.path("pki", "kcm-generated")}},
		{name: "kube-scheduler", inNamespace: true, args: []string{filepath.Join(bin, "kube-scheduler"),
			"--kubeconfig", c.path("kubeconfigs", "scheduler"),
			"--authentication-kubeconfig", c.path("kubeconfigs", "scheduler"),
			"--authorization-kubeconfig", c.path("kubeconfigs", "scheduler"),
			"--leader-elect=false", "--cert-dir", c.path("pki", "scheduler-generated")}},
		{name: "kubelet", inNamespace: true, args: []string{filepath.Join(bin, "kubelet"),
			"--config", c.path("kubelet-config.yaml"),
			"--kubeconfig", c.path("kubeconfigs", "kubelet"),
			"--root-dir", c.path("kubelet"),
			"--hostname-override", NodeName, "--node-ip", NodeIP,
			"--cert-dir", c.path("pki", "kubelet-generated")}},
	}
	for _, d := range daemons {
		if err := c.start(d); err != nil {
			return err
		}
	}
	return nil
}

// poll waits until cond holds, and fails at once, with the end of its
// log, when one of the daemons it depends on has exited.
func (c *Cluster) poll(ctx context.Context, what string, cond wait.ConditionWithContextFunc, daemons ...string) error {
	var exited string
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, d := range daemons {
			if c.pid(d) == 0 {
				exited = d
				return false, fmt.Errorf("%s exited", d)
			}
		}
		return cond(ctx)
	})
	if err == nil {
		return nil
	}
	err = fmt.Errorf("waiting for %s: %w", what, err)
	if exited != "" {
		return c.explain(err, exited)
	}
	return err
}

// waitAPIServer waits for the forwarder's address and the API server's
// readiness, then writes the host's kubeconfig.
func (c *Cluster) waitAPIServer(ctx context.Context) (kubernetes.Interface, error) {
	var addr string
	err := c.poll(ctx, "the API server forwarder", func(context.Context) (bool, error) {
		data, err := os.ReadFile(c.path("forwarder.addr"))
		addr = strings.TrimSpace(string(data))
		return err == nil && addr != "", nil
	}, "forwarder")
	if err != nil {
		return nil, err
	}
	if err := c.writeKubeconfig(c.Kubeconfig, "https://"+addr, "admin"); err != nil {
		return nil, err
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("real node: %w", err)
	}
	var last error
	err = c.poll(ctx, "kube-apiserver to be ready", func(ctx context.Context) (bool, error) {
		_, last = client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return last == nil, nil
	}, "etcd", "kube-apiserver", "forwarder")
	if err != nil {
		return nil, fmt.Errorf("%w (last: %v)", err, last)
	}
	return client, nil
}

// PushImages pushes images, by repository, to the cluster's registry as
// RegistryHost/REPO:tag.
func (c *Cluster) PushImages(ctx context.Context, images map[string]v1.Image, tag string) error {
	for repo, img := range images {
		ref, err := name.ParseReference(ImageRef(repo, tag), name.Insecure)
		if err != nil {
			return fmt.Errorf("push %s: %w", repo, err)
		}
		err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithTransport(c.RegistryTransport()))
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("push %s to the cluster's registry: %w", ref, err)
		}
	}
	return nil
}

// waitReady waits for the node to be Ready and for what in-cluster
// clients need: the default service account and kube-root-ca.crt.
func (c *Cluster) waitReady(ctx context.Context, client kubernetes.Interface) error {
	err := c.poll(ctx, "node "+NodeName+" to be Ready", func(ctx context.Context) (bool, error) {
		node, err := client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}, "containerd", "kubelet")
	if err != nil {
		return err
	}
	return c.poll(ctx, "the default service account and kube-root-ca.crt", func(ctx context.Context) (bool, error) {
		_, err1 := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		_, err2 := client.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err1 == nil && err2 == nil, nil
	}, "kube-controller-manager")
}

// Open returns the cluster whose state is in dir, when it is up.
func Open(dir string) (*Cluster, error) {
	netns, err := os.ReadFile(filepath.Join(dir, "netns"))
	if err != nil {
		return nil, fmt.Errorf("real node in %s: %w", dir, err)
	}
	c := &Cluster{state: state{Dir: dir, Netns: strings.TrimSpace(string(netns))}, Kubeconfig: filepath.Join(dir, "kubeconfig")}
	if c.pid("kube-apiserver") == 0 || c.pid("forwarder") == 0 {
		return nil, fmt.Errorf("real node in %s is not running", dir)
	}
	return c, nil
}

// Delete stops and removes the cluster whose state is in dir, whoever
// made it and whether or not that process still runs: the Gateway's
// Traefik and the controllers first (so nothing recreates pods), then every pod through the API server
// (the kubelet stops their containers and tears their network down), the
// kubelet, containerd's remaining tasks and shims, the other daemons,
// every mount under dir, the network namespace (with the bridge, veths
// and iptables rules) and dir itself. A dir that does not exist is no
// error.
func Delete(ctx context.Context, dir, bin string) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	netns, _ := os.ReadFile(filepath.Join(dir, "netns"))
	s := &state{Dir: dir, Netns: strings.TrimSpace(string(netns))}
	var errs []error
	for _, d := range []string{"traefik", "kube-controller-manager", "kube-scheduler"} {
		errs = append(errs, s.stop(ctx, d))
	}
	s.deletePods(ctx, bin)
	errs = append(errs, s.stop(ctx, "kubelet"))
	s.killTasks(ctx)
	errs = append(errs, s.stop(ctx, "containerd"))
	for _, pid := range processesMentioning(s.containerdSocket()) {
		errs = append(errs, stopPID(ctx, pid))
	}
	for _, d := range []string{"kube-apiserver", "etcd", "registry", "forwarder"} {
		errs = append(errs, s.stop(ctx, d))
	}
	errs = append(errs, unmountAll(dir), s.removeCgroupRoot())
	if s.Netns != "" {
		errs = append(errs, deleteNetwork(ctx, s.Netns))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("removing the real node in %s: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing the real node in %s: %w", dir, err)
	}
	return nil
}

// podDeleteTimeout bounds waiting for the kubelet to stop every pod.
const podDeleteTimeout = 90 * time.Second

// deletePods deletes every pod and waits for them to be gone, when the
// API server and the kubelet still run; it is best effort, as killTasks
// follows it.
func (s *state) deletePods(ctx context.Context, bin string) {
	if s.pid("kube-apiserver") == 0 || s.pid("kubelet") == 0 {
		return
	}
	kubectl := func(args ...string) error {
		full := append([]string{filepath.Join(bin, "kubectl"), "--kubeconfig", s.path("kubeconfig"), "--request-timeout", "20s"}, args...)
		return run(ctx, full...)
	}
	if kubectl("delete", "pods", "--all", "--all-namespaces", "--wait=false", "--grace-period=2") != nil {
		return
	}
	_ = kubectl("wait", "pods", "--all", "--all-namespaces", "--for=delete", fmt.Sprintf("--timeout=%s", podDeleteTimeout))
}

// killTasks kills and removes every container task containerd still
// runs, so that no container process outlives the cluster.
func (s *state) killTasks(ctx context.Context) {
	if s.pid("containerd") == 0 {
		return
	}
	ctr := func(args ...string) (string, error) {
		full := append([]string{"--address", s.containerdSocket(), "--namespace", "k8s.io"}, args...)
		out, err := execOutput(ctx, "ctr", full...)
		return out, err
	}
	out, err := ctr("tasks", "list", "--quiet")
	if err != nil {
		return
	}
	for _, id := range strings.Fields(out) {
		_, _ = ctr("tasks", "kill", "--signal", "SIGKILL", id)
		_, _ = ctr("tasks", "delete", "--force", id)
	}
}
