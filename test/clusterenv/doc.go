// Package clusterenv is the cluster that chaos and security tests run
// against: a playground cluster (a real etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler, with kwok playing the
// kubelets) where the parts of deployconfig run as separate processes, so
// that tests can break them one at a time:
//
//   - the local pod runtime alone (`dc-local serve --controller=false`),
//     which runs deployer pods and hook pods as a kubelet would;
//   - dc-controller replicas as processes of their own (Controllers), under
//     the shipped RBAC of config/rbac (they impersonate the dc-controller
//     ServiceAccount), which tests kill, restart, and run with leader
//     election;
//   - the kube-apiserver, which tests restart (RestartAPIServer).
//
// Main is a test binary's TestMain: it creates the cluster, runs the tests
// and removes the cluster, and a watchdog process removes it when the test
// binary dies without doing so.
package clusterenv
