package realnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// The cluster's addresses. They are private-range addresses, which is why
// they exist only inside the cluster's network namespace: there is no
// route out of it, so a packet to any of them never leaves the machine.
const (
	// BridgeName is the Linux bridge the pods' veths attach to.
	BridgeName = "dcbr0"
	// NodeIP is the bridge's address: the node's InternalIP, the API
	// server's advertised address and the registry's host.
	NodeIP = "10.88.0.1"
	// PodCIDR is the pods' network, on the bridge.
	PodCIDR = "10.88.0.0/16"
	// ServiceCIDR is the Services' ClusterIP range.
	ServiceCIDR = "10.96.0.0/16"
	// KubernetesServiceIP is the ClusterIP of the `kubernetes` Service.
	KubernetesServiceIP = "10.96.0.1"
	// APIServerPort is the API server's secure port inside the namespace.
	APIServerPort = 6443
	// RegistryPort is the loopback registry's port inside the namespace.
	RegistryPort = 5000
)

// RegistryHost is how pods, containerd and the controllers name the
// cluster's registry in image references.
var RegistryHost = fmt.Sprintf("%s:%d", NodeIP, RegistryPort)

// AllowRegistryArg is the dc-controller argument that lets image triggers
// reach the cluster's registry: dc-controller refuses private addresses
// unless told otherwise, and the registry's is one.
var AllowRegistryArg = "--allow-registry-networks=" + NodeIP + "/32"

// netnsDir is where `ip netns` keeps its namespaces' bind mounts.
const netnsDir = "/run/netns"

// netnsPath is the bind mount of the network namespace called name.
func netnsPath(name string) string { return netnsDir + "/" + name }

// createNetwork makes the namespace with loopback up, the bridge with the
// node's address, and the one iptables rule that does kube-proxy's work
// for the `kubernetes` Service. It adds no route: the namespace has no
// other interface, so no default route can exist.
func createNetwork(ctx context.Context, ns string) error {
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "-n", ns, "link", "add", BridgeName, "type", "bridge"},
		{"ip", "-n", ns, "addr", "add", NodeIP + "/16", "dev", BridgeName},
		{"ip", "-n", ns, "link", "set", BridgeName, "up"},
	}
	for _, chain := range []string{"PREROUTING", "OUTPUT"} {
		steps = append(steps, []string{"nsenter", "--net=" + netnsPath(ns), "iptables", "-t", "nat", "-A", chain,
			"-d", KubernetesServiceIP + "/32", "-p", "tcp", "--dport", "443",
			"-j", "DNAT", "--to-destination", fmt.Sprintf("%s:%d", NodeIP, APIServerPort)})
	}
	for _, step := range steps {
		if err := run(ctx, step...); err != nil {
			return fmt.Errorf("network namespace %s: %w", ns, err)
		}
	}
	return nil
}

// deleteNetwork removes the namespace, and with it the bridge, the pods'
// veths and the iptables rules; a namespace that is not there is no error.
func deleteNetwork(ctx context.Context, ns string) error {
	if _, err := os.Stat(netnsPath(ns)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := run(ctx, "ip", "netns", "delete", ns); err != nil {
		return fmt.Errorf("network namespace %s: %w", ns, err)
	}
	return nil
}

// IP runs `ip -n NS ARGS...` and returns its output: a test reads the
// namespace's links and routes with it to check that none leads out.
func IP(ctx context.Context, ns string, args ...string) (string, error) {
	full := append([]string{"-n", ns}, args...)
	out, err := exec.CommandContext(ctx, "ip", full...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ip %s: %v: %s", strings.Join(full, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Dialer opens connections from inside a network namespace. The socket
// is made on an OS thread switched into the namespace and stays there,
// whatever thread uses it afterwards.
type Dialer struct {
	// Netns is the path of the namespace's bind mount.
	Netns string
}

// DialContext is net.Dialer.DialContext from inside the namespace.
func (d Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var conn net.Conn
	err := d.inNamespace(func() error {
		var dialer net.Dialer
		var err error
		conn, err = dialer.DialContext(ctx, network, addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s in %s: %w", addr, d.Netns, err)
	}
	return conn, nil
}

// inNamespace runs f in a goroutine of its own, on an OS thread switched
// into the namespace: a socket f makes stays in it. When the thread
// cannot be switched back it stays locked, so that Go ends it with the
// goroutine rather than run other goroutines in the wrong namespace.
func (d Dialer) inNamespace(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		defer home.Close()
		target, err := os.Open(d.Netns)
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("enter namespace: %w", err)
			return
		}
		fErr := f()
		if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err == nil {
			runtime.UnlockOSThread()
		}
		done <- fErr
	}()
	return <-done
}

// run runs a command and returns its output in the error when it fails.
func run(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// execOutput runs a command and returns its standard output.
func execOutput(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return string(out), nil
}
