package podruntime

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reasons and messages the runtime writes, the kubelet's where it has one.
const (
	reasonContainerCreating   = "ContainerCreating"
	reasonCrashLoopBackOff    = "CrashLoopBackOff"
	reasonCompleted           = "Completed"
	reasonError               = "Error"
	reasonStartError          = "StartError"
	reasonStatusUnknown       = "ContainerStatusUnknown"
	reasonDeadlineExceeded    = "DeadlineExceeded"
	reasonPodCompleted        = "PodCompleted"
	reasonContainersNotReady  = "ContainersNotReady"
	messageDeadlineExceeded   = "Pod was active on the node longer than the specified deadline"
	messageLostOnRestart      = "the local pod runtime restarted while the container was running; its process was stopped"
	exitCodeStartError        = 128
	exitCodeKilled            = 137
	containerIDScheme         = "dc-local://"
	messageUnreadyContainers  = "containers with unready status: [%s]"
	messageBackOffRestarting  = "back-off %s restarting failed container=%s pod=%s_%s(%s)"
	messageNoDeployerFunction = "the local pod runtime has no in-process deployer"
)

// containerRun is what the runtime knows of a pod's container: the
// current and previous instance and how often it was restarted.
type containerRun struct {
	restartCount int32
	// id names the current instance; empty before the first one starts.
	id    string
	state corev1.ContainerState
	last  corev1.ContainerState
}

// podState is everything the runtime reports about a pod; buildStatus turns
// it into the pod's status.
type podState struct {
	phase     corev1.PodPhase
	reason    string
	message   string
	startTime *metav1.Time
	hostIP    string
	container containerRun
}

// terminal reports whether the pod has ended for good.
func (s podState) terminal() bool {
	return s.phase == corev1.PodSucceeded || s.phase == corev1.PodFailed
}

// buildStatus returns the pod status a kubelet would write for state: the
// pod's own status with the phase, IPs, container statuses and the
// kubelet's conditions replaced, and what others wrote (the scheduler's
// PodScheduled condition, the QoS class) kept.
func buildStatus(pod *corev1.Pod, state podState, now metav1.Time) corev1.PodStatus {
	status := *pod.Status.DeepCopy()
	status.Phase = state.phase
	status.Reason = state.reason
	status.Message = state.message
	status.ObservedGeneration = pod.Generation
	if state.startTime != nil {
		status.StartTime = state.startTime
	}
	if state.hostIP != "" {
		// The process runs in the host's network, like a hostNetwork pod.
		status.HostIP, status.PodIP = state.hostIP, state.hostIP
		status.HostIPs = []corev1.HostIP{{IP: state.hostIP}}
		status.PodIPs = []corev1.PodIP{{IP: state.hostIP}}
	}
	status.ContainerStatuses = containerStatuses(pod, state)
	status.Conditions = podConditions(pod, state, now)
	return status
}

// containerStatuses reports state.container for the pod's containers (the
// runtime runs pods of one container; a pod with more has them all fail
// alike).
func containerStatuses(pod *corev1.Pod, state podState) []corev1.ContainerStatus {
	run := state.container
	running := run.state.Running != nil
	ready := running && state.phase == corev1.PodRunning
	out := make([]corev1.ContainerStatus, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		out = append(out, corev1.ContainerStatus{
			Name:                 c.Name,
			Image:                c.Image,
			ImageID:              "",
			ContainerID:          run.id,
			Ready:                ready,
			Started:              &running,
			RestartCount:         run.restartCount,
			State:                *run.state.DeepCopy(),
			LastTerminationState: *run.last.DeepCopy(),
		})
	}
	return out
}

// podConditions sets the conditions a kubelet owns and keeps the others.
// A condition's transition time changes only when its status does.
func podConditions(pod *corev1.Pod, state podState, now metav1.Time) []corev1.PodCondition {
	conditions := append([]corev1.PodCondition(nil), pod.Status.Conditions...)
	set := func(t corev1.PodConditionType, status corev1.ConditionStatus, reason, message string) {
		conditions = setCondition(conditions, corev1.PodCondition{
			Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: pod.Generation,
		}, now)
	}
	sandbox := corev1.ConditionTrue
	if state.terminal() {
		sandbox = corev1.ConditionFalse
	}
	set(corev1.PodReadyToStartContainers, sandbox, "", "")
	set(corev1.PodInitialized, corev1.ConditionTrue, "", "")
	ready, reason, message := readiness(pod, state)
	set(corev1.PodReady, ready, reason, message)
	set(corev1.ContainersReady, ready, reason, message)
	return conditions
}

// readiness is the status, reason and message of the Ready and
// ContainersReady conditions: a running container is ready (the runtime
// runs no probes).
func readiness(pod *corev1.Pod, state podState) (corev1.ConditionStatus, string, string) {
	switch {
	case state.terminal():
		return corev1.ConditionFalse, reasonPodCompleted, ""
	case state.phase == corev1.PodRunning && state.container.state.Running != nil:
		return corev1.ConditionTrue, "", ""
	}
	names := make([]string, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	return corev1.ConditionFalse, reasonContainersNotReady, fmt.Sprintf(messageUnreadyContainers, strings.Join(names, " "))
}

// setCondition replaces the condition of c's type, keeping its transition
// time when the status is unchanged, or appends c.
func setCondition(conditions []corev1.PodCondition, c corev1.PodCondition, now metav1.Time) []corev1.PodCondition {
	c.LastTransitionTime = now
	for i := range conditions {
		if conditions[i].Type != c.Type {
			continue
		}
		if conditions[i].Status == c.Status {
			c.LastTransitionTime = conditions[i].LastTransitionTime
		}
		conditions[i] = c
		return conditions
	}
	return append(conditions, c)
}

// Container states, as the kubelet reports them.

func waitingState(reason, message string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
}

func runningState(at metav1.Time) corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}
}

// exit is how one container instance ended.
type exit struct {
	code    int32
	reason  string
	message string
	started metav1.Time
	ended   metav1.Time
}

func terminatedState(e exit, id string) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode:    e.code,
		Reason:      e.reason,
		Message:     e.message,
		StartedAt:   e.started,
		FinishedAt:  e.ended,
		ContainerID: id,
	}}
}

// exitReason is the kubelet's reason for an exit code.
func exitReason(code int32) string {
	if code == 0 {
		return reasonCompleted
	}
	return reasonError
}

// containerID names one instance of a pod's container.
func containerID(uid string, restartCount int32) string {
	return fmt.Sprintf("%s%s-%d", containerIDScheme, uid, restartCount)
}

// shouldRestart applies a pod's restartPolicy to an exit code.
func shouldRestart(policy corev1.RestartPolicy, code int32) bool {
	switch policy {
	case corev1.RestartPolicyAlways:
		return true
	case corev1.RestartPolicyOnFailure:
		return code != 0
	}
	return false
}

// finalPhase is the phase of a pod whose only container exited for good.
func finalPhase(code int32) corev1.PodPhase {
	if code == 0 {
		return corev1.PodSucceeded
	}
	return corev1.PodFailed
}
