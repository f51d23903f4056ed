package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestChangeOf(t *testing.T) {
	cases := []struct {
		name    string
		details *dcv1.DeploymentDetails
		want    string
	}{
		{"none", nil, ""},
		{"config data", &dcv1.DeploymentDetails{Causes: []dcv1.DeploymentCause{{Type: dcv1.DeploymentTriggerOnConfigData,
			ConfigData: &dcv1.DeploymentCauseConfigData{Changed: []string{"ConfigMap/shared", "Secret/tls"}}}}}, "ConfigData ConfigMap/shared Secret/tls"},
		{"image", &dcv1.DeploymentDetails{Causes: []dcv1.DeploymentCause{{Type: dcv1.DeploymentTriggerOnImageChange,
			ImageTrigger: &dcv1.DeploymentCauseImageTrigger{From: corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example.com/base:1"}}}}}, "ImageChange DockerImage/registry.example.com/base:1"},
		{"manual", &dcv1.DeploymentDetails{Message: "manual change", Causes: []dcv1.DeploymentCause{{Type: dcv1.DeploymentTriggerManual}}}, "Manual"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := changeOf(tc.details); got != tc.want {
				t.Errorf("changeOf = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestKstatusQueuedByPolicy: a rollout a RolloutPolicy holds is InProgress,
// and kstatus tools show which policy holds it and why.
func TestKstatusQueuedByPolicy(t *testing.T) {
	dc := withVersion(testDC(nil), 1)
	dc.Generation = 1
	why := "Rollout #1 waits for RolloutPolicy fleet: freeze \"year-end\" until 2027-01-04T00:00:00Z; it starts at 2027-01-04T00:00:00Z"
	dc.Status = computeStatus(dc, nil, &QueuedError{Reason: dcv1.AwaitingWindowReason, Why: why}, metav1.Now())
	res := computeKstatus(t, dc)
	if res.Status != kstatus.InProgressStatus || res.Message != why {
		t.Errorf("kstatus %s %q, want InProgress %q", res.Status, res.Message, why)
	}
	if c := findCondition(dc.Status.Conditions, dcv1.DeploymentReconciling); c == nil || c.Reason != dcv1.AwaitingWindowReason {
		t.Errorf("Reconciling %+v, want reason %s", c, dcv1.AwaitingWindowReason)
	}
	if c := findCondition(dc.Status.Conditions, dcv1.DeploymentProgressing); c == nil || c.Status != corev1.ConditionUnknown || c.Reason != dcv1.AwaitingWindowReason {
		t.Errorf("Progressing %+v, want Unknown %s", c, dcv1.AwaitingWindowReason)
	}
}
