package deployment

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// AwaitingPerson returns the wait of a running deployment that only a
// person ends (`kubectl dc rollout promote`, or a cancel): a pause step
// without a duration, an Inconclusive analysis, a blue-green rollout
// waiting to switch without autoPromotionSeconds. A timed wait ends by
// itself, and a wait a pending request already answers is the runner's
// to leave; neither waits for a person. The controller's status, kstatus,
// the CLI, the dashboard and Argo CD's health check all decide so here.
func AwaitingPerson(rc *corev1.ReplicationController) (*Wait, bool) {
	if Phase(rc) != dcv1.DeploymentPhaseRunning || IsCancelled(rc) {
		return nil, false
	}
	p := ProgressOf(rc)
	w := p.Wait
	if w == nil {
		return nil, false
	}
	if _, timed := w.Ends(); timed && w.Reason != dcv1.PauseReasonInconclusive {
		return nil, false
	}
	if _, answered := Pending(rc, p, w.Gate); answered {
		return nil, false
	}
	return w, true
}

// Promotion returns the promote request that `kubectl dc rollout promote
// [--full]` writes on a running deployment of strategy s now, and what it
// does in words; or, as an error in the command's words, why nothing can be
// promoted. A plain promote ends the wait the rollout is in and nothing
// else; only full skips steps and analyses.
func Promotion(rc *corev1.ReplicationController, s *dcv1.DeploymentStrategy, full bool) (Request, string, error) {
	version := Version(rc)
	if IsTerminal(Phase(rc)) || IsCancelled(rc) {
		return Request{}, "", fmt.Errorf("rollout #%d is %s; nothing to promote", version, phaseWords(rc))
	}
	blueGreen := s.Type == dcv1.DeploymentStrategyTypeBlueGreen && s.BlueGreenParams != nil
	steps := 0
	if s.RollingParams != nil {
		steps = len(s.RollingParams.Steps)
	}
	if !blueGreen && steps == 0 {
		return Request{}, "", fmt.Errorf("rollout #%d has nothing to promote: its strategy has no steps and is not BlueGreen", version)
	}
	p, err := ReadProgress(rc)
	if err != nil {
		return Request{}, "", err
	}
	if p.Stage == StageFinalRoll || p.Switch == SwitchFinal {
		return Request{}, "", fmt.Errorf("rollout #%d is past its last step or gate; nothing to promote", version)
	}
	if full {
		if blueGreen {
			return Request{ID: newRequestID(), Kind: RequestPromoteFull}, "switching service " + s.BlueGreenParams.ActiveService + " for good, skipping its analyses", nil
		}
		return Request{ID: newRequestID(), Kind: RequestPromoteFull}, "skipping the remaining steps", nil
	}
	if p.Wait == nil {
		return Request{}, "", notWaiting(version, p)
	}
	what := waitWords(p, s)
	return Request{ID: newRequestID(), Kind: RequestPromote, Gate: p.Wait.Gate}, what, nil
}

// notWaiting says why a plain promote of a rollout that waits for nothing
// is refused.
func notWaiting(version int64, p Progress) error {
	switch {
	case p.Analysis != nil:
		return fmt.Errorf("rollout #%d is running its %s analysis, which promote does not skip; use --full to skip it", version, p.Analysis.Label)
	case p.Stage == StageSteps:
		return fmt.Errorf("rollout #%d is at step %d of %d and not paused; use --full to skip the remaining steps", version, p.Step, p.Steps)
	}
	return fmt.Errorf("rollout #%d is not waiting for promotion yet; use --full to skip what remains", version)
}

// waitWords says what ending the rollout's wait does.
func waitWords(p Progress, s *dcv1.DeploymentStrategy) string {
	switch {
	case p.Wait.Reason == dcv1.PauseReasonInconclusive && p.Stage == StageSteps:
		return fmt.Sprintf("going on after the inconclusive analysis of step %d of %d", p.Step, p.Steps)
	case p.Wait.Reason == dcv1.PauseReasonInconclusive:
		return "going on after the inconclusive " + p.Wait.Gate + " analysis"
	case p.Stage == StageSteps:
		return fmt.Sprintf("ending the pause of step %d of %d", p.Step, p.Steps)
	case s.BlueGreenParams != nil:
		return "switching service " + s.BlueGreenParams.ActiveService
	}
	return "ending the wait"
}

// phaseWords words a finished deployment's phase.
func phaseWords(rc *corev1.ReplicationController) string {
	if IsCancelled(rc) && !IsTerminal(Phase(rc)) {
		return "cancelled"
	}
	return string(Phase(rc))
}
