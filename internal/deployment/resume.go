package deployment

import (
	"fmt"
	"strings"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// ResumeFrom names where a runner picks a rollout up.
type ResumeFrom string

const (
	// ResumeFromStart: nothing recorded says the strategy went past its
	// start. Its first actions (hooks, scales, Service selections) are
	// made again; each is idempotent on what it finds.
	ResumeFromStart ResumeFrom = "from the start"
	// ResumeAtStep: a canary starts at step Resume.Step, first brought
	// back to the weight the steps before it set.
	ResumeAtStep ResumeFrom = "at its step"
	// ResumeFinalRoll: a canary's steps are over; it rolls on to 100%
	// from the replicas as they are, never back to a step.
	ResumeFinalRoll ResumeFrom = "in its final roll"
	// ResumeBeforeSwitch: a blue-green rollout brings the new version up
	// beside the old one again and waits for its promotion; a gate it
	// passed stays passed.
	ResumeBeforeSwitch ResumeFrom = "before its switch"
	// ResumeOnTrial: a blue-green rollout serving the new version on
	// trial keeps the active Service on it and runs its
	// postPromotionAnalysis again.
	ResumeOnTrial ResumeFrom = "on trial"
	// ResumeSwitched: the new version was switched to for good; it stays
	// selected, at full size, and the old one is scaled down.
	ResumeSwitched ResumeFrom = "switched for good"
)

// Resume is what a runner that picks a rollout up does first.
type Resume struct {
	From ResumeFrom
	// Step is the canary step (1-based) to run first, with ResumeAtStep.
	Step int
	// WeightStep, when not 0, is the setWeight step before Step whose
	// weight the canary is brought back to before Step runs: a pause or
	// an analysis runs at the weight the steps set, whatever happened to
	// the replicas while no runner ran.
	WeightStep int
}

// String says what the runner does, as the state table shows it.
func (r Resume) String() string {
	switch {
	case r.From == ResumeAtStep && r.WeightStep > 0:
		return fmt.Sprintf("at step %d, back to the weight of step %d first", r.Step, r.WeightStep)
	case r.From == ResumeAtStep:
		return fmt.Sprintf("at step %d", r.Step)
	}
	return string(r.From)
}

// ResumeOf decides where a runner picks up a rollout of strategy s whose
// record is p. It is a function of the strategy and the record alone: what
// the runner then finds (replicas, Services, routes) each action it takes
// reads again, so that doing it twice is doing it once.
func ResumeOf(s dcv1.DeploymentStrategy, p Progress) Resume {
	switch s.Type {
	case dcv1.DeploymentStrategyTypeBlueGreen:
		return blueGreenResume(p)
	case dcv1.DeploymentStrategyTypeRolling:
		if s.RollingParams != nil {
			return canaryResume(s.RollingParams, p)
		}
	}
	return Resume{From: ResumeFromStart}
}

// blueGreenResume is ResumeOf for a blue-green rollout.
func blueGreenResume(p Progress) Resume {
	switch {
	case p.Switch == SwitchFinal:
		return Resume{From: ResumeSwitched}
	case p.Switch == SwitchTrial:
		return Resume{From: ResumeOnTrial}
	case p.Stage == StageBeforeSwitch:
		return Resume{From: ResumeBeforeSwitch}
	}
	return Resume{From: ResumeFromStart}
}

// canaryResume is ResumeOf for a Rolling strategy, with steps or not. A
// record of another number of steps (the strategy changed since it was
// written) starts the steps over.
func canaryResume(params *dcv1.RollingDeploymentStrategyParams, p Progress) Resume {
	steps := params.Steps
	switch {
	case params.TrafficRouting != nil && p.Switch == SwitchFinal:
		return Resume{From: ResumeSwitched}
	case len(steps) == 0:
		return Resume{From: ResumeFromStart}
	case p.Stage == StageFinalRoll:
		return Resume{From: ResumeFinalRoll}
	case p.Stage != StageSteps || p.Steps != len(steps) || p.Step < 1 || p.Step > len(steps):
		return Resume{From: ResumeFromStart}
	}
	r := Resume{From: ResumeAtStep, Step: p.Step}
	if steps[p.Step-1].SetWeight != nil {
		return r
	}
	for k := p.Step - 1; k >= 1; k-- {
		if steps[k-1].SetWeight != nil {
			r.WeightStep = k
			break
		}
	}
	return r
}

// ResumeTable renders where a runner resumes each kind of rollout, from
// ResumeOf on records of each stage, as a Markdown table for
// docs/rollout-state.md.
func ResumeTable() string {
	pause := dcv1.RollingStep{Pause: &dcv1.RolloutPause{}}
	analysis := dcv1.RollingStep{Analysis: &dcv1.Analysis{}}
	w := func(n int32) dcv1.RollingStep { return dcv1.RollingStep{SetWeight: &n} }
	canarySteps := []dcv1.RollingStep{w(25), pause, analysis, w(75), pause}
	canary := dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{Steps: canarySteps}}
	routed := dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{Steps: canarySteps, TrafficRouting: &dcv1.TrafficRouting{}}}
	blueGreen := dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen}
	other := dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRecreate}
	steps := func(k int) Progress { return Progress{Stage: StageSteps, Step: k, Steps: len(canarySteps)} }
	rows := []struct {
		strategy, record string
		s                dcv1.DeploymentStrategy
		p                Progress
	}{
		{"Recreate, Rolling without steps, Custom", "any", other, Progress{Stage: StageStarted}},
		{"canary [setWeight 25, pause, analysis, setWeight 75, pause]", "Started", canary, Progress{Stage: StageStarted}},
		{"the same", "Steps 2 of 5 (the pause)", canary, steps(2)},
		{"the same", "Steps 3 of 5 (the analysis)", canary, steps(3)},
		{"the same", "Steps 4 of 5 (setWeight 75)", canary, steps(4)},
		{"the same", "Steps k of another n (the strategy changed)", canary, Progress{Stage: StageSteps, Step: 2, Steps: 3}},
		{"the same", "FinalRoll", canary, Progress{Stage: StageFinalRoll}},
		{"the same, with trafficRouting", "Steps 2 of 5", routed, steps(2)},
		{"the same, with trafficRouting", "Switched final", routed, Progress{Stage: StageSwitched, Switch: SwitchFinal}},
		{"BlueGreen", "Started", blueGreen, Progress{Stage: StageStarted}},
		{"BlueGreen", "BeforeSwitch", blueGreen, Progress{Stage: StageBeforeSwitch}},
		{"BlueGreen", "Switched trial", blueGreen, Progress{Stage: StageSwitched, Switch: SwitchTrial}},
		{"BlueGreen", "Switched final", blueGreen, Progress{Stage: StageSwitched, Switch: SwitchFinal}},
	}
	var b strings.Builder
	b.WriteString("| Strategy | Record | The runner resumes |\n")
	b.WriteString("| --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.strategy, r.record, ResumeOf(r.s, r.p))
	}
	return b.String()
}
