package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/deployconfig/deployconfig/internal/version"
)

func newVersionCommand(a *app) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version, commit and Go version",
		Long: `Print the version of kubectl-dc, the commit it was built from and the Go
version that built it. It needs no cluster.`,
		Example: `  kubectl dc version
  kubectl dc version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(a, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json, or empty for one line.")
	return cmd
}

func printVersion(a *app, output string) error {
	info := version.Get()
	switch output {
	case "":
		_, err := fmt.Fprintf(a.Streams.Out, "kubectl-dc %s\n", info)
		return err
	case "json":
		data, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.Streams.Out, "%s\n", data)
		return err
	default:
		return fmt.Errorf("--output: %q is not a format of version (want json, or empty)", output)
	}
}
