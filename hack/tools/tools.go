//go:build tools

// Package tools pins the Kubernetes and etcd commands that the integration
// tests, end-to-end tests and the local playground run, so that `go mod tidy`
// keeps their dependencies and `go build` builds them at the pinned versions.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
