package hook

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/analysis"
)

// analysisRetryPause is the least wait before an analysis hook with
// failurePolicy Retry measures again; its interval, when longer, is used.
const analysisRetryPause = time.Second

// analyze runs an analysis hook in the deployer (no pod): it measures the
// deployment rc until the analysis has an outcome, within the rollout's
// active deadline, and records each outcome on the RC and as an event.
// With failurePolicy Retry a failed analysis runs again until it succeeds
// or the deadline passes. An Inconclusive outcome is a failure here: a hook
// has a failurePolicy that says what to do when it does not succeed, and
// unlike a canary analysis step (strategy.gate) it does not wait for
// `kubectl dc rollout promote`, which only knows steps and blue-green gates.
func (e *Executor) analyze(ctx context.Context, hook *dcv1.LifecycleHook, rc *corev1.ReplicationController, hookType string) error {
	if _, err := ActiveDeadline(e.deadline, e.now()); err != nil {
		return err
	}
	tctx, cancel := context.WithDeadline(ctx, e.deadline)
	defer cancel()
	opts := e.analysisOpts
	opts.Out, opts.Label = e.out, hookType
	pause := max(hook.Analysis.Interval.Duration, analysisRetryPause)
	for retry := 1; ; retry++ {
		outcome, err := analysis.Run(tctx, *hook.Analysis, analysis.VarsFor(rc), opts)
		if err != nil {
			return e.analysisInterrupted(ctx, hookType, err)
		}
		if rerr := analysis.Record(tctx, e.client, rc, hookType, outcome); rerr != nil {
			fmt.Fprintf(e.out, "--> %s: Warning: %v\n", hookType, rerr)
		}
		if outcome.Phase == analysis.Successful {
			fmt.Fprintf(e.out, "--> %s: Success\n", hookType)
			return nil
		}
		failure := fmt.Errorf("analysis %s: %s", outcome.Phase, outcome.Message)
		if hook.FailurePolicy != dcv1.LifecycleHookFailurePolicyRetry {
			fmt.Fprintf(e.out, "--> %s: Failed\n", hookType)
			return failure
		}
		if !e.now().Add(pause).Before(e.deadline) {
			fmt.Fprintf(e.out, "--> %s: Failed\n", hookType)
			return fmt.Errorf("%w (no time left to retry before the rollout's active deadline %s)", failure, e.deadline.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(e.out, "--> %s: Retrying analysis (retry #%d)\n", hookType, retry)
		if err := e.pause(tctx, pause); err != nil {
			return e.analysisInterrupted(ctx, hookType, err)
		}
	}
}

// analysisInterrupted explains an analysis that ended without an outcome:
// the rollout's active deadline passed, or the deployer is stopping.
func (e *Executor) analysisInterrupted(ctx context.Context, hookType string, err error) error {
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(e.out, "--> %s: Failed\n", hookType)
		return fmt.Errorf("analysis did not finish within the rollout's active deadline %s", e.deadline.UTC().Format(time.RFC3339))
	}
	return err
}
