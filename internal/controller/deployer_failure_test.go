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

// A deployer pod has succeeded once it says so, or once its only container
// exited 0 in a pod that is never restarted, before the kubelet has
// stopped the pod and written the phase.
func TestDeployerSucceeded(t *testing.T) {
	exited := func(code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "deployment", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	running := corev1.ContainerStatus{Name: "deployment", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	deleted := metav1.Now()
	pod := func(phase corev1.PodPhase, restart corev1.RestartPolicy, statuses ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{
			Spec:   corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{Name: "deployment"}}},
			Status: corev1.PodStatus{Phase: phase, ContainerStatuses: statuses},
		}
	}
	beingDeleted := pod(corev1.PodRunning, corev1.RestartPolicyNever, exited(0))
	beingDeleted.DeletionTimestamp = &deleted
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"Succeeded", pod(corev1.PodSucceeded, corev1.RestartPolicyNever, exited(0)), true},
		{"Running, container exited 0", pod(corev1.PodRunning, corev1.RestartPolicyNever, exited(0)), true},
		{"Running, container still running", pod(corev1.PodRunning, corev1.RestartPolicyNever, running), false},
		{"Running, container exited 1", pod(corev1.PodRunning, corev1.RestartPolicyNever, exited(1)), false},
		{"Running, no container status yet", pod(corev1.PodRunning, corev1.RestartPolicyNever), false},
		{"a pod that restarts its containers", pod(corev1.PodRunning, corev1.RestartPolicyOnFailure, exited(0)), false},
		{"being deleted", beingDeleted, false},
		{"Failed", pod(corev1.PodFailed, corev1.RestartPolicyNever, exited(0)), false},
		{"Pending", pod(corev1.PodPending, corev1.RestartPolicyNever), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := deployerSucceeded(tc.pod); got != tc.want {
				t.Errorf("deployerSucceeded = %v, want %v", got, tc.want)
			}
		})
	}
}
