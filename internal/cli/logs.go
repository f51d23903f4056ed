package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/deployconfig/deployconfig/internal/deployment"
)

// deployerContainer is the deployer pod's one container.
const deployerContainer = "deployment"

type logsOptions struct {
	version int64
	follow  bool
}

func newLogsCommand(a *app) *cobra.Command {
	opts := logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs NAME [--version N] [-f]",
		Short: "Print the deployer log of a rollout",
		Long: `Print the log of the deployer pod of the latest rollout, or of --version N:
the strategy's steps and the output of its hook pods. A rollout dc-controller
ran in itself (--deployer-mode controller-when-possible) has no pod: its log,
the same lines, is kept on its ReplicationController (last 16 KiB).`,
		Example: `  kubectl dc logs web
  kubectl dc logs web --version 2
  kubectl dc logs web -f`,
		Args:              nameArg("show the deployer log of"),
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := parseName(args[0])
			return a.logs(cmd.Context(), name, opts)
		},
	}
	cmd.Flags().Int64Var(&opts.version, "version", 0, "The rollout (version) whose log to print; 0 means the latest.")
	cmd.Flags().BoolVarP(&opts.follow, "follow", "f", false, "Follow the log until the deployer ends.")
	return cmd
}

func (a *app) logs(ctx context.Context, name string, opts logsOptions) error {
	if opts.version < 0 {
		return fmt.Errorf("--version: expected a version number of 1 or more, got %d", opts.version)
	}
	c, err := a.clients()
	if err != nil {
		return err
	}
	dc, err := getDC(ctx, c, name)
	if err != nil {
		return err
	}
	version := opts.version
	if version == 0 {
		version = dc.Status.LatestVersion
	}
	switch {
	case dc.Status.LatestVersion == 0:
		return fmt.Errorf("deploymentconfig %q has not rolled out yet: there is no deployer log", dc.Name)
	case version > dc.Status.LatestVersion:
		return fmt.Errorf("--version: deploymentconfig %q has no version %d (the latest is %d)", dc.Name, version, dc.Status.LatestVersion)
	}
	rcName := deployment.Name(dc.Name, version)
	rc, err := c.Kube.CoreV1().ReplicationControllers(dc.Namespace).Get(ctx, rcName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("rollout #%d of deploymentconfig %q no longer exists (see 'kubectl dc rollout history %s')", version, dc.Name, dc.Name)
	}
	if err != nil {
		return fmt.Errorf("get rollout #%d of deploymentconfig %q: %w", version, dc.Name, err)
	}
	if runsInController(rc) {
		return a.keptLog(ctx, c, rc, opts.follow)
	}
	pod, err := a.deployerPod(ctx, c, rc, opts.follow)
	var moved ranInController
	if errors.As(err, &moved) {
		return a.keptLog(ctx, c, moved.rc, opts.follow)
	}
	if err != nil {
		return err
	}
	return a.streamLog(ctx, c, pod, opts.follow)
}

// runsInController reports whether dc-controller, not a deployer pod, runs
// (or ran) the deployment's rollout.
func runsInController(rc *corev1.ReplicationController) bool {
	return deployment.RunsInController(rc)
}

// ranInController: a follower waiting for a deployer pod saw the controller
// take the rollout.
type ranInController struct{ rc *corev1.ReplicationController }

func (ranInController) Error() string { return "the rollout runs in dc-controller" }

// keptLog prints the log dc-controller keeps on a deployment whose rollout
// it ran; with follow it prints what is added until the rollout ends.
// The controller writes the log every few seconds while lines arrive, when
// its runner stops and when the rollout ends, so a follower sees it in
// those steps.
func (a *app) keptLog(ctx context.Context, c *Clients, rc *corev1.ReplicationController, follow bool) error {
	printed := ""
	for {
		text := deployment.Log(rc)
		if rest, ok := strings.CutPrefix(text, printed); ok {
			fmt.Fprint(a.Streams.Out, rest)
		} else {
			fmt.Fprint(a.Streams.Out, text)
		}
		printed = text
		if deployment.IsTerminal(deployment.Phase(rc)) {
			return nil
		}
		if !follow {
			fmt.Fprintf(a.Streams.ErrOut, "rollout #%d is running in dc-controller: its log is kept on %s when it waits or ends (-f follows it)\n", deployment.Version(rc), rc.Name)
			return nil
		}
		next, err := a.nextRC(ctx, c, rc)
		if err != nil {
			return err
		}
		rc = next
	}
}

