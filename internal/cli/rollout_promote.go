package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deployconfig/deployconfig/internal/deployment"
)

func newRolloutPromoteCommand(a *app) *cobra.Command {
	out := newOutputFlags()
	var full bool
	cmd := &cobra.Command{
		Use:   "promote NAME [--full]",
		Short: "End the pause of a canary step, or switch a blue-green rollout",
		Long: `Promote the running rollout of a DeploymentConfig. Promote ends the wait a
rollout is in and nothing else: a Rolling rollout paused at a step, or waiting
after an Inconclusive analysis, goes on to the next step; a BlueGreen rollout
waiting for promotion switches its active Service to the new deployment (no
need to wait for autoPromotionSeconds). It never skips an analysis. With
--full it skips every remaining step and analysis, stopping one that is
running, and goes to 100% (a BlueGreen rollout switches for good).

The request is an annotation on the rollout's ReplicationController
(deployconfig.io/promote-request) that the rollout's runner acts on once.`,
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
	encoded, err := deployment.DecodeConfig(rc)
	if err != nil {
		return err
	}
	req, what, err := deployment.Promotion(rc, &encoded.Spec.Strategy, full)
	if err != nil {
		return err
	}
	if err := requestPromote(ctx, c, rc, req); err != nil {
		return err
	}
	return a.printDone(out, c.Scheme, dc, fmt.Sprintf("promoting rollout #%d (%s)", version, what))
}

// requestPromote writes the promote request on the rollout's RC.
func requestPromote(ctx context.Context, c *Clients, rc *corev1.ReplicationController, req deployment.Request) error {
	patch, err := deployment.RequestPatch(req)
	if err != nil {
		return err
	}
	_, err = c.Kube.CoreV1().ReplicationControllers(rc.Namespace).Patch(ctx, rc.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("promote rollout #%d (%s): %w", deployment.Version(rc), rc.Name, err)
	}
	return nil
}
