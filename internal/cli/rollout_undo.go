package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/retry"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

func newRolloutUndoCommand(a *app) *cobra.Command {
	out := newOutputFlags()
	var toRevision int64
	cmd := &cobra.Command{
		Use:   "undo NAME [--to-revision N]",
		Short: "Roll a DeploymentConfig back to an earlier revision",
		Long: `Roll back by rolling forward: the pod template of an earlier revision (by
default the newest complete one before the latest) becomes the
DeploymentConfig's template, and a new version rolls out. Automatic image
triggers are turned off, so that they do not bring the newer image straight
back; the command says which, and how to turn them on again.`,
		Example: `  # Go back to the last version that rolled out
  kubectl dc rollout undo web

  # Go back to revision 2
  kubectl dc rollout undo web --to-revision 2`,
		Args:              nameArg("roll back"),
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := parseName(args[0])
			return a.rolloutUndo(cmd.Context(), name, toRevision, out)
		},
	}
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "The revision to roll back to; 0 means the newest complete revision before the latest.")
	out.addFlags(cmd)
	return cmd
}

func (a *app) rolloutUndo(ctx context.Context, name string, toRevision int64, out *outputFlags) error {
	if toRevision < 0 {
		return fmt.Errorf("--to-revision: expected a revision number of 1 or more, got %d", toRevision)
	}
	c, dc, err := a.openDC(ctx, name, out)
	if err != nil {
		return err
	}
	if dc.Spec.Paused {
		return pausedError(msgPausedUndo, dc.Name)
	}
	rcs, err := listDeployments(ctx, c, dc)
	if err != nil {
		return err
	}
	target, err := undoTarget(dc, rcs, toRevision)
	if err != nil {
		return err
	}
	encoded, err := deployment.DecodeConfig(target)
	if err != nil {
		return fmt.Errorf("revision %d cannot be restored: %w", deployment.Version(target), err)
	}
	dc, disabled, err := restoreTemplate(ctx, c, name, encoded.Spec.Template, snapshotPin(target))
	if err != nil {
		return err
	}
	if err := a.rollOutRestored(ctx, c, dc, rcs); err != nil {
		return err
	}
	a.warnDisabledTriggers(dc, disabled)
	a.warnPinnedSnapshots(dc)
	return a.printDone(out, c.Scheme, dc, fmt.Sprintf("rolled back to revision %d", deployment.Version(target)))
}

// undoTarget picks the deployment to roll back to.
func undoTarget(dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController, toRevision int64) (*corev1.ReplicationController, error) {
	if toRevision == 0 {
		var best *corev1.ReplicationController
		for _, rc := range rcs {
			if deployment.Version(rc) < dc.Status.LatestVersion && deployment.Phase(rc) == dcv1.DeploymentPhaseComplete {
				best = rc
			}
		}
		if best == nil {
			return nil, fmt.Errorf("deploymentconfig %q has no complete revision before the latest (#%d) to roll back to; pick one with --to-revision (see 'kubectl dc rollout history %s')", dc.Name, dc.Status.LatestVersion, dc.Name)
		}
		return best, nil
	}
	if toRevision == dc.Status.LatestVersion {
		return nil, fmt.Errorf("--to-revision: %d is the latest revision of deploymentconfig %q; pick an older one (see 'kubectl dc rollout history %s')", toRevision, dc.Name, dc.Name)
	}
	if rc := findVersion(rcs, toRevision); rc != nil {
		return rc, nil
	}
	return nil, fmt.Errorf("--to-revision: deploymentconfig %q has no revision %d (see 'kubectl dc rollout history %s')", dc.Name, toRevision, dc.Name)
}

// disabledTrigger is an image trigger that undo turned off.
type disabledTrigger struct {
	index int
	from  string
	names []string
}

// restoreTemplate writes the old template into the DeploymentConfig's
// spec and turns its automatic image triggers off; it returns the updated
// DeploymentConfig and the triggers it turned off.
func restoreTemplate(ctx context.Context, c *Clients, name string, template *corev1.PodTemplateSpec, pin string) (*dcv1.DeploymentConfig, []disabledTrigger, error) {
	var dc *dcv1.DeploymentConfig
	var disabled []disabledTrigger
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		if dc, err = getDC(ctx, c, name); err != nil {
			return err
		}
		dc.Spec.Template = template.DeepCopy()
		disabled = disableImageTriggers(dc)
		pinSnapshots(dc, pin)
		return c.DC.Update(ctx, dc)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("update deploymentconfig %q: %w", name, err)
	}
	return dc, disabled, nil
}

func disableImageTriggers(dc *dcv1.DeploymentConfig) []disabledTrigger {
	var disabled []disabledTrigger
	for i := range dc.Spec.Triggers {
		p := dc.Spec.Triggers[i].ImageChangeParams
		if dc.Spec.Triggers[i].Type != dcv1.DeploymentTriggerOnImageChange || p == nil || !p.Automatic {
			continue
		}
		p.Automatic = false
		disabled = append(disabled, disabledTrigger{index: i, from: p.From.Name, names: p.ContainerNames})
	}
	return disabled
}

// rollOutRestored makes sure the restored template rolls out. A
// ConfigChange trigger does it when the template differs from the latest
// deployment's; otherwise (no such trigger, or the same template) undo
// starts the rollout itself.
func (a *app) rollOutRestored(ctx context.Context, c *Clients, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) error {
	configTriggered := false
	for _, t := range dc.Spec.Triggers {
		configTriggered = configTriggered || t.Type == dcv1.DeploymentTriggerOnConfigChange
	}
	if configTriggered {
		latest := findVersion(rcs, dc.Status.LatestVersion)
		if latest == nil {
			return nil
		}
		current, err := deployment.DecodeConfig(latest)
		if err != nil || !apiequality.Semantic.DeepEqual(current.Spec.Template, dc.Spec.Template) {
			return nil
		}
	}
	_, err := bumpLatestVersion(ctx, c, dc.Name, &dryRunFlag{value: "none"}, func(*dcv1.DeploymentConfig) error { return nil })
	return err
}

// warnDisabledTriggers says which image triggers undo turned off and how to
// turn them on again.
func (a *app) warnDisabledTriggers(dc *dcv1.DeploymentConfig, disabled []disabledTrigger) {
	if len(disabled) == 0 {
		return
	}
	var what, ops []string
	for _, d := range disabled {
		what = append(what, fmt.Sprintf("%s (containers %s)", d.from, strings.Join(d.names, ", ")))
		ops = append(ops, fmt.Sprintf(`{"op":"replace","path":"/spec/triggers/%d/imageChangeParams/automatic","value":true}`, d.index))
	}
	fmt.Fprintf(a.Streams.ErrOut, "Warning: automatic image triggers were disabled so that they do not roll the newer image out again: %s\n", strings.Join(what, "; "))
	fmt.Fprintf(a.Streams.ErrOut, "  Re-enable them with: kubectl patch dc/%s --type=json -p '[%s]'\n", dc.Name, strings.Join(ops, ","))
}
