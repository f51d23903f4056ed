package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

func newRolloutCancelCommand(a *app) *cobra.Command {
	out := newOutputFlags()
	cmd := &cobra.Command{
		Use:   "cancel NAME",
		Short: "Cancel the running rollout of a DeploymentConfig",
		Long: `Mark every rollout of the DeploymentConfig that has not finished as cancelled.
The deployer stops, the rollout ends Failed, and the last complete version
keeps (or gets back) the replicas.`,
		Example:           `  kubectl dc rollout cancel web`,
		Args:              nameArg("cancel the rollout of"),
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := parseName(args[0])
			return a.rolloutCancel(cmd.Context(), name, out)
		},
	}
	out.addFlags(cmd)
	return cmd
}

func (a *app) rolloutCancel(ctx context.Context, name string, out *outputFlags) error {
	c, dc, err := a.openDC(ctx, name, out)
	if err != nil {
		return err
	}
	if dc.Spec.Paused {
		return pausedError(msgPausedCancel, dc.Name)
	}
	rcs, err := listDeployments(ctx, c, dc)
	if err != nil {
		return err
	}
	if len(rcs) == 0 {
		fmt.Fprintf(a.Streams.ErrOut, "No rollout is in progress (deploymentconfig %q has not rolled out yet)\n", dc.Name)
		return nil
	}
	var cancelled []string
	for _, rc := range rcs {
		if deployment.IsTerminal(deployment.Phase(rc)) {
			continue
		}
		if err := markCancelled(ctx, c, rc); err != nil {
			return err
		}
		cancelled = append(cancelled, fmt.Sprintf("#%d", deployment.Version(rc)))
	}
	if len(cancelled) == 0 {
		latest := rcs[len(rcs)-1]
		fmt.Fprintf(a.Streams.ErrOut, "No rollout is in progress (latest rollout #%d %s %s)\n",
			deployment.Version(latest), phaseWord(latest), a.ago(latest.CreationTimestamp.Time))
		return nil
	}
	return a.printDone(out, c.Scheme, dc, "cancelling rollout "+strings.Join(cancelled, ", "))
}

// markCancelled records a user's cancel on a deployment; the deployer
// controller then stops its deployer pod.
func markCancelled(ctx context.Context, c *Clients, rc *corev1.ReplicationController) error {
	rcs := c.Kube.CoreV1().ReplicationControllers(rc.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, err := rcs.Get(ctx, rc.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if deployment.IsTerminal(deployment.Phase(fresh)) {
			return nil
		}
		if fresh.Annotations == nil {
			fresh.Annotations = map[string]string{}
		}
		fresh.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
		fresh.Annotations[dcv1.DeploymentStatusReasonAnnotation] = dcv1.DeploymentCancelledByUser
		_, err = rcs.Update(ctx, fresh, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("cancel rollout #%d (%s): %w", deployment.Version(rc), rc.Name, err)
	}
	return nil
}