// nextRC waits for the deployment to change and returns it.
func (a *app) nextRC(ctx context.Context, c *Clients, rc *corev1.ReplicationController) (*corev1.ReplicationController, error) {
	rcs := c.Kube.CoreV1().ReplicationControllers(rc.Namespace)
	w, err := rcs.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", rc.Name).String(),
		ResourceVersion: rc.ResourceVersion,
	})
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", rc.Name, err)
	}
	defer w.Stop()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("following the log of %s: %w", rc.Name, ctx.Err())
	case <-w.ResultChan():
	}
	fresh, err := rcs.Get(ctx, rc.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("rollout #%d (%s) no longer exists", deployment.Version(rc), rc.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", rc.Name, err)
	}
	return fresh, nil
}

// deployerPod returns the deployment's deployer pod; with follow it waits
// for the pod to exist and start, since the log of a rollout that has just
// been started is what a user follows.
func (a *app) deployerPod(ctx context.Context, c *Clients, rc *corev1.ReplicationController, follow bool) (*corev1.Pod, error) {
	if !follow {
		pod, _, err := a.readyDeployerPod(ctx, c, rc, false)
		return pod, err
	}
	name := deployment.DeployerPodName(rc.Name)
	byName := func(n string) metav1.ListOptions {
		return metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", n).String()}
	}
	for {
		// The watches open before the reads, so that no change in between
		// is missed; the deployment's is there for a rollout that fails
		// before its deployer pod exists.
		podWatch, err := c.Kube.CoreV1().Pods(rc.Namespace).Watch(ctx, byName(name))
		if err != nil {
			return nil, fmt.Errorf("watch the deployer pod %s: %w", name, err)
		}
		rcWatch, err := c.Kube.CoreV1().ReplicationControllers(rc.Namespace).Watch(ctx, byName(rc.Name))
		if err != nil {
			podWatch.Stop()
			return nil, fmt.Errorf("watch %s: %w", rc.Name, err)
		}
		fresh, err := c.Kube.CoreV1().ReplicationControllers(rc.Namespace).Get(ctx, rc.Name, metav1.GetOptions{})
		if err == nil {
			rc = fresh
		}
		if runsInController(rc) {
			podWatch.Stop()
			rcWatch.Stop()
			return nil, ranInController{rc: rc}
		}
		pod, done, err := a.readyDeployerPod(ctx, c, rc, true)
		if !done && err == nil {
			select {
			case <-ctx.Done():
				err = fmt.Errorf("waiting for the deployer pod %s: %w", name, ctx.Err())
			case <-podWatch.ResultChan():
			case <-rcWatch.ResultChan():
			}
		}
		podWatch.Stop()
		rcWatch.Stop()
		if done || err != nil {
			return pod, err
		}
	}
}

// readyDeployerPod reads the deployer pod; done is false while a follower
// should wait for it to appear or start.
func (a *app) readyDeployerPod(ctx context.Context, c *Clients, rc *corev1.ReplicationController, follow bool) (*corev1.Pod, bool, error) {
	name := deployment.DeployerPodName(rc.Name)
	pod, err := c.Kube.CoreV1().Pods(rc.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && (!follow || deployment.IsTerminal(deployment.Phase(rc))):
		return nil, true, fmt.Errorf("the deployer pod %s of rollout #%d (%s) no longer exists", name, deployment.Version(rc), phaseWord(rc))
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, true, fmt.Errorf("get the deployer pod %s: %w", name, err)
	case follow && pod.Status.Phase == corev1.PodPending:
		return nil, false, nil
	}
	return pod, true, nil
}

func (a *app) streamLog(ctx context.Context, c *Clients, pod *corev1.Pod, follow bool) error {
	req := c.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: deployerContainer, Follow: follow})
	stream, err := req.Stream(ctx)
	if err != nil {
		return fmt.Errorf("read the log of the deployer pod %s: %w", pod.Name, err)
	}
	defer stream.Close()
	if _, err := io.Copy(a.Streams.Out, stream); err != nil {
		return fmt.Errorf("read the log of the deployer pod %s: %w", pod.Name, err)
	}
	return nil
}
