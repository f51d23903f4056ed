package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/deployconfig/deployconfig/internal/playground"
)

func newDownCommand(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop dc-local serve and remove the playground cluster and all its state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDown(cmd.Context(), cmd.OutOrStdout(), g)
		},
	}
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
