package controller

import (
	"strings"
	"testing"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// TestPromoteValue: a promote request on the DeploymentConfig becomes the
// value `kubectl dc rollout promote` writes on the rollout's RC, and is
// refused where the command refuses.
func TestPromoteValue(t *testing.T) {
	canary := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Steps: []dcv1.RollingStep{{SetWeight: ptr(int32(25))}, {Pause: &dcv1.RolloutPause{}}}}}
	})
	blueGreen := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen,
			BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: "web"}}
	})
	plain := testDC(nil)
	cases := []struct {
		name          string
		dc            *dcv1.DeploymentConfig
		step, reason  string // the RC's step and pause reason; "" for none
		pausedSince   bool
		full          bool
		value, refuse string
	}{
		{name: "paused at a step", dc: canary, step: "2", reason: "Pause", pausedSince: true, value: "2"},
		{name: "Inconclusive at a step", dc: canary, step: "2", reason: "Inconclusive", value: "2"},
		{name: "full at any step", dc: canary, step: "1", full: true, value: dcv1.PromoteFull},
		{name: "full before the first step", dc: canary, full: true, value: dcv1.PromoteFull},
		{name: "not paused", dc: canary, step: "1", refuse: "at step 1 of 2 and not paused"},
		{name: "no step yet", dc: canary, refuse: "not at a step yet"},
		{name: "blue-green", dc: blueGreen, value: dcv1.PromoteFull},
		{name: "blue-green, full", dc: blueGreen, full: true, value: dcv1.PromoteFull},
		{name: "no steps", dc: plain, refuse: "has nothing to promote"},
		{name: "no steps, full", dc: plain, full: true, refuse: "has nothing to promote"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := rcOf(t, withVersion(tc.dc.DeepCopy(), 2), 2, dcv1.DeploymentPhaseRunning, 2)
			rc.Annotations[dcv1.DeploymentStepsAnnotation] = "2"
			for k, v := range map[string]string{dcv1.DeploymentStepAnnotation: tc.step, dcv1.DeploymentPauseReasonAnnotation: tc.reason} {
				if v != "" {
					rc.Annotations[k] = v
				}
			}
			if tc.pausedSince {
				rc.Annotations[dcv1.DeploymentPausedSinceAnnotation] = "2026-01-01T00:00:00Z"
			}
			value, refusal := promoteValue(&tc.dc.Spec.Strategy, rc, tc.full)
			if value != tc.value || !strings.Contains(refusal, tc.refuse) || (tc.refuse == "") != (refusal == "") {
				t.Errorf("promoteValue = %q, %q; want %q, refusal with %q", value, refusal, tc.value, tc.refuse)
			}
		})
	}
}
