package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

func newRolloutPromoteCommand(a *app) *cobra.Command {
	out := newOutputFlags()
	var full bool
	cmd := &cobra.Command{
		Use:   "promote NAME [--full]",
		Short: "End the pause of a canary step, or switch a blue-green rollout",
		Long: `Promote the running rollout of a DeploymentConfig. A Rolling rollout with
steps that is paused at a step, or waits after an Inconclusive analysis, goes
on to the next step; with --full it skips every remaining step (pauses and
analyses, stopping an analysis that is running) and goes to 100%. A BlueGreen
rollout switches its active Service to the new deployment (no need to wait
for autoPromotionSeconds).

The request is an annotation on the rollout's ReplicationController
(deployconfig.io/promote-request) that the deployer watches.`,
		Example: `  kubectl dc rollout promote web
  kubectl dc rollout promote web --full`,
		Args:              nameArg("promote the rollout of"),
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := parseName(args[0])
			return a.rolloutPromote(cmd.Context(), name, full, out)
		},
	}
	cmd.Flags().BoolVar(&full, "full", false, "Skip the remaining steps and analyses and go to 100%.")
	out.addFlags(cmd)
	return cmd
}

func (a *app) rolloutPromote(ctx context.Context, name string, full bool, out *outputFlags) error {
	c, dc, err := a.openDC(ctx, name, out)
	if err != nil {
		return err
	}
	rc, err := getLatest(ctx, c, dc)
	if err != nil {
		return err
	}
	if rc == nil {
		return fmt.Errorf("no rollout of deploymentconfig %q is in progress", dc.Name)
	}
	version := deployment.Version(rc)
	if phase := deployment.Phase(rc); deployment.IsTerminal(phase) || deployment.IsCancelled(rc) {
		return fmt.Errorf("no rollout of deploymentconfig %q is in progress (latest rollout #%d %s)", dc.Name, version, phaseWord(rc))
	}
	value, what, err := promoteRequest(rc, full)
	if err != nil {
		return err
	}
	if err := requestPromote(ctx, c, rc, value); err != nil {
		return err
	}
	return a.printDone(out, c.Scheme, dc, fmt.Sprintf("promoting rollout #%d (%s)", version, what))
}

// promoteRequest is the value of the promote request for the rollout, and
// what it does in words.
func promoteRequest(rc *corev1.ReplicationController, full bool) (string, string, error) {
	version := deployment.Version(rc)
	encoded, err := deployment.DecodeConfig(rc)
	if err != nil {
		return "", "", err
	}
	s := encoded.Spec.Strategy
	switch {
	case s.Type == dcv1.DeploymentStrategyTypeBlueGreen && s.BlueGreenParams != nil:
		return dcv1.PromoteFull, "switching service " + s.BlueGreenParams.ActiveService, nil
	case s.RollingParams == nil || len(s.RollingParams.Steps) == 0:
		return "", "", fmt.Errorf("rollout #%d has nothing to promote: its strategy has no steps and is not BlueGreen", version)
	case full:
		return dcv1.PromoteFull, "skipping the remaining steps", nil
	}
	step, total := rc.Annotations[dcv1.DeploymentStepAnnotation], rc.Annotations[dcv1.DeploymentStepsAnnotation]
	if step == "" {
		return "", "", fmt.Errorf("rollout #%d is not at a step yet or past the last one; nothing to promote", version)
	}
	if rc.Annotations[dcv1.DeploymentPausedSinceAnnotation] == "" {
		return "", "", fmt.Errorf("rollout #%d is at step %s of %s and not paused; use --full to skip the remaining steps", version, step, total)
	}
	if rc.Annotations[dcv1.DeploymentPauseReasonAnnotation] == string(dcv1.PauseReasonInconclusive) {
		return step, fmt.Sprintf("going on after the inconclusive analysis of step %s of %s", step, total), nil
	}
	return step, fmt.Sprintf("ending the pause of step %s of %s", step, total), nil
}

// requestPromote writes the promote request on the rollout's RC.
func requestPromote(ctx context.Context, c *Clients, rc *corev1.ReplicationController, value string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{dcv1.PromoteRequestAnnotation: value}}})
	if err != nil {
		return err
	}
	_, err = c.Kube.CoreV1().ReplicationControllers(rc.Namespace).Patch(ctx, rc.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("promote rollout #%d (%s): %w", deployment.Version(rc), rc.Name, err)
	}
	return nil
}
