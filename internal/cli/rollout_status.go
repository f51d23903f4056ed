package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

func newRolloutStatusCommand(a *app) *cobra.Command {
	opts := statusOptions{watch: true}
	cmd := &cobra.Command{
		Use:   "status NAME [-w] [--timeout D] [--revision N]",
		Short: "Watch the latest rollout of a DeploymentConfig until it ends",
		Long: `Show the progress of the latest rollout and, with --watch (the default), follow
it until it ends: a line per change, or a progress bar on a terminal. It exits
0 when the rollout completes and non-zero, with the reason, when it fails or
is cancelled.`,
		Example: `  kubectl dc rollout status web
  kubectl dc rollout status web --timeout 5m
  kubectl dc rollout status web --watch=false`,
		Args:              nameArg("watch"),
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := parseName(args[0])
			return a.rolloutStatus(cmd.Context(), name, opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.watch, "watch", "w", true, "Follow the rollout until it ends.")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", 0, "How long to wait before giving up (e.g. 30s, 5m); 0 waits for ever.")
	cmd.Flags().Int64Var(&opts.revision, "revision", 0, "Follow this revision; it must be the latest one. 0 means the latest.")
	return cmd
}

type statusOptions struct {
	watch    bool
	timeout  time.Duration
	revision int64
}

// rolloutState is what `rollout status` knows of a rollout at a moment.
type rolloutState struct {
	// message is the progress line, without a newline.
	message string
	// done is true once nothing more will happen without the user.
	done bool
	// err is why the rollout failed.
	err error
	// updated, available and desired are the replica counts of a running
	// rollout, for the progress bar; desired 0 means no bar.
	updated, available, desired int32
}

func (a *app) rolloutStatus(ctx context.Context, name string, opts statusOptions) error {
	if opts.revision < 0 {
		return fmt.Errorf("--revision: expected a revision number of 1 or more, got %d", opts.revision)
	}
	if opts.timeout < 0 {
		return fmt.Errorf("--timeout: expected a duration of 0 or more, got %s", opts.timeout)
	}
	c, err := a.clients()
	if err != nil {
		return err
	}
	if !opts.watch {
		st, err := observeRollout(ctx, c, name, opts.revision)
		if err != nil {
			return err
		}
		if st.err != nil {
			return st.err
		}
		fmt.Fprintln(a.Streams.Out, st.message)
		return nil
	}
	if opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.timeout)
		defer cancel()
	}
	return a.followRollout(ctx, c, name, opts, a.newProgressView())
}

// followRollout shows the rollout's state after every change of the
// DeploymentConfig or its deployments until the rollout ends.
func (a *app) followRollout(ctx context.Context, c *Clients, name string, opts statusOptions, view progressView) error {
	for {
		// The watches open before the first read, so no change between the
		// read and the watch is missed.
		feed, err := openChangeFeed(ctx, c, name)
		if err != nil {
			return err
		}
		err = a.followFeed(ctx, c, name, opts, view, feed)
		feed.stop()
		if !errors.Is(err, errFeedClosed) {
			return err
		}
	}
}

// errFeedClosed says the API server ended a watch; it is opened again.
var errFeedClosed = errors.New("watch closed")

func (a *app) followFeed(ctx context.Context, c *Clients, name string, opts statusOptions, view progressView, feed *changeFeed) error {
	for {
		st, err := observeRollout(ctx, c, name, opts.revision)
		if err != nil {
			view.abort()
			return timeoutError(ctx, name, opts, err)
		}
		view.show(st)
		if st.done {
			view.finish(st)
			return st.err
		}
		select {
		case <-ctx.Done():
			view.abort()
			return timeoutError(ctx, name, opts, ctx.Err())
		case <-feed.closed:
			return errFeedClosed
		case <-feed.changes:
		}
	}
}

// timeoutError words the end of --timeout; other errors pass through.
func timeoutError(ctx context.Context, name string, opts statusOptions, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && opts.timeout > 0 {
		return fmt.Errorf("timed out after %s waiting for the rollout of deploymentconfig %q to finish", opts.timeout, name)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("interrupted while waiting for the rollout of deploymentconfig %q", name)
	}
	return err
}

