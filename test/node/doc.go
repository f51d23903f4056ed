// Package node holds the end-to-end tests that run on a real node: a
// kubelet on containerd and runc (internal/dev/realnode), where deployer,
// hook, custom-strategy, controller and application pods are real
// containers of the project's own images (internal/dev/imagebuild), in
// namespaces that enforce the restricted Pod Security Standard.
//
// What the kwok playground (test/e2e) cannot show is proven here: that
// the images start under restricted Pod Security, that dc-deploy's
// in-cluster client works with a projected token, that a converted
// OpenShift custom strategy's `/bin/sh -c '... openshift-deploy ...'` runs
// in the deployer image, that pods which never become ready fail a
// rollout at its timeout, that `kubectl dc logs` reads a real kubelet's
// logs, and that dc-controller runs as config/default installs it, two
// replicas with leader election.
//
// The suite needs root (network namespace, containerd, kubelet); `make
// test-node` runs it. The whole cluster lives in a network namespace with
// no route out, and everything it started is removed when the suite ends,
// or by its watchdog when the test binary dies.
package node
