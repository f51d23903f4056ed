package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// OpenShift's messages. Tests and users match on them, so they are kept
// word for word.
const (
	msgPausedLatest = "cannot deploy a paused deployment config"
	msgPausedCancel = "unable to cancel paused deployment"
	msgPausedRetry  = "unable to retry paused deployment"
	msgPausedUndo   = "cannot rollback a paused deployment config"
)

// pausedError is a paused refusal: OpenShift's message, then how to
// resume.
func pausedError(msg, name string) error {
	return fmt.Errorf("%s: resume it first with 'kubectl dc rollout resume %s'", msg, name)
}

func newRolloutCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND",
		Short: "Start, cancel, promote, retry, undo, pause, resume and watch rollouts",
		Long: `Manage the rollouts of a DeploymentConfig. Each rollout is a new version: a
ReplicationController named NAME-VERSION, driven by a deployer pod.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return fmt.Errorf("SUBCOMMAND is required: one of latest, cancel, promote, retry, undo, history, status, pause, resume (see 'kubectl dc rollout --help')")
		},
	}
	cmd.AddCommand(
		newRolloutLatestCommand(a),
		newRolloutCancelCommand(a),
		newRolloutPromoteCommand(a),
		newRolloutRetryCommand(a),
		newRolloutUndoCommand(a),
		newRolloutHistoryCommand(a),
		newRolloutStatusCommand(a),
		newRolloutPauseCommand(a, true),
		newRolloutPauseCommand(a, false),
	)
	return cmd
}

// dryRunFlag is --dry-run[=none|client|server], as kubectl has it; a bare
// --dry-run means client.
type dryRunFlag struct{ value string }

func (d *dryRunFlag) addFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&d.value, "dry-run", "none", `Only show what would happen: "client" changes nothing, "server" has the API server check the change without saving it.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
}

func (d *dryRunFlag) validate() error {
	switch d.value {
	case "none", "client", "server":
		return nil
	}
	return fmt.Errorf("--dry-run: expected none, client or server, got %q", d.value)
}

// suffix is what the operation message ends with.
func (d *dryRunFlag) suffix() string {
	switch d.value {
	case "client":
		return " (dry run)"
	case "server":
		return " (server dry run)"
	}
	return ""
}

// options are the client options of a write.
func (d *dryRunFlag) options() []client.SubResourceUpdateOption {
	if d.value == "server" {
		return []client.SubResourceUpdateOption{client.DryRunAll}
	}
	return nil
}

// bumpLatestVersion starts a new rollout the way every trigger does: it
// raises status.latestVersion through the status subresource, with the
// cause in status.details. check runs on every fresh copy of the
// DeploymentConfig and may refuse.
func bumpLatestVersion(ctx context.Context, c *Clients, name string, dry *dryRunFlag, check func(*dcv1.DeploymentConfig) error) (*dcv1.DeploymentConfig, error) {
	var dc *dcv1.DeploymentConfig
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		if dc, err = getDC(ctx, c, name); err != nil {
			return err
		}
		if err := check(dc); err != nil {
			return err
		}
		if dry.value == "client" {
			return nil
		}
		dc.Status.LatestVersion++
		dc.Status.Details = &dcv1.DeploymentDetails{
			Message: "manual change",
			Causes:  []dcv1.DeploymentCause{{Type: dcv1.DeploymentTriggerManual}},
		}
		return c.DC.Status().Update(ctx, dc, dry.options()...)
	})
	if err != nil {
		return nil, err
	}
	return dc, nil
}

// refuseInProgress refuses a new rollout while the latest one runs: there
// is never more than one deployer at a time.
func refuseInProgress(ctx context.Context, c *Clients, dc *dcv1.DeploymentConfig) error {
	if dc.Status.LatestVersion == 0 {
		return nil
	}
	latest, err := getLatest(ctx, c, dc)
	if err != nil {
		return err
	}
	if latest == nil {
		return fmt.Errorf("#%d is already in progress (the controller has not created it yet)", dc.Status.LatestVersion)
	}
	if phase := deployment.Phase(latest); !deployment.IsTerminal(phase) {
		return fmt.Errorf("#%d is already in progress (%s)", dc.Status.LatestVersion, phase)
	}
	return nil
}

// printDone prints the DeploymentConfig after a change: by default
// "deploymentconfig.apps.deployconfig.io/NAME <operation>".
func (a *app) printDone(out *outputFlags, scheme *runtime.Scheme, obj runtime.Object, operation string) error {
	p, err := out.printer(scheme, operation)
	if err != nil {
		return err
	}
	return out.printAll(p, scheme, []runtime.Object{obj}, a.Streams.Out)
}