// observeRollout reads the DeploymentConfig and its latest deployment.
func observeRollout(ctx context.Context, c *Clients, name string, revision int64) (rolloutState, error) {
	dc, err := getDC(ctx, c, name)
	if err != nil {
		return rolloutState{}, err
	}
	latest, err := getLatest(ctx, c, dc)
	if err != nil {
		return rolloutState{}, err
	}
	if latest != nil && deployment.Phase(latest) == dcv1.DeploymentPhaseRunning {
		// The DeploymentConfig's status takes its replica counts when the
		// rollout waits or ends; while it moves, its deployments have them.
		if dc.Status.Replicas, err = liveReplicas(ctx, c, dc); err != nil {
			return rolloutState{}, err
		}
	}
	return rolloutStatusOf(dc, latest, revision), nil
}

// liveReplicas is the pods of all the DeploymentConfig's deployments, as
// their ReplicationControllers count them now.
func liveReplicas(ctx context.Context, c *Clients, dc *dcv1.DeploymentConfig) (int32, error) {
	rcs, err := listDeployments(ctx, c, dc)
	if err != nil {
		return 0, err
	}
	var n int32
	for _, rc := range rcs {
		n += rc.Status.Replicas
	}
	return n, nil
}

// rolloutStatusOf words the state of the latest rollout, with the
// messages of `kubectl rollout status`.
func rolloutStatusOf(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController, revision int64) rolloutState {
	latest := dc.Status.LatestVersion
	switch {
	case revision > 0 && revision != latest:
		return rolloutState{done: true, err: fmt.Errorf("--revision: desired revision (%d) is different from the running revision (%d)", revision, latest)}
	case dc.Spec.Paused:
		return rolloutState{done: true, message: fmt.Sprintf("Deployment config %q waiting on manual update (use 'kubectl dc rollout resume %s')", dc.Name, dc.Name)}
	case dc.Generation > dc.Status.ObservedGeneration:
		return rolloutState{message: "Waiting for latest deployment config spec to be observed by the controller loop..."}
	case latest == 0 && dc.Spec.Triggers != nil && len(dc.Spec.Triggers) == 0:
		return rolloutState{done: true, message: fmt.Sprintf("Deployment config %q has not rolled out yet: it has no triggers (start it with 'kubectl dc rollout latest %s')", dc.Name, dc.Name)}
	case latest == 0:
		return rolloutState{message: fmt.Sprintf("Waiting for the first rollout of %q (an image trigger must resolve an image first)...", dc.Name)}
	case rc == nil:
		return rolloutState{message: waitingForCreate(dc, latest)}
	}
	return deploymentStatusOf(dc, rc)
}

// waitingForCreate words the wait for the latest deployment's
// ReplicationController, with the reason the controller could not create it
// yet (a quota, an admission webhook...): it keeps trying, so this is not
// the end of the rollout.
func waitingForCreate(dc *dcv1.DeploymentConfig, version int64) string {
	for _, c := range dc.Status.Conditions {
		if c.Type != dcv1.DeploymentProgressing {
			continue
		}
		switch c.Reason {
		case dcv1.ReplicationControllerCreateErrorReason:
			return fmt.Sprintf("Waiting for rollout #%d to be created: %s", version, c.Message)
		case dcv1.RolloutQueuedReason, dcv1.AwaitingWaveReason, dcv1.AwaitingWindowReason, dcv1.CircuitOpenReason:
			// A RolloutPolicy (or the controller's limits) holds it: the
			// message names the policy and when it starts.
			return fmt.Sprintf("Waiting for rollout #%d: %s", version, c.Message)
		}
	}
	return fmt.Sprintf("Waiting for rollout #%d to be created...", version)
}

