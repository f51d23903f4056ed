package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

func newDownCommand(g *globalFlags) *cobra.Command {
	var node string
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop dc-local serve and remove the playground cluster and all its state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch node {
			case nodeKwok:
				return runDown(cmd.Context(), cmd.OutOrStdout(), g)
			case nodeReal:
				return runDownReal(cmd.Context(), cmd.OutOrStdout(), g)
			}
			return fmt.Errorf("--node %q: want %s or %s", node, nodeKwok, nodeReal)
		},
	}
	cmd.Flags().StringVar(&node, "node", nodeKwok, "kind of node of the cluster to remove: kwok or real")
	return cmd
}

func runDown(ctx context.Context, out io.Writer, g *globalFlags) error {
	o, err := g.options(out)
	if err != nil {
		return err
	}
	exists, err := playground.Exists(o)
	if err != nil {
		return err
	}
	if !exists {
		fmt.Fprintf(out, "Playground %q does not exist; nothing to do\n", g.name)
		return nil
	}
	if err := playground.Delete(ctx, o); err != nil {
		return err
	}
	fmt.Fprintf(out, "Playground %q removed\n", g.name)
	return nil
}
