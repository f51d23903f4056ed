package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// defaultImageTimeout is how long `rollout latest` waits for dc-controller
// to resolve the image triggers: a registry lookup per trigger, normally
// a second or two.
const defaultImageTimeout = 30 * time.Second

// latestOptions are the flags of `rollout latest`.
type latestOptions struct {
	out *outputFlags
	dry *dryRunFlag
	// again skips resolving the image triggers, as oc's --again does.
	again   bool
	timeout time.Duration
}

func newRolloutLatestCommand(a *app) *cobra.Command {
	opts := &latestOptions{out: newOutputFlags(), dry: &dryRunFlag{}}
	cmd := &cobra.Command{
		Use:   "latest NAME",
		Short: "Start a new rollout of a DeploymentConfig",
		Long: `Start a new rollout of the DeploymentConfig, as a manual change. It is refused
while the latest rollout is still running and while the DeploymentConfig is
paused.

When the DeploymentConfig has ImageChange triggers from registry tags
(from.kind DockerImage), dc-controller first resolves every one of them, those
with automatic: false included, and writes the digests the tags point at into
their containers; the rollout then deploys those images. If writing them starts
a rollout by itself (a ConfigChange trigger), that rollout is the one reported
and no second one is started. --again skips this step and deploys the pod
template as it is; so does --dry-run, which changes nothing.`,
		Example: `  # Roll out web, with the current images of its registry tags
  kubectl dc rollout latest web

  # Roll out the pod template as it is, without looking up the tags
  kubectl dc rollout latest web --again

  # Check that a rollout would be accepted
  kubectl dc rollout latest web --dry-run`,
		Args:              nameArg("roll out"),
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := parseName(args[0])
			return a.rolloutLatest(cmd.Context(), name, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.again, "again", false, "Deploy the current pod template without resolving its image triggers first (as oc's --again).")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", defaultImageTimeout, "How long to wait for dc-controller to resolve the image triggers.")
	opts.dry.addFlag(cmd)
	opts.out.addFlags(cmd)
	return cmd
}

func (a *app) rolloutLatest(ctx context.Context, name string, opts *latestOptions) error {
	if err := opts.dry.validate(); err != nil {
		return err
	}
	if opts.timeout <= 0 {
		return fmt.Errorf("--timeout: expected a duration above 0, got %s", opts.timeout)
	}
	c, dc, err := a.openDC(ctx, name, opts.out)
	if err != nil {
		return err
	}
	if err := refuseLatest(ctx, c, dc); err != nil {
		return err
	}
	start := dc.Status.LatestVersion
	if !opts.again && opts.dry.value == "none" && hasRegistryTrigger(dc) {
		if err := a.resolveImageTriggers(ctx, c, name, opts.timeout); err != nil {
			return err
		}
	}
	dc, err = bumpLatestVersion(ctx, c, name, opts.dry, func(dc *dcv1.DeploymentConfig) error {
		if dc.Status.LatestVersion > start {
			return &startedByTriggerError{dc: dc}
		}
		return refuseLatest(ctx, c, dc)
	})
	var started *startedByTriggerError
	if errors.As(err, &started) {
		return a.printDone(opts.out, c.Scheme, started.dc, started.operation())
	}
	if err != nil {
		return err
	}
	return a.printDone(opts.out, c.Scheme, dc, "rolled out"+opts.dry.suffix())
}

// refuseLatest refuses a new rollout of a paused DeploymentConfig or while
// the latest rollout runs.
func refuseLatest(ctx context.Context, c *Clients, dc *dcv1.DeploymentConfig) error {
	if dc.Spec.Paused {
		return pausedError(msgPausedLatest, dc.Name)
	}
	return refuseInProgress(ctx, c, dc)
}

// startedByTriggerError stops `rollout latest` from starting a rollout when
// one started while it resolved the image triggers: the images it asked
// for are what that rollout deploys.
type startedByTriggerError struct{ dc *dcv1.DeploymentConfig }

func (e *startedByTriggerError) Error() string {
	return fmt.Sprintf("rollout #%d already started", e.dc.Status.LatestVersion)
}

// operation words the rollout that started, with its cause, e.g.
// "rolled out (#4 already started: config change)".
func (e *startedByTriggerError) operation() string {
	if d := e.dc.Status.Details; d != nil && d.Message != "" {
		return fmt.Sprintf("rolled out (#%d already started: %s)", e.dc.Status.LatestVersion, d.Message)
	}
	return fmt.Sprintf("rolled out (#%d already started)", e.dc.Status.LatestVersion)
}

// hasRegistryTrigger reports whether the DeploymentConfig has an
// ImageChange trigger that dc-controller resolves: one from a registry tag.
func hasRegistryTrigger(dc *dcv1.DeploymentConfig) bool {
	for _, t := range dc.Spec.Triggers {
		if p := t.ImageChangeParams; t.Type == dcv1.DeploymentTriggerOnImageChange && p != nil && p.From.Kind == dockerImageKind {
			return true
		}
	}
	return false
}
