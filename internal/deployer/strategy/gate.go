package strategy

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// ErrInconclusive is wrapped by an AnalysisRunner's error when the
// analysis ended Inconclusive: the rollout then waits for a person rather
// than failing (see gate).
var ErrInconclusive = errors.New("analysis inconclusive")

// gate runs an analysis that stands between the rollout and its next stage
// (a canary analysis step, blue-green's pre- and postPromotionAnalysis) and
// returns the deployment as last read. goOn reports whether a promote
// request on the RC lets the rollout past this gate.
//
// As in Argo Rollouts, an Inconclusive outcome neither passes nor fails:
// the rollout waits for a person (waitForPerson), whom promote lets past
// and whose cancel (the deployer's context ending) aborts. `promote --full`
// skips the gate, stopping the analysis if it is running: the user asked
// to go to 100% now.
func (r *Rollout) gate(ctx context.Context, a *dcv1.Analysis, to *corev1.ReplicationController, label string,
	goOn func(*corev1.ReplicationController) bool) (*corev1.ReplicationController, error) {
	if r.analysis == nil {
		return to, fmt.Errorf("%s: this deployer cannot run analyses", label)
	}
	if promotedFull(to) {
		r.printf("--> %s: promoted in full: analysis skipped", label)
		return to, nil
	}
	stopped, err := r.runUnlessPromotedFull(ctx, a, to, label)
	switch {
	case stopped != nil:
		r.printf("--> %s: promoted in full: analysis stopped", label)
		return stopped, nil
	case err == nil:
		return r.endWait(ctx, to)
	case ctx.Err() == nil && errors.Is(err, ErrInconclusive):
		r.printf("--> %s: %v", label, err)
		return r.waitForPerson(ctx, to, label, goOn)
	}
	return to, err
}

// runUnlessPromotedFull runs the analysis while watching the RC for a
// `promote --full`, which stops it. It returns the RC that carries the
// request when the request stopped the analysis, and otherwise the
// analysis's error.
func (r *Rollout) runUnlessPromotedFull(ctx context.Context, a *dcv1.Analysis, to *corev1.ReplicationController,
	label string) (*corev1.ReplicationController, error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stopped *corev1.ReplicationController
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if fresh, err := r.scaler.WaitFor(runCtx, to.Name, promotedFull); err == nil {
			stopped = fresh
			cancel()
		}
	}()
	err := r.analysis.Run(runCtx, a, to, label)
	cancel()
	<-watched // nothing outlives the gate
	if stopped != nil && ctx.Err() == nil {
		return stopped, nil
	}
	return nil, err
}

// waitForPerson records on the RC that the rollout waits for a person
// after an Inconclusive analysis and waits until goOn holds (promote); the
// deployer's context ending (a cancel) aborts. The wait is bounded only by
// the deployer pod's activeDeadlineSeconds, as a pause is.
func (r *Rollout) waitForPerson(ctx context.Context, to *corev1.ReplicationController, label string,
	goOn func(*corev1.ReplicationController) bool) (*corev1.ReplicationController, error) {
	dcName := to.Annotations[dcv1.DeploymentConfigAnnotation]
	marked, err := r.scaler.Annotate(ctx, to.Name, map[string]*string{
		dcv1.DeploymentPausedSinceAnnotation: new(r.now().UTC().Format(time.RFC3339)),
		dcv1.DeploymentPauseReasonAnnotation: new(string(dcv1.PauseReasonInconclusive)),
	})
	if err != nil {
		return to, err
	}
	to = marked
	r.printf("--> %s: analysis inconclusive: waiting for 'kubectl dc rollout promote %s' to go on, or cancel to abort", label, dcName)
	fresh, err := r.scaler.WaitFor(ctx, to.Name, goOn)
	if err != nil {
		return to, fmt.Errorf("%s: waiting for promote after an inconclusive analysis: %w", label, err)
	}
	r.printf("    Promoted")
	return r.endWait(ctx, fresh)
}

// endWait re-reads the RC past a gate and removes the marks of a wait for
// a person, if any: one left by an earlier deployer that stopped while it
// waited (its pod restarted; this one measured again and passed).
func (r *Rollout) endWait(ctx context.Context, to *corev1.ReplicationController) (*corev1.ReplicationController, error) {
	fresh, err := r.scaler.Get(ctx, to.Name)
	if err != nil {
		return to, err
	}
	if fresh.Annotations[dcv1.DeploymentPauseReasonAnnotation] != string(dcv1.PauseReasonInconclusive) {
		return fresh, nil
	}
	cleared, err := r.scaler.Annotate(ctx, fresh.Name, map[string]*string{
		dcv1.DeploymentPausedSinceAnnotation: nil,
		dcv1.DeploymentPauseReasonAnnotation: nil,
	})
	if err != nil {
		return fresh, err
	}
	return cleared, nil
}
