package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/go-logr/logr/funcr"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/deployconfig/deployconfig/internal/dashboard"
)

// DefaultDashboardPort is the port `kubectl dc dashboard` listens on unless
// --port says otherwise; the playground prints its URL.
const DefaultDashboardPort = 8990

// dashboardOptions are the flags of `dashboard`.
type dashboardOptions struct {
	address  string
	port     int
	readOnly bool
}

func newDashboardCommand(a *app) *cobra.Command {
	opts := dashboardOptions{}
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve a web dashboard to watch and steer rollouts",
		Long: `Serve a web dashboard on 127.0.0.1: the DeploymentConfigs of every namespace
you may list, and for one of them its rollout live (steps, the pods of each
version, hooks, analysis measurements, the deployer's log, events, history
with template diffs), with the actions latest, promote, cancel, retry, undo,
pause and resume.

The dashboard acts as you: it reads the cluster with your kubeconfig, and each
action runs the kubectl dc command of the same name, so your RBAC decides what
succeeds. --read-only hides the actions. --address widens who can reach it:
anyone who can would act as you.`,
		Example: `  kubectl dc dashboard
  kubectl dc dashboard --port 9000 --read-only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.dashboard(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.address, "address", "127.0.0.1", "The address to listen on. Anything but a loopback address lets others act as you.")
	cmd.Flags().IntVar(&opts.port, "port", DefaultDashboardPort, "The port to listen on; 0 picks a free one.")
	cmd.Flags().BoolVar(&opts.readOnly, "read-only", false, "Hide the actions and refuse them: only watch.")
	return cmd
}

func (a *app) dashboard(ctx context.Context, opts dashboardOptions) error {
	if opts.port < 0 || opts.port > 65535 {
		return fmt.Errorf("--port: expected a port from 0 to 65535, got %d", opts.port)
	}
	if ip := net.ParseIP(opts.address); opts.address != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(a.Streams.ErrOut, "Warning: --address %s lets whoever reaches it act on the cluster as you (your kubeconfig, your rights)\n", opts.address)
	}
	c, err := a.clients()
	if err != nil {
		return err
	}
	log := funcr.New(func(prefix, args string) {
		fmt.Fprintln(a.Streams.ErrOut, strings.TrimSpace(prefix+" "+args))
	}, funcr.Options{})
	return dashboard.Serve(ctx, dashboard.Options{
		Address: opts.address, Port: opts.port, ReadOnly: opts.readOnly,
		Kube: c.Kube, DC: c.DC, Namespace: c.Namespace,
		Run: a.inProcess(c), Out: a.Streams.Out, Log: log,
	})
}

// inProcess runs kubectl dc command lines in this process with the
// dashboard's clients: the dashboard's actions and logs are the commands'
// own code paths, messages included. --namespace picks the namespace.
func (a *app) inProcess(c *Clients) dashboard.Runner {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		f := &Factory{
			Streams:    genericiooptions.IOStreams{In: strings.NewReader(""), Out: stdout, ErrOut: stderr},
			Clock:      a.Clock,
			IsTerminal: func(io.Writer) bool { return false },
			Connect: func(flags *genericclioptions.ConfigFlags) (*Clients, error) {
				scoped := *c
				if flags.Namespace != nil && *flags.Namespace != "" {
					scoped.Namespace = *flags.Namespace
				}
				return &scoped, nil
			},
		}
		root := NewRootCommand(f)
		root.SetArgs(args)
		return root.ExecuteContext(ctx)
	}
}
