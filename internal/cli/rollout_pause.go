package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// newRolloutPauseCommand returns `rollout pause` (pause true) or `rollout
// resume` (pause false).
func newRolloutPauseCommand(a *app, pause bool) *cobra.Command {
	out := newOutputFlags()
	verb, short, long := "resume", "Resume a paused DeploymentConfig", `Resume a paused DeploymentConfig: its triggers fire again, and a template
changed while it was paused rolls out.`
	if pause {
		verb, short, long = "pause", "Pause a DeploymentConfig: no new rollouts until it is resumed", `Pause a DeploymentConfig: triggers do not fire and rollouts cannot be
started, cancelled, retried or undone until it is resumed. Template changes
made meanwhile roll out on resume.`
	}
	cmd := &cobra.Command{
		Use:               verb + " NAME",
		Short:             short,
		Long:              long,
		Example:           fmt.Sprintf("  kubectl dc rollout %s web", verb),
		Args:              nameArg(verb),
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := parseName(args[0])
			return a.rolloutPause(cmd.Context(), name, pause, out)
		},
	}
	out.addFlags(cmd)
	return cmd
}

func (a *app) rolloutPause(ctx context.Context, name string, pause bool, out *outputFlags) error {
	c, dc, err := a.openDC(ctx, name, out)
	if err != nil {
		return err
	}
	switch {
	case pause && dc.Spec.Paused:
		return fmt.Errorf("deploymentconfig %q is already paused", dc.Name)
	case !pause && !dc.Spec.Paused:
		return fmt.Errorf("deploymentconfig %q is not paused", dc.Name)
	}
	// A merge patch of spec.paused alone never overwrites a concurrent
	// change of another field.
	base := dc.DeepCopy()
	dc.Spec.Paused = pause
	if err := c.DC.Patch(ctx, dc, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("update deploymentconfig %q: %w", dc.Name, err)
	}
	operation := "resumed"
	if pause {
		operation = "paused"
	}
	return a.printDone(out, c.Scheme, dc, operation)
}
