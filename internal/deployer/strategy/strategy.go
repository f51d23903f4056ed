// Package strategy carries out a deployment's rollout strategy: Recreate
// (pre hook, old pods down, mid hook, new pods up, post hook) and Rolling
// (new pods up and old pods down in steps bounded by maxSurge and
// maxUnavailable, between a pre and a post hook). It prints the rollout's
// log lines, which users grep for, exactly.
package strategy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployer/scaler"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Outcome says how a rollout that did not fail ended.
type Outcome int

const (
	// Completed means the whole strategy ran.
	Completed Outcome = iota
	// Stopped means the rollout stopped at its --until point.
	Stopped
)

// HookRunner runs a lifecycle hook and applies its failure policy: it
// returns an error only when the rollout must not go on. hook.Executor is
// the real one.
type HookRunner interface {
	Run(ctx context.Context, hook *dcv1.LifecycleHook, rc *corev1.ReplicationController, hookType string) error
}

// Rollout runs strategies against the API.
type Rollout struct {
	scaler *scaler.Scaler
	hooks  HookRunner
	out    io.Writer
	until  Until
	// analysis runs analysis steps; nil refuses them.
	analysis AnalysisRunner
	// services switches the BlueGreen strategy's Services and those of
	// trafficRouting; nil refuses both.
	services corev1client.ServiceInterface
	// newRoutes returns the Routes of a trafficRouting; nil refuses it.
	newRoutes func(*dcv1.TrafficRouting) Routes
	// log, when set, is the log the runner keeps on the deployment; each
	// write of the progress record carries it.
	log deployment.KeptLog

	// pause and now are fields so that tests need not wait for real.
	pause func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

// New returns a Rollout that scales with s, runs hooks with hooks, writes
// its log lines to out and stops at until.
func New(s *scaler.Scaler, hooks HookRunner, out io.Writer, until Until) *Rollout {
	return &Rollout{scaler: s, hooks: hooks, out: out, until: until, pause: sleep, now: time.Now}
}

// printf writes one line of the rollout's log.
func (r *Rollout) printf(format string, args ...any) {
	fmt.Fprintf(r.out, format+"\n", args...)
}

// stop reports the --until point as reached.
func (r *Rollout) stop() (Outcome, error) {
	r.printf("--> Reached %s", r.until)
	return Stopped, nil
}

// runHook runs a hook of the deployment, if it has one.
func (r *Rollout) runHook(ctx context.Context, h *dcv1.LifecycleHook, to *corev1.ReplicationController, hookType string) error {
	if h == nil {
		return nil
	}
	return r.hooks.Run(ctx, h, to, hookType)
}

// scaleTo scales rc to n and waits for its pods.
func (r *Rollout) scaleTo(ctx context.Context, rc *corev1.ReplicationController, n int32, timeout time.Duration) (*corev1.ReplicationController, error) {
	return r.scaler.Scale(ctx, rc.Name, n, timeout)
}

// stepTo scales rc to n on its way to final and waits for its pods; the
// count is recorded on rc only once it reaches final.
func (r *Rollout) stepTo(ctx context.Context, rc *corev1.ReplicationController, n, final int32, timeout time.Duration) (*corev1.ReplicationController, error) {
	if n == final {
		return r.scaler.Scale(ctx, rc.Name, n, timeout)
	}
	return r.scaler.Step(ctx, rc.Name, n, timeout)
}

// accept waits until every pod of rc is available, counting minReadySeconds.
func (r *Rollout) accept(ctx context.Context, rc *corev1.ReplicationController, timeout time.Duration) (*corev1.ReplicationController, error) {
	return r.scaler.WaitAvailable(ctx, rc.Name, timeout)
}

// scaleDownOld scales the previous deployment to zero and waits for its
// pods to be gone, so that old and new pods never run side by side. Pods
// that outlive the timeout are reported, not fatal: they are terminating.
func (r *Rollout) scaleDownOld(ctx context.Context, from *corev1.ReplicationController, timeout time.Duration) error {
	if deployment.Replicas(from) > 0 {
		r.printf("--> Scaling %s down to zero", from.Name)
		if _, err := r.scaleTo(ctx, from, 0, timeout); err != nil {
			return err
		}
	}
	err := r.scaler.WaitPodsGone(ctx, from, timeout)
	if errors.Is(err, scaler.ErrTimeout) {
		r.printf("--> Warning: pods of %s are still terminating after %s; going on", from.Name, timeout)
		return nil
	}
	return err
}

// seconds turns an optional API duration into a time.Duration.
func seconds(v *int64, def int64) time.Duration {
	if v == nil {
		return time.Duration(def) * time.Second
	}
	return time.Duration(*v) * time.Second
}

// pauseSince pauses until d has passed since p.since, and marks its end as
// the start of the next pause. OpenShift's deployer sleeps the whole period
// after the RC manager has reported a scale; counted from the scale write,
// the period still separates the writes by at least d, and the report's
// wait (a pod created or deleted: tens of milliseconds on an idle cluster,
// a pod's termination on a real node) is no longer added to it. Every
// caller pauses after a scale, which set p.since.
func (r *Rollout) pauseSince(ctx context.Context, p *pair, d time.Duration) error {
	err := r.pause(ctx, max(d-r.now().Sub(p.since), 0))
	p.since = r.now()
	return err
}

// sleep waits for d unless the context ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
