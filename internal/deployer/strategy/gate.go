package strategy

import (
	"context"
	"errors"
	"fmt"

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
// TODO(issue 29): an Inconclusive outcome waits for goOn (promote goes on,
// cancel aborts), and `promote --full` stops a running analysis.
func (r *Rollout) gate(ctx context.Context, a *dcv1.Analysis, to *corev1.ReplicationController, label string,
	goOn func(*corev1.ReplicationController) bool) (*corev1.ReplicationController, error) {
	if r.analysis == nil {
		return to, fmt.Errorf("%s: this deployer cannot run analyses", label)
	}
	if err := r.analysis.Run(ctx, a, to, label); err != nil {
		return to, err
	}
	return r.scaler.Get(ctx, to.Name)
}
