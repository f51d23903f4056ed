// Package realnode runs a single-node Kubernetes cluster whose kubelet runs
// real containers: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, containerd and a kubelet, plus a registry serving the
// project's images, all inside a network namespace of its own with no route
// out of it, so that no packet of the cluster's pods or Services can leave
// the machine. StartGateway adds a Gateway API data plane: Traefik, built
// from its Go module, serving one Gateway in that namespace.
//
// Every daemon is a process started with `nsenter --net=` (it joins only
// the network namespace, so the kubelet and containerd share the host's
// mounts, which service-account tokens and volumes need; `ip netns exec`
// would give each its own mount namespace and /sys). The API server is
// reached from the root namespace through a loopback forwarder. Everything
// a cluster starts is recorded in its state directory, so that Delete can
// stop and clean it (processes, pod sandboxes, mounts, the namespace with
// its bridge and iptables rules) even after the process that made it died.
// docs/real-node.md describes what runs and why.
package realnode
