// Command dc-local runs deployconfig's local playground: a real control
// plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)
// with kwok standing in for kubelets, the DeploymentConfig CRD and a
// sample, all from binaries built by hack/tools.sh, and `dc-local serve`:
// dc-controller with the local pod runtime, which runs deployer pods
// (dc-deploy in-process) and hook pods (local processes).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run())
}

// run executes the command line and turns every failure, even a panic, into
// one line on stderr and a non-zero exit code.
func run() (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "dc-local: internal error: %v\n", r)
			code = 2
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCommand(os.Stdout).ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "dc-local: %v\n", err)
		return 1
	}
	return 0
}
