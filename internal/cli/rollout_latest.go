package cli

import (
	"context"

	"github.com/spf13/cobra"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func newRolloutLatestCommand(a *app) *cobra.Command {
	out := newOutputFlags()
	dry := &dryRunFlag{}
	var again bool
	cmd := &cobra.Command{
		Use:   "latest NAME",
		Short: "Start a new rollout of a DeploymentConfig",
		Long: `Start a new rollout of the DeploymentConfig's current template, as a manual
change. It is refused while the latest rollout is still running and while the
DeploymentConfig is paused.`,
		Example: `  # Roll out web again
  kubectl dc rollout latest web

  # Check that a rollout would be accepted
  kubectl dc rollout latest web --dry-run`,
		Args:              nameArg("roll out"),
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := parseName(args[0])
			return a.rolloutLatest(cmd.Context(), name, out, dry)
		},
	}
	// Image triggers are resolved by the controller, never by this command,
	// so every rollout here already deploys the template as it is.
	cmd.Flags().BoolVar(&again, "again", false, "Deploy the current pod template as it is (always the case here: image triggers are resolved by the controller); kept for oc users.")
	dry.addFlag(cmd)
	out.addFlags(cmd)
	return cmd
}

func (a *app) rolloutLatest(ctx context.Context, name string, out *outputFlags, dry *dryRunFlag) error {
	if err := dry.validate(); err != nil {
		return err
	}
	c, err := a.clients()
	if err != nil {
		return err
	}
	if err := out.validate(c.Scheme); err != nil {
		return err
	}
	dc, err := bumpLatestVersion(ctx, c, name, dry, func(dc *dcv1.DeploymentConfig) error {
		if dc.Spec.Paused {
			return pausedError(msgPausedLatest, dc.Name)
		}
		return refuseInProgress(ctx, c, dc)
	})
	if err != nil {
		return err
	}
	return a.printDone(out, c.Scheme, dc, "rolled out"+dry.suffix())
}
