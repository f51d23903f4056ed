// Package cli is kubectl-dc, the kubectl plugin for DeploymentConfigs: the
// cobra command tree, the output of each command and the rules users see
// (OpenShift's messages). Commands reach the cluster only through a
// Factory, so tests run them against fake clients and a fixed clock.
package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// app is what every command shares: the factory and the kubectl flags.
type app struct {
	*Factory
	flags *genericclioptions.ConfigFlags
}

// clients connects to the cluster the flags select.
func (a *app) clients() (*Clients, error) {
	return a.Connect(a.flags)
}

// NewRootCommand returns the kubectl-dc command tree.
func NewRootCommand(f *Factory) *cobra.Command {
	a := &app{Factory: f, flags: genericclioptions.NewConfigFlags(true)}
	root := &cobra.Command{
		Use:   "kubectl-dc",
		Short: "Manage DeploymentConfigs: roll out, cancel, retry, undo, inspect and convert",
		Long: `kubectl dc manages DeploymentConfigs (apps.deployconfig.io/v1): versioned
rollouts driven by a deployer pod, with lifecycle hooks, triggers and
rollback, on any Kubernetes cluster.`,
		Annotations:       map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl dc"},
		SilenceErrors:     true,
		SilenceUsage:      true,
		DisableAutoGenTag: true,
	}
	root.SetIn(f.Streams.In)
	root.SetOut(f.Streams.Out)
	root.SetErr(f.Streams.ErrOut)
	root.SetFlagErrorFunc(flagError)
	a.flags.AddFlags(root.PersistentFlags())
	registerNamespaceCompletion(root, a)
	root.AddCommand(
		newRolloutCommand(a),
		newGetCommand(a),
		newStatusCommand(a),
		newDescribeCommand(a),
		newLogsCommand(a),
		newConvertCommand(a),
		newDashboardCommand(a),
		newPolicyCommand(a),
		newVersionCommand(a),
	)
	return root
}

// Main runs kubectl-dc with args and returns the process's exit code. Every
// error is one line on standard error.
func Main(ctx context.Context, f *Factory, args []string) int {
	root := NewRootCommand(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(f.Streams.ErrOut, "error: "+oneLine(err))
	return 1
}

// flagError words a flag that cobra could not parse: the flag, what it
// expects, what it got.
func flagError(cmd *cobra.Command, err error) error {
	var invalid *pflag.InvalidValueError
	if errors.As(err, &invalid) {
		flag := invalid.GetFlag()
		return fmt.Errorf("--%s: expected %s, got %q (see '%s --help')", flag.Name, flagTypeWords(flag.Value.Type()), invalid.GetValue(), cmd.CommandPath())
	}
	return fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath())
}

// flagTypeWords says what a flag of a pflag type takes.
func flagTypeWords(typ string) string {
	switch typ {
	case "int", "int32", "int64":
		return "a whole number"
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 30s or 5m"
	}
	return "a " + typ
}

// oneLine keeps an error to one line: API errors sometimes carry newlines.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
