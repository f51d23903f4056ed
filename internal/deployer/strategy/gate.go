package strategy

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// ErrInconclusive is wrapped by an AnalysisRunner's error when the
// analysis ended Inconclusive: the rollout then waits for a person rather
// than failing (see gate).
var ErrInconclusive = errors.New("analysis inconclusive")

// gate runs an analysis that stands between the rollout and its next stage
// (a canary analysis step, blue-green's pre- and postPromotionAnalysis) and
// returns the deployment as last read. label names the analysis in logs and
// outcomes; gateName is the wait a promote request answers.
//
// As in Argo Rollouts, an Inconclusive outcome neither passes nor fails:
// the rollout waits for a person (waitForPerson), whom promote lets past
// and whose cancel (the runner's context ending) aborts. A plain promote
// never skips a running analysis. `promote --full` does, stopping the
// analysis if it is running: the user asked to go to 100% now.
func (r *Rollout) gate(ctx context.Context, a *dcv1.Analysis, to *corev1.ReplicationController, label, gateName string) (*corev1.ReplicationController, error) {
	if r.analysis == nil {
		return to, fmt.Errorf("%s: this deployer cannot run analyses", label)
	}
	if fullPending(to) {
		r.printf("--> %s: promoted in full: analysis skipped", label)
		return to, nil
	}
	to, err := r.record(ctx, to, func(p *deployment.Progress) {
		p.Analysis = &deployment.RunningAnalysis{Label: label, Since: metav1.NewTime(r.now().UTC())}
	})
	if err != nil {
		return to, err
	}
	stopped, err := r.runUnlessPromotedFull(ctx, a, to, label)
	switch {
	case stopped != nil:
		r.printf("--> %s: promoted in full: analysis stopped", label)
		return r.analysisOver(ctx, stopped, gateName)
	case err == nil:
		return r.analysisOver(ctx, to, gateName)
	case ctx.Err() == nil && errors.Is(err, ErrInconclusive):
		r.printf("--> %s: %v", label, err)
		return r.waitForPerson(ctx, to, label, gateName)
	}
	return to, err
}

// analysisOver records that the gate's analysis passed or was stopped:
// none runs, and a wait for a person that an earlier runner recorded at
// the gate (it stopped while it waited; this one measured again) is over.
func (r *Rollout) analysisOver(ctx context.Context, to *corev1.ReplicationController, gateName string) (*corev1.ReplicationController, error) {
	return r.record(ctx, to, func(p *deployment.Progress) {
		p.Analysis = nil
		if p.Wait != nil && p.Wait.Gate == gateName {
			p.Wait = nil
		}
	})
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
		if fresh, err := r.scaler.WaitFor(runCtx, to.Name, fullPending); err == nil {
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
// after an Inconclusive analysis and waits for a promote of the gate; the
// runner's context ending (a cancel) aborts. The wait is bounded only by
// the runner's activeDeadlineSeconds, as a pause is.
func (r *Rollout) waitForPerson(ctx context.Context, to *corev1.ReplicationController, label, gateName string) (*corev1.ReplicationController, error) {
	if passed(to, gateName) {
		r.printf("--> %s: promoted already", label)
		return to, nil
	}
	dcName := to.Annotations[dcv1.DeploymentConfigAnnotation]
	wait := pauseWait(gateName, dcv1.PauseReasonInconclusive, r.since(to, gateName), nil)
	to, err := r.record(ctx, to, func(p *deployment.Progress) { p.Wait, p.Analysis = wait, nil })
	if err != nil {
		return to, err
	}
	r.printf("--> %s: analysis inconclusive: waiting for 'kubectl dc rollout promote %s' to go on, or cancel to abort", label, dcName)
	fresh, req, err := r.answered(ctx, to, gateName)
	if err != nil {
		return to, fmt.Errorf("%s: waiting for promote after an inconclusive analysis: %w", label, err)
	}
	r.printf("    Promoted")
	return r.endWaitFor(ctx, fresh, gateName, &req)
}
