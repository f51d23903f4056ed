// Command dc-deploy carries out one deployment of a DeploymentConfig from
// inside its deployer pod: it runs the strategy and the lifecycle hooks and
// prints the rollout's log. A custom strategy's command may call it too,
// with --until to run only part of the rollout.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	// Mozilla's CA roots, for registries over TLS in images without a
	// CA bundle (used only when the system has no roots).
	_ "golang.org/x/crypto/x509roots/fallback"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/deployconfig/deployconfig/internal/deployer"
)

func main() {
	os.Exit(run())
}

// run executes the command line; every failure, even a panic, becomes one
// line on stderr and a non-zero exit code.
func run() (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "error: internal error: %v\n", r)
			code = 2
		}
	}()
	// A deleted deployer pod gets SIGTERM: stop waiting and exit.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := newRootCommand(os.Stdout, os.Stderr, os.Getenv, deploy)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// deploy runs the deployer against the cluster: the kubeconfig when one is
// given (flag or KUBECONFIG), the pod's service account otherwise.
func deploy(ctx context.Context, opts deployer.Options, kubeconfig string) error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("load the client configuration: %w", err)
	}
	opts.Config = cfg
	return deployer.Run(ctx, opts)
}