// deploymentStatusOf words the state of an existing latest deployment.
func deploymentStatusOf(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) rolloutState {
	version := deployment.Version(rc)
	reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]
	switch phase := deployment.Phase(rc); {
	case phase == dcv1.DeploymentPhaseComplete:
		return rolloutState{done: true, message: fmt.Sprintf("replication controller %q successfully rolled out", rc.Name)}
	case phase == dcv1.DeploymentPhaseFailed && deployment.IsCancelled(rc):
		if reason == "" {
			reason = dcv1.DeploymentCancelledByUser
		}
		return rolloutState{done: true, err: fmt.Errorf("rollout #%d of deploymentconfig %q was cancelled: %s", version, dc.Name, reason)}
	case phase == dcv1.DeploymentPhaseFailed:
		if reason == "" {
			reason = "unknown reason"
		}
		return rolloutState{done: true, err: fmt.Errorf("rollout #%d of deploymentconfig %q failed: %s (see 'kubectl dc logs %s --version %d')", version, dc.Name, reason, dc.Name, version)}
	case deployment.IsCancelled(rc):
		return rolloutState{message: fmt.Sprintf("Waiting for rollout #%d to be cancelled...", version)}
	case phase != dcv1.DeploymentPhaseRunning:
		return rolloutState{message: fmt.Sprintf("Waiting for rollout #%d to start...", version)}
	}
	return replicaProgress(dc, rc)
}

// replicaProgress words a running rollout by its canary step or blue-green
// wait, if any, and otherwise by its replica counts.
func replicaProgress(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) rolloutState {
	if st, ok := progressiveState(dc, rc); ok {
		return st
	}
	return replicaCounts(dc, rc)
}

// progressiveState words a rollout at a canary step or waiting for a
// blue-green promotion, from what the deployer records on the RC. A pause
// that waits for `promote` is done: nothing more happens without the user.
func progressiveState(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) (rolloutState, bool) {
	version := deployment.Version(rc)
	p := deployment.ProgressOf(rc)
	atStep := p.Stage == deployment.StageSteps
	if !atStep && p.Wait == nil {
		return rolloutState{}, false
	}
	where := fmt.Sprintf("rollout #%d", version)
	if atStep {
		weight := int32(0)
		if p.Weight != nil {
			weight = *p.Weight
		}
		where = fmt.Sprintf("rollout #%d at step %d of %d, weight %d%%", version, p.Step, p.Steps, weight)
		if rp := dc.Spec.Strategy.RollingParams; rp != nil && rp.TrafficRouting != nil {
			where += " of the requests"
		}
	}
	w := p.Wait
	if w == nil {
		st := replicaCounts(dc, rc)
		st.message = fmt.Sprintf("Waiting for %s...", where)
		return st, true
	}
	since := w.Since.UTC().Format(time.RFC3339)
	if _, timed := w.Ends(); timed && w.Reason != dcv1.PauseReasonInconclusive {
		if !atStep {
			return rolloutState{message: fmt.Sprintf("Waiting for %s: promoting automatically %s after %s (or on 'kubectl dc rollout promote %s')", where, w.Duration.Duration, since, dc.Name)}, true
		}
		return rolloutState{message: fmt.Sprintf("Waiting for %s: paused for %s since %s (or until 'kubectl dc rollout promote %s')", where, w.Duration.Duration, since, dc.Name)}, true
	}
	wait := "waiting for promote"
	if bg := dc.Spec.Strategy.BlueGreenParams; bg != nil && !atStep {
		wait = "waiting for promote to switch service " + bg.ActiveService
	}
	return rolloutState{done: true, message: fmt.Sprintf("Waiting for %s: paused, %s (use 'kubectl dc rollout promote %s')", where, wait, dc.Name)}, true
}

// replicaCounts words a running rollout by its replica counts.
func replicaCounts(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) rolloutState {
	desired, ok := deployment.DesiredReplicas(rc)
	if !ok {
		desired = dc.Spec.Replicas
	}
	st := rolloutState{updated: rc.Status.Replicas, available: rc.Status.AvailableReplicas, desired: desired}
	switch old := dc.Status.Replicas - st.updated; {
	case st.updated < desired:
		st.message = fmt.Sprintf("Waiting for rollout to finish: %d out of %d new replicas have been updated...", st.updated, desired)
	case old > 0:
		st.message = fmt.Sprintf("Waiting for rollout to finish: %d old replicas are pending termination...", old)
	case st.available < st.updated:
		st.message = fmt.Sprintf("Waiting for rollout to finish: %d of %d updated replicas are available...", st.available, st.updated)
	default:
		st.message = fmt.Sprintf("Waiting for rollout to finish: rollout #%d is running its last steps...", deployment.Version(rc))
	}
	return st
}
