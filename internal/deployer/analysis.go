package deployer

import (
	"context"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/analysis"
	"github.com/deployconfig/deployconfig/internal/deployer/strategy"
)

// stepAnalysis runs the analyses of canary steps, the background analysis
// and the BlueGreen strategy's pre- and postPromotionAnalysis: each measurement goes to the rollout's
// log, the outcome onto the RC and into an event, as for analysis hooks.
type stepAnalysis struct {
	client kubernetes.Interface
	out    io.Writer
}

// Run measures rc; anything but a Successful outcome is an error. An
// Inconclusive one wraps strategy.ErrInconclusive: the rollout then waits
// for a promote rather than failing. Failed and Error fail the rollout.
func (s stepAnalysis) Run(ctx context.Context, spec *dcv1.Analysis, rc *corev1.ReplicationController, label string) error {
	outcome, err := analysis.Run(ctx, *spec, analysis.VarsFor(rc), analysis.Options{Out: s.out, Label: label})
	if err != nil {
		return err
	}
	if rerr := analysis.Record(ctx, s.client, rc, label, outcome); rerr != nil {
		fmt.Fprintf(s.out, "--> %s: Warning: %v\n", label, rerr)
	}
	switch outcome.Phase {
	case analysis.Successful:
		return nil
	case analysis.Inconclusive:
		// The strategies wait for a person on it (strategy.gate).
		return fmt.Errorf("%w: %s", strategy.ErrInconclusive, outcome.Message)
	}
	return fmt.Errorf("analysis %s: %s", outcome.Phase, outcome.Message)
}

// validateStepAnalyses checks the analyses the deployer runs outside hooks
// (canary steps, the background analysis, blue-green's pre- and
// postPromotionAnalysis) before anything moves, so that a condition that does
// not compile or a query that does not render stops the rollout at its
// start, naming the field.
func validateStepAnalyses(s *dcv1.DeploymentStrategy) error {
	var errs field.ErrorList
	for _, p := range analysis.Places(s) {
		if !p.Hook {
			errs = append(errs, analysis.Validate(p.Analysis, p.Path)...)
		}
	}
	if len(errs) > 0 {
		return errors.New(errs.ToAggregate().Error())
	}
	return nil
}
