package main

import (
	"context"
	"io"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/spf13/cobra"

	"github.com/deployconfig/deployconfig/internal/deployer"
	"github.com/deployconfig/deployconfig/internal/version"
)

// deployFunc carries out a deployment; main's talks to the cluster.
type deployFunc func(ctx context.Context, opts deployer.Options, kubeconfig string) error

// flags are dc-deploy's command-line flags: the deployer's own, and those
// of the binary alone.
type flags struct {
	deployer.Flags
	kubeconfig string
	verbosity  int
}

// newRootCommand builds the dc-deploy command. The rollout's log goes to
// out, diagnostics to errOut; getenv reads the environment the deployer pod
// provides.
func newRootCommand(out, errOut io.Writer, getenv func(string) string, deploy deployFunc) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "dc-deploy",
		Short: "Carry out one deployment of a DeploymentConfig",
		Long: `dc-deploy runs in a deployment's deployer pod. It scales down older
deployments, runs the DeploymentConfig's strategy (Recreate or Rolling) with
its lifecycle hooks, and prints the rollout's log. The deployment comes from
DC_DEPLOYMENT_NAME and DC_DEPLOYMENT_NAMESPACE, or the flags.

A custom strategy's command can call dc-deploy itself; --until stops the
rollout early (start, pre, mid, or a percentage such as 50%) so the command
can do its own work before calling dc-deploy again to finish.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Get().String(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := f.Options(getenv)
			opts.Out = out
			opts.Log = newLogger(errOut, f.verbosity)
			return deploy(cmd.Context(), opts, f.kubeconfig)
		},
	}
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SetVersionTemplate("dc-deploy {{.Version}}\n")
	fl := cmd.Flags()
	f.AddFlags(fl)
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, or the pod's service account)")
	fl.IntVarP(&f.verbosity, "v", "v", 0, "diagnostics verbosity on stderr")
	return cmd
}

// newLogger writes diagnostics up to verbosity v to w.
func newLogger(w io.Writer, v int) logr.Logger {
	return funcr.New(func(prefix, args string) {
		_, _ = io.WriteString(w, prefix+" "+args+"\n")
	}, funcr.Options{Verbosity: v})
}
