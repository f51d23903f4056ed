package controller

import (
	"testing"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestRunsInControllerUnder(t *testing.T) {
	annotated := func(v string) *dcv1.DeploymentConfig {
		dc := testDC(nil)
		if v != "" {
			dc.Annotations = map[string]string{dcv1.DeployerModeAnnotation: v}
		}
		return dc
	}
	cases := []struct {
		name          string
		mode          DeployerMode
		authorsChoose bool
		annotation    string
		want          bool
	}{
		{"pod mode keeps rollouts in pods whatever the annotation asks", DeployerModePod, false, dcv1.DeployerModeControllerWhenPossible, false},
		{"pod mode lets authors choose when the admin allows it", DeployerModePod, true, dcv1.DeployerModeControllerWhenPossible, true},
		{"pod mode without an annotation", DeployerModePod, true, "", false},
		{"controller mode", DeployerModeControllerWhenPossible, false, "", true},
		{"the annotation may always ask for a pod", DeployerModeControllerWhenPossible, false, dcv1.DeployerModePod, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := runsInControllerUnder(tc.mode, tc.authorsChoose, annotated(tc.annotation))
			if err != nil || got != tc.want {
				t.Errorf("runsInControllerUnder = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
