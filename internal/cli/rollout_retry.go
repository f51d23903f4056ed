package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// podGoneTimeout bounds the wait for the old deployer and hook pods to
// disappear before a retry: the new deployer pod reuses the name.
const podGoneTimeout = 60 * time.Second

func newRolloutRetryCommand(a *app) *cobra.Command {
	out := newOutputFlags()
	cmd := &cobra.Command{
		Use:   "retry NAME",
		Short: "Retry the latest rollout of a DeploymentConfig when it failed",
		Long: `Run the latest rollout again when it failed: its deployer and hook pods are
deleted, its cancellation and failure reason are cleared, and it starts over
with a new deployer pod, from the first canary step: the step, pause, promote
request and analysis records of the failed run are removed. Only a failed latest rollout can be retried.`,
		Example:           `  kubectl dc rollout retry web`,
		Args:              nameArg("retry"),
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := parseName(args[0])
			return a.rolloutRetry(cmd.Context(), name, out)
		},
	}
	out.addFlags(cmd)
	return cmd
}

func (a *app) rolloutRetry(ctx context.Context, name string, out *outputFlags) error {
	c, dc, err := a.openDC(ctx, name, out)
	if err != nil {
		return err
	}
	if dc.Spec.Paused {
		return pausedError(msgPausedRetry, dc.Name)
	}
	latest, err := getLatest(ctx, c, dc)
	if err != nil {
		return err
	}
	if latest == nil {
		return fmt.Errorf("deploymentconfig %q has no rollout to retry", dc.Name)
	}
	if err := checkRetriable(dc, latest); err != nil {
		return err
	}
	if err := deleteDeployerPods(ctx, c, latest); err != nil {
		return err
	}
	if err := resetToNew(ctx, c, latest); err != nil {
		return err
	}
	return a.printDone(out, c.Scheme, dc, fmt.Sprintf("retrying rollout #%d", deployment.Version(latest)))
}

// checkRetriable allows only a Failed deployment to be retried.
func checkRetriable(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) error {
	phase := deployment.Phase(rc)
	if phase == dcv1.DeploymentPhaseFailed {
		return nil
	}
	msg := fmt.Sprintf("rollout #%d is %s; only failed deployments can be retried", dc.Status.LatestVersion, phaseWord(rc))
	if phase == dcv1.DeploymentPhaseComplete {
		return fmt.Errorf("%s: start a new one with 'kubectl dc rollout latest %s'", msg, dc.Name)
	}
	return fmt.Errorf("%s: cancel it with 'kubectl dc rollout cancel %s'", msg, dc.Name)
}

// deleteDeployerPods deletes the deployment's deployer and hook pods and
// waits until they are gone, so that the new deployer pod, which has the
// same name, is not mistaken for the old one.
func deleteDeployerPods(ctx context.Context, c *Clients, rc *corev1.ReplicationController) error {
	pods := c.Kube.CoreV1().Pods(rc.Namespace)
	selector := labels.SelectorFromSet(labels.Set{dcv1.DeployerPodForDeploymentLabel: rc.Name}).String()
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("list the deployer pods of %s: %w", rc.Name, err)
	}
	names := map[string]bool{deployment.DeployerPodName(rc.Name): true}
	for _, pod := range list.Items {
		names[pod.Name] = true
	}
	for name := range names {
		err := pods.Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete pod %s: %w", name, err)
		}
	}
	return waitPodsGone(ctx, c, rc, selector)
}

// waitPodsGone waits until no pod matches selector and the deployment's
// deployer pod is gone, watching rather than polling.
func waitPodsGone(ctx context.Context, c *Clients, rc *corev1.ReplicationController, selector string) error {
	ctx, cancel := context.WithTimeout(ctx, podGoneTimeout)
	defer cancel()
	pods := c.Kube.CoreV1().Pods(rc.Namespace)
	name := deployment.DeployerPodName(rc.Name)
	for {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return fmt.Errorf("list pods: %w", err)
		}
		_, err = pods.Get(ctx, name, metav1.GetOptions{})
		named := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("get pod %s: %w", name, err)
		}
		if len(list.Items) == 0 && !named {
			return nil
		}
		w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			return fmt.Errorf("watch pods: %w", err)
		}
		select {
		case <-ctx.Done():
			w.Stop()
			return fmt.Errorf("the old deployer pods of %s are still terminating after %s: try again later", rc.Name, podGoneTimeout)
		case <-w.ResultChan():
			w.Stop()
		}
	}
}

// resetToNew moves a failed deployment back to New, without its cancel
// mark and failure reason and without any record of how far it went (its
// canary step, pause, promote request, analysis outcomes): the deployer
// controller starts it over, from its first step.
func resetToNew(ctx context.Context, c *Clients, rc *corev1.ReplicationController) error {
	rcs := c.Kube.CoreV1().ReplicationControllers(rc.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, err := rcs.Get(ctx, rc.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		patch, err := deployment.RetryPatch(fresh)
		if err != nil {
			return err
		}
		_, err = rcs.Patch(ctx, rc.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("reset rollout #%d (%s) to New: %w", deployment.Version(rc), rc.Name, err)
	}
	return nil
}
