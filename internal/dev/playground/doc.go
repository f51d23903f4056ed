// Package playground manages a local Kubernetes cluster for deployconfig's
// playground (dc-local) and end-to-end tests: a real etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler started by kwokctl's binary
// runtime from locally built binaries, with kwok playing the kubelet of a
// few fake nodes.
//
// kwok makes ordinary pods Running and Ready at once, but leaves deployer
// and hook pods (those labelled deployconfig.io/deployer-pod-for.name) bound
// and Pending, even once deleted: the local pod runtime (package
// podruntime) runs them and removes them. kwok reads Logs objects from the
// cluster, which point `kubectl logs` of those pods at the runtime's log
// files.
//
// The cluster's server, `dc-local serve` (dc-controller and the pod
// runtime), runs in the background with its lock, PID and log files in the
// cluster's directory (StartServer, StopServer, HoldServerLock); deleting
// the cluster stops it first.
//
// Cluster state lives in kwokctl's working directory
// (~/.kwok/clusters/NAME unless KWOK_WORKDIR says otherwise), so kwokctl
// itself can inspect or remove a playground cluster.
package playground
