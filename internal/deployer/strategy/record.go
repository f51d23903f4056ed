package strategy

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// WithKeptLog makes every write of the progress record carry log, the log
// the runner keeps on the deployment.
func (r *Rollout) WithKeptLog(log deployment.KeptLog) *Rollout {
	r.log = log
	return r
}

// record changes the new deployment's progress record (see
// deployment.Update) and returns the deployment as written. Every change
// the strategies make to how far the rollout went goes through it, so
// that a resumed runner finds what this one did.
func (r *Rollout) record(ctx context.Context, to *corev1.ReplicationController, change func(*deployment.Progress)) (*corev1.ReplicationController, error) {
	fresh, err := deployment.UpdateKeeping(ctx, r.scaler.ReplicationControllers(), to, r.log, func(p *deployment.Progress) error {
		change(p)
		return nil
	})
	if err != nil {
		// The caller keeps the deployment as it last read it: a failed
		// write leaves it unchanged.
		return to, err
	}
	return fresh, nil
}

// progressOf is the new deployment's record as last read.
func progressOf(to *corev1.ReplicationController) deployment.Progress {
	return deployment.ProgressOf(to)
}

// since returns when the wait of gate started, as recorded by an earlier
// runner of this rollout, or now.
func (r *Rollout) since(to *corev1.ReplicationController, gate string) metav1.Time {
	if w := progressOf(to).Wait; w != nil && w.Gate == gate {
		return w.Since
	}
	return metav1.NewTime(r.now().UTC())
}

// answered waits until a request that ends the wait of gate is on the new
// deployment (see deployment.Pending), bounded by ctx, and returns the
// deployment and the request.
func (r *Rollout) answered(ctx context.Context, to *corev1.ReplicationController, gate string) (*corev1.ReplicationController, deployment.Request, error) {
	var req deployment.Request
	fresh, err := r.scaler.WaitFor(ctx, to.Name, func(rc *corev1.ReplicationController) bool {
		got, ok := deployment.Pending(rc, progressOf(rc), gate)
		req = got
		return ok
	})
	return fresh, req, err
}

// endWaitFor records that the wait of gate is over, and that req (when it
// ended it and is a plain promote) was acted on. A full promote is
// consumed where nothing is left to skip (consumeFull), so that the gates
// after this one see it too.
func (r *Rollout) endWaitFor(ctx context.Context, to *corev1.ReplicationController, gate string, req *deployment.Request) (*corev1.ReplicationController, error) {
	return r.record(ctx, to, func(p *deployment.Progress) {
		if p.Wait != nil && p.Wait.Gate == gate {
			p.Wait = nil
		}
		p.Passed = gate
		if req != nil && req.Kind == deployment.RequestPromote {
			p.Consume(req.ID)
		}
	})
}

// consumeFull records that a full promote pending on p was acted on.
func consumeFull(p *deployment.Progress, to *corev1.ReplicationController) {
	if req, ok := deployment.PendingFull(to, *p); ok {
		p.Consume(req.ID)
	}
}

// fullPending reports whether a full promote waits to be acted on.
func fullPending(to *corev1.ReplicationController) bool {
	_, ok := deployment.PendingFull(to, progressOf(to))
	return ok
}

// handedOver reports whether the rollout stopped because its runner is
// going away (a new dc-controller leader takes it over, or the deployer
// pod is told to stop) rather than because it failed or a user cancelled
// it: what it did to Services and routes must then stay, for the next
// runner to resume. A user's cancel is recorded on the deployment before
// the runner stops; the deadline of activeDeadlineSeconds fails it.
func (r *Rollout) handedOver(ctx context.Context, to *corev1.ReplicationController) bool {
	if !errors.Is(ctx.Err(), context.Canceled) {
		return false
	}
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	fresh, err := r.scaler.Get(readCtx, to.Name)
	if err != nil {
		return false
	}
	return !deployment.IsCancelled(fresh) && !deployment.IsTerminal(deployment.Phase(fresh))
}

// passed reports whether the wait of gate ended before this runner
// started (an earlier runner stopped right after it).
func passed(to *corev1.ReplicationController, gate string) bool {
	return progressOf(to).Passed == gate
}

// pauseWait is the record of a wait for gate.
func pauseWait(gate string, reason dcv1.PauseReason, since metav1.Time, d *time.Duration) *deployment.Wait {
	w := &deployment.Wait{Gate: gate, Reason: reason, Since: since}
	if d != nil {
		w.Duration = &metav1.Duration{Duration: *d}
	}
	return w
}
