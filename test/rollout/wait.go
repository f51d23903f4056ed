package rollout

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// PollInterval is how often waits look at the cluster.
const PollInterval = 250 * time.Millisecond

// Poll calls cond every PollInterval until it reports true, for at most
// timeout. An error from cond means "not yet" (the API server may be
// restarting), and the last one is part of the timeout's error, unless it
// is Permanent: then Poll returns it at once.
func Poll(ctx context.Context, timeout time.Duration, cond func(ctx context.Context) (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		done, err := cond(ctx)
		var p *permanentError
		if errors.As(err, &p) {
			return false, p.err
		}
		if err != nil {
			last = err
			return false, nil
		}
		return done, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last error: %v)", err, last)
	}
	return err
}

// permanentError ends a Poll at once.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }

// Permanent marks an error that no waiting cures.
func Permanent(err error) error { return &permanentError{err: err} }

// WaitLatestDone waits until dc-controller has seen the DeploymentConfig's
// spec (observedGeneration), it is at minVersion or later and its latest
// deployment has ended, and returns both.
func (c *Client) WaitLatestDone(ctx context.Context, ns, name string, minVersion int64, timeout time.Duration) (*dcv1.DeploymentConfig, *corev1.ReplicationController, error) {
	var dc *dcv1.DeploymentConfig
	var rc *corev1.ReplicationController
	err := Poll(ctx, timeout, func(ctx context.Context) (bool, error) {
		var err error
		dc, rc, err = c.Latest(ctx, ns, name)
		return rc != nil && dc.Status.ObservedGeneration >= dc.Generation && dc.Status.LatestVersion >= minVersion &&
			deployment.IsTerminal(deployment.Phase(rc)), err
	})
	if err != nil {
		return dc, rc, fmt.Errorf("waiting for the latest rollout of %s/%s to end: %w", ns, name, err)
	}
	return dc, rc, nil
}

// Settled reports whether a DeploymentConfig is at rest after its latest
// rollout: the newest Complete deployment runs spec.replicas ready pods,
// every other deployment none, and the status has caught up with the spec.
// When it is not, it says why.
func (c *Client) Settled(ctx context.Context, ns, name string) (bool, string, error) {
	dc, err := c.Get(ctx, ns, name)
	if err != nil {
		return false, "", err
	}
	rcs, err := c.Deployments(ctx, ns, name)
	if err != nil {
		return false, "", err
	}
	latest := FindVersion(rcs, dc.Status.LatestVersion)
	switch {
	case dc.Status.ObservedGeneration < dc.Generation:
		return false, fmt.Sprintf("observedGeneration %d < generation %d", dc.Status.ObservedGeneration, dc.Generation), nil
	case latest == nil:
		return false, fmt.Sprintf("no RC for latestVersion %d", dc.Status.LatestVersion), nil
	case !deployment.IsTerminal(deployment.Phase(latest)):
		return false, fmt.Sprintf("%s is %s", latest.Name, deployment.Phase(latest)), nil
	}
	active := deployment.Live(rcs, nil)
	for _, rc := range rcs {
		want := int32(0)
		if rc == active {
			want = dc.Spec.Replicas
		}
		if deployment.Replicas(rc) != want || rc.Status.Replicas != want || rc.Status.ReadyReplicas != want {
			return false, fmt.Sprintf("%s has spec %d, %d pods, %d ready; want %d",
				rc.Name, deployment.Replicas(rc), rc.Status.Replicas, rc.Status.ReadyReplicas, want), nil
		}
	}
	if active != nil && dc.Status.Replicas != dc.Spec.Replicas {
		return false, fmt.Sprintf("status.replicas %d, spec.replicas %d", dc.Status.Replicas, dc.Spec.Replicas), nil
	}
	return true, "", nil
}

// WaitSettled waits until Settled holds.
func (c *Client) WaitSettled(ctx context.Context, ns, name string, timeout time.Duration) error {
	var why string
	err := Poll(ctx, timeout, func(ctx context.Context) (bool, error) {
		ok, reason, err := c.Settled(ctx, ns, name)
		why = reason
		return ok, err
	})
	if err != nil {
		return fmt.Errorf("waiting for %s/%s to settle (%s): %w", ns, name, why, err)
	}
	return nil
}

// WaitProgressing waits until the DeploymentConfig's Progressing condition
// has reason.
func (c *Client) WaitProgressing(ctx context.Context, ns, name, reason string, timeout time.Duration) error {
	var last string
	err := Poll(ctx, timeout, func(ctx context.Context) (bool, error) {
		dc, err := c.Get(ctx, ns, name)
		if err != nil {
			return false, err
		}
		for _, cond := range dc.Status.Conditions {
			if cond.Type == dcv1.DeploymentProgressing {
				last = fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
				return cond.Reason == reason, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("the Progressing condition of %s/%s is %q, want reason %s: %w", ns, name, last, reason, err)
	}
	return nil
}

// FindVersion returns the RC of a version, or nil.
func FindVersion(rcs []*corev1.ReplicationController, version int64) *corev1.ReplicationController {
	for _, rc := range rcs {
		if deployment.Version(rc) == version {
			return rc
		}
	}
	return nil
}

// PausedAt reports whether the deployment's rollout waits, as its progress
// record says: at the gate of canary step k (1-based), or with k 0 in any
// wait (a blue-green rollout waiting for promote).
func PausedAt(rc *corev1.ReplicationController, k int) bool {
	p := deployment.ProgressOf(rc)
	if p.Wait == nil {
		return false
	}
	return k == 0 || p.Stage == deployment.StageSteps && p.Step == k && p.Wait.Gate == deployment.StepGate(k)
}
