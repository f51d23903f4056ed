package strategy

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/analysis"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// BackgroundLabel names the background analysis (rollingParams.analysis)
// in the rollout's log and in its recorded outcome
// (deployconfig.io/analysis.background).
const BackgroundLabel = "background"

// background is the background analysis of a canary, as Argo Rollouts'
// strategy-level analysis: it measures the new deployment beside the
// steps, from the first step until the final roll reaches 100%. A failure
// cancels the steps' context at once, with the failure as its cause; an
// Inconclusive outcome is held until the steps reach their next boundary,
// where the rollout waits for a person (hold). Without count it measures
// one round each interval until stopped.
type background struct {
	// ctx is the context of the steps and the final roll.
	ctx    context.Context
	fail   context.CancelCauseFunc
	end    context.CancelFunc
	ended  chan struct{}
	resume chan struct{}

	mu           sync.Mutex
	inconclusive error
}

// startBackground starts the background analysis a, if there is one, and
// returns it; with none the steps run in ctx and nothing runs beside them.
func (r *Rollout) startBackground(ctx context.Context, a *dcv1.Analysis, to *corev1.ReplicationController) *background {
	stepsCtx, fail := context.WithCancelCause(ctx)
	bgCtx, end := context.WithCancel(stepsCtx)
	b := &background{ctx: stepsCtx, fail: fail, end: end, ended: make(chan struct{}), resume: make(chan struct{}, 1)}
	if a == nil {
		close(b.ended)
		return b
	}
	if r.analysis == nil {
		fail(fmt.Errorf("%s analysis: this deployer cannot run analyses", BackgroundLabel))
		close(b.ended)
		return b
	}
	r.printf("--> %s: analysis runs until the rollout reaches 100%%", BackgroundLabel)
	go func() {
		defer close(b.ended)
		r.measureInBackground(bgCtx, a, to, b)
	}()
	return b
}

// endlessCount is the count a background analysis without one runs with:
// the most the API allows. It measures every interval until the rollout
// reaches 100% and ends its context, so that failureLimit and
// consecutiveErrorLimit count over the whole rollout, as in Argo Rollouts,
// and the RC and the events are written when it fails rather than at every
// interval. A run that does take this many measurements starts again.
const endlessCount int32 = 1000

// measureInBackground runs the analysis until it passes (with a count),
// fails, or ctx ends (the rollout reached 100% or stopped).
func (r *Rollout) measureInBackground(ctx context.Context, a *dcv1.Analysis, to *corev1.ReplicationController, b *background) {
	round, endless := a, a.Count == nil
	if endless {
		round = a.DeepCopy()
		round.Count = ptr.To(endlessCount)
	}
	interval := a.Interval.Duration
	if interval <= 0 {
		interval = analysis.DefaultInterval
	}
	for {
		err := r.analysis.Run(ctx, round, to, BackgroundLabel)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, ErrInconclusive):
			b.setInconclusive(err)
			select {
			case <-ctx.Done():
				return
			case <-b.resume:
			}
			continue
		case err != nil:
			b.fail(fmt.Errorf("%s analysis: %w", BackgroundLabel, err))
			return
		case !endless:
			return
		}
		if r.pause(ctx, interval) != nil {
			return
		}
	}
}

// setInconclusive records an Inconclusive round for hold.
func (b *background) setInconclusive(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inconclusive = err
}

// takeInconclusive returns and clears an Inconclusive round, if any.
func (b *background) takeInconclusive() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.inconclusive
	b.inconclusive = nil
	return err
}

// hold runs between steps, after step k: when the background analysis was
// Inconclusive the rollout waits there for a promote of step k (or --full),
// as at an analysis step, and the analysis then measures again. A promote
// that step k's own pause consumed does not count: each request is acted
// on once.
func (r *Rollout) hold(ctx context.Context, b *background, k int, p *pair) error {
	inconclusive := b.takeInconclusive()
	if inconclusive == nil {
		return nil
	}
	r.printf("--> %s: %v", BackgroundLabel, inconclusive)
	fresh, err := r.waitForPerson(ctx, p.to, BackgroundLabel, deployment.BackgroundGate(k))
	if err != nil {
		return err
	}
	p.to = fresh
	b.resume <- struct{}{}
	return nil
}

// stop ends the background analysis and waits for it. err is what the
// steps or the final roll returned: when the background analysis failed,
// its failure is the rollout's error, not the cancellation it caused.
func (b *background) stop(err error) error {
	b.end()
	<-b.ended
	cause := context.Cause(b.ctx)
	b.fail(nil)
	if cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}
