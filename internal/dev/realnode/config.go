package realnode

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// NodeName is the name of the cluster's one node.
const NodeName = "dc-node"

// cniBinDir is where Debian's containernetworking-plugins puts the plugins.
const cniBinDir = "/usr/lib/cni"

// state is a cluster's directory: its configuration, certificates, logs,
// PID records and every daemon's data. Delete needs nothing else.
type state struct {
	Dir string
	// Netns is the name of the cluster's network namespace.
	Netns string
}

func (s *state) path(parts ...string) string {
	return filepath.Join(append([]string{s.Dir}, parts...)...)
}
func (s *state) logPath(name string) string { return s.path("logs", name+".log") }
func (s *state) pidPath(name string) string { return s.path("pids", name) }
func (s *state) pki(name string) string     { return s.path("pki", name) }

// containerdSocket is containerd's own socket, so that nothing collides
// with another containerd on the machine.
func (s *state) containerdSocket() string { return s.path("containerd", "containerd.sock") }

// identities are the certificates the cluster's components use.
func identities() []identity {
	return []identity{
		{file: "apiserver", cn: "kube-apiserver", server: true,
			ips: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(NodeIP), net.ParseIP(KubernetesServiceIP)},
			dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}},
		{file: "admin", cn: "deployconfig-admin", groups: []string{"system:masters"}},
		{file: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", groups: []string{"system:masters"}},
		{file: "controller-manager", cn: "system:kube-controller-manager"},
		{file: "scheduler", cn: "system:kube-scheduler"},
		{file: "kubelet", cn: "system:node:" + NodeName, groups: []string{"system:nodes"}},
		{file: "kubelet-serving", cn: NodeName, server: true, ips: []net.IP{net.ParseIP(NodeIP)}, dns: []string{NodeName}},
		// Traefik, the Gateway's data plane: a user of its own, bound to
		// the least it needs (gateway.go).
		{file: "gateway", cn: gatewayUser},
	}
}

// writeKubeconfig writes a kubeconfig for the identity in pki/ID.crt that
// reaches the API server at server.
func (s *state) writeKubeconfig(path, server, id string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["realnode"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: s.pki("ca.crt")}
	cfg.AuthInfos[id] = &clientcmdapi.AuthInfo{ClientCertificate: s.pki(id + ".crt"), ClientKey: s.pki(id + ".key")}
	cfg.Contexts["realnode"] = &clientcmdapi.Context{Cluster: "realnode", AuthInfo: id}
	cfg.CurrentContext = "realnode"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return nil
}

// innerServer is the API server's address inside the namespace.
var innerServer = fmt.Sprintf("https://127.0.0.1:%d", APIServerPort)

// containerdConfig is containerd 1.6's configuration: a root, state and
// socket of its own, the CRI plugin with our pause image, cgroupfs,
// restrict_oom_score_adj (without it every sandbox fails here: the
// sandbox has no CAP_SYS_RESOURCE to raise oom_score_adj), pod network
// namespaces under its state directory (so that Delete's unmount finds
// them), the bridge CNI, and registry hosts for plain-HTTP pulls from the
// cluster's registry.
func (s *state) containerdConfig(pauseImage string) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[8]q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[9]q
`, s.path("containerd", "root"), s.path("containerd", "state"), s.containerdSocket(),
		s.path("containerd", "ttrpc.sock"), s.path("containerd", "opt"), pauseImage,
		cniBinDir, s.path("cni", "net.d"), s.path("containerd", "certs.d"))
}

// registryHostsPath is containerd's hosts.toml for the registry at host.
func (s *state) registryHostsPath(host string) string {
	return s.path("containerd", "certs.d", host, "hosts.toml")
}

// registryHosts lets containerd pull from the registry at host (the
// cluster's, or one Cluster.ExposeRegistry exposed) over plain HTTP.
func registryHosts(host string) string {
	return fmt.Sprintf(`server = "http://%[1]s"

[host."http://%[1]s"]
  capabilities = ["pull", "resolve"]
`, host)
}

// cniConfig attaches pods to the bridge with addresses from PodCIDR and a
// default route through the bridge's address (which the Service rule
// needs: 10.96.0.1 is not on the bridge), and no masquerading: the
// namespace has no route out, so there is nowhere to masquerade to.
func (s *state) cniConfig() string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "deployconfig",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %q
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, BridgeName, PodCIDR, NodeIP, s.path("cni", "ipam"))
}

// kubeletConfig is what this kind of machine needs (REALNODE.md): cgroup
// v1 allowed, cgroupfs (containerd 1.6 lacks the CRI RuntimeConfig call),
// swap tolerated, webhook authentication and authorization with the
// cluster's CA, and eviction thresholds loose enough that a busy disk
// evicts nothing.
func (s *state) kubeletConfig() string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %[8]s
failSwapOn: false
containerRuntimeEndpoint: unix://%[1]s
address: %[2]s
port: 10250
readOnlyPort: 0
healthzPort: 0
tlsCertFile: %[3]q
tlsPrivateKeyFile: %[4]q
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %[5]q}
authorization:
  mode: Webhook
podLogsDir: %[6]q
resolvConf: %[7]q
serializeImagePulls: false
registerNode: true
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%%"
  nodefs.inodesFree: "1%%"
  imagefs.available: "1%%"
  imagefs.inodesFree: "1%%"
`, s.containerdSocket(), NodeIP, s.pki("kubelet-serving.crt"), s.pki("kubelet-serving.key"),
		s.pki("ca.crt"), s.path("pod-logs"), s.path("resolv.conf"), s.cgroupRoot())
}

// writeFiles writes a file per path, making directories as needed.
func writeFiles(files map[string]string) error {
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
