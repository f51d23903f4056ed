package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The reason a failed deployment records says why its deployer pod failed.
func TestPodFailureReason(t *testing.T) {
	deleted := metav1.Now()
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want string
	}{
		{name: "plain failure", want: reasonDeployerPodFailed},
		{name: "active deadline", pod: corev1.Pod{Status: corev1.PodStatus{Reason: "DeadlineExceeded"}}, want: "deployer pod exceeded its active deadline"},
		{name: "termination message", want: reasonDeployerPodFailed + ": pre hook failed",
			pod: corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "pre hook failed"}},
			}}}}},
		// A real kubelet stops a deleted pod's container: the pod reports
		// Failed on its way out (kwok's pods just go).
		{name: "deleted while running", want: reasonDeployerPodGone,
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &deleted}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Message: "terminated"}},
			}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.pod.Status.Phase = corev1.PodFailed
			if got := podFailureReason(&tc.pod); got != tc.want {
				t.Errorf("podFailureReason = %q, want %q", got, tc.want)
			}
		})
	}
}
