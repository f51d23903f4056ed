package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

func newKubeconfigCommand(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "kubeconfig",
		Short: "Print the path of the playground's kubeconfig",
		Long: `kubeconfig prints the path of the playground cluster's kubeconfig, e.g. for
export KUBECONFIG=$(dc-local kubeconfig). It fails when the cluster does not
exist.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runKubeconfig(cmd.OutOrStdout(), g)
		},
	}
}

func runKubeconfig(out io.Writer, g *globalFlags) error {
	// The path does not depend on the binaries, so no checkout is needed.
	o := playground.Options{Name: g.name}
	exists, err := playground.Exists(o)
	if err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("playground %q does not exist: run dc-local up", g.name)
	}
	path, err := o.KubeconfigPath()
	if err != nil {
		return err
	}
	fmt.Fprintln(out, path)
	return nil
}
