package deployment

import (
	"testing"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestResumeOf(t *testing.T) {
	w := func(n int32) dcv1.RollingStep { return dcv1.RollingStep{SetWeight: &n} }
	pause := dcv1.RollingStep{Pause: &dcv1.RolloutPause{}}
	rolling := func(tr *dcv1.TrafficRouting, steps ...dcv1.RollingStep) dcv1.DeploymentStrategy {
		return dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{Steps: steps, TrafficRouting: tr}}
	}
	canary := rolling(nil, w(25), pause, pause, w(75), pause)
	at := func(k int) Progress { return Progress{Stage: StageSteps, Step: k, Steps: 5} }
	blueGreen := dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen}
	for _, tt := range []struct {
		name string
		s    dcv1.DeploymentStrategy
		p    Progress
		want Resume
	}{
		{"recreate", dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRecreate}, Progress{Stage: StageStarted}, Resume{From: ResumeFromStart}},
		{"rolling without params", dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling}, at(2), Resume{From: ResumeFromStart}},
		{"rolling without steps", rolling(nil), at(2), Resume{From: ResumeFromStart}},
		{"canary started", canary, Progress{Stage: StageStarted}, Resume{From: ResumeFromStart}},
		{"canary at its first step", canary, at(1), Resume{From: ResumeAtStep, Step: 1}},
		{"canary at a pause", canary, at(2), Resume{From: ResumeAtStep, Step: 2, WeightStep: 1}},
		{"canary at a later pause", canary, at(3), Resume{From: ResumeAtStep, Step: 3, WeightStep: 1}},
		{"canary at a setWeight", canary, at(4), Resume{From: ResumeAtStep, Step: 4}},
		{"canary after the second setWeight", canary, at(5), Resume{From: ResumeAtStep, Step: 5, WeightStep: 4}},
		{"canary pause before any setWeight", rolling(nil, pause, w(50)), Progress{Stage: StageSteps, Step: 1, Steps: 2}, Resume{From: ResumeAtStep, Step: 1}},
		{"canary with other steps", canary, Progress{Stage: StageSteps, Step: 2, Steps: 3}, Resume{From: ResumeFromStart}},
		{"canary past its steps", canary, Progress{Stage: StageSteps, Step: 6, Steps: 5}, Resume{From: ResumeFromStart}},
		{"canary in its final roll", canary, Progress{Stage: StageFinalRoll}, Resume{From: ResumeFinalRoll}},
		{"routed canary switched", rolling(&dcv1.TrafficRouting{}, w(50), pause), Progress{Stage: StageSwitched, Switch: SwitchFinal}, Resume{From: ResumeSwitched}},
		{"blue-green started", blueGreen, Progress{Stage: StageStarted}, Resume{From: ResumeFromStart}},
		{"blue-green before its switch", blueGreen, Progress{Stage: StageBeforeSwitch, Passed: GatePrePromotion}, Resume{From: ResumeBeforeSwitch}},
		{"blue-green on trial", blueGreen, Progress{Stage: StageSwitched, Switch: SwitchTrial}, Resume{From: ResumeOnTrial}},
		{"blue-green switched", blueGreen, Progress{Stage: StageSwitched, Switch: SwitchFinal}, Resume{From: ResumeSwitched}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ResumeOf(tt.s, tt.p); got != tt.want {
				t.Errorf("ResumeOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}
