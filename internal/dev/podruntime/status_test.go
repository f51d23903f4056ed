package podruntime

import (
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusPod is a bound hook pod as the scheduler left it.
func statusPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1-hook-pre", Namespace: "shop", UID: "u1", Generation: 2},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "lifecycle", Image: "app:1"}}},
		Status: corev1.PodStatus{
			Phase:    corev1.PodPending,
			QOSClass: corev1.PodQOSBestEffort,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(100, 0)},
			},
		},
	}
}

func TestBuildStatus(t *testing.T) {
	start := metav1.Unix(1000, 0)
	now := metav1.Unix(2000, 0)
	id := containerID("u1", 0)
	failed := exit{code: 3, reason: reasonError, started: start, ended: now}
	tests := []struct {
		name  string
		state podState
		// want: phase, reason, container state, ready, started, and the
		// conditions' statuses and reasons.
		wantPhase     corev1.PodPhase
		wantReason    string
		wantState     string
		wantReady     bool
		wantStarted   bool
		wantRestarts  int32
		wantReadyCond corev1.ConditionStatus
		wantReadyWhy  string
		wantSandbox   corev1.ConditionStatus
	}{
		{
			name:      "container being created",
			state:     podState{phase: corev1.PodPending, startTime: &start, container: containerRun{state: waitingState(reasonContainerCreating, "")}},
			wantPhase: corev1.PodPending, wantState: "waiting:ContainerCreating",
			wantReadyCond: corev1.ConditionFalse, wantReadyWhy: reasonContainersNotReady, wantSandbox: corev1.ConditionTrue,
		},
		{
			name:      "running",
			state:     podState{phase: corev1.PodRunning, startTime: &start, container: containerRun{id: id, state: runningState(start)}},
			wantPhase: corev1.PodRunning, wantState: "running", wantReady: true, wantStarted: true,
			wantReadyCond: corev1.ConditionTrue, wantSandbox: corev1.ConditionTrue,
		},
		{
			name:      "backing off before a restart",
			state:     podState{phase: corev1.PodRunning, startTime: &start, container: containerRun{id: id, restartCount: 1, state: waitingState(reasonCrashLoopBackOff, "back-off"), last: terminatedState(failed, id)}},
			wantPhase: corev1.PodRunning, wantState: "waiting:CrashLoopBackOff", wantRestarts: 1,
			wantReadyCond: corev1.ConditionFalse, wantReadyWhy: reasonContainersNotReady, wantSandbox: corev1.ConditionTrue,
		},
		{
			name:      "failed",
			state:     podState{phase: corev1.PodFailed, startTime: &start, container: containerRun{id: id, state: terminatedState(failed, id)}},
			wantPhase: corev1.PodFailed, wantState: "terminated:3:Error",
			wantReadyCond: corev1.ConditionFalse, wantReadyWhy: reasonPodCompleted, wantSandbox: corev1.ConditionFalse,
		},
		{
			name: "deadline exceeded",
			state: podState{phase: corev1.PodFailed, reason: reasonDeadlineExceeded, message: messageDeadlineExceeded, startTime: &start,
				container: containerRun{id: id, state: terminatedState(exit{code: 143, reason: reasonError}, id)}},
			wantPhase: corev1.PodFailed, wantReason: reasonDeadlineExceeded, wantState: "terminated:143:Error",
			wantReadyCond: corev1.ConditionFalse, wantReadyWhy: reasonPodCompleted, wantSandbox: corev1.ConditionFalse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := statusPod()
			s := buildStatus(pod, tt.state, now)
			if s.Phase != tt.wantPhase || s.Reason != tt.wantReason {
				t.Errorf("phase %s reason %q, want %s %q", s.Phase, s.Reason, tt.wantPhase, tt.wantReason)
			}
			if s.StartTime == nil || !s.StartTime.Equal(&start) || s.QOSClass != corev1.PodQOSBestEffort || s.ObservedGeneration != 2 {
				t.Errorf("startTime %v, qosClass %q, observedGeneration %d", s.StartTime, s.QOSClass, s.ObservedGeneration)
			}
			if len(s.ContainerStatuses) != 1 {
				t.Fatalf("%d container statuses", len(s.ContainerStatuses))
			}
			cs := s.ContainerStatuses[0]
			if cs.Name != "lifecycle" || cs.Image != "app:1" || describeState(cs.State) != tt.wantState ||
				cs.Ready != tt.wantReady || cs.Started == nil || *cs.Started != tt.wantStarted || cs.RestartCount != tt.wantRestarts {
				t.Errorf("container status %+v: state %s", cs, describeState(cs.State))
			}
			ready := condition(s.Conditions, corev1.PodReady)
			containersReady := condition(s.Conditions, corev1.ContainersReady)
			if ready == nil || ready.Status != tt.wantReadyCond || ready.Reason != tt.wantReadyWhy || containersReady == nil || containersReady.Status != tt.wantReadyCond {
				t.Errorf("Ready %+v, ContainersReady %+v", ready, containersReady)
			}
			if c := condition(s.Conditions, corev1.PodReadyToStartContainers); c == nil || c.Status != tt.wantSandbox {
				t.Errorf("PodReadyToStartContainers %+v", c)
			}
			if c := condition(s.Conditions, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionTrue {
				t.Errorf("Initialized %+v", c)
			}
			if c := condition(s.Conditions, corev1.PodScheduled); c == nil || c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Equal(&metav1.Time{Time: time.Unix(100, 0)}) {
				t.Errorf("the scheduler's condition changed: %+v", c)
			}
		})
	}
}

// A condition keeps its transition time while its status stays.
func TestBuildStatusTransitionTimes(t *testing.T) {
	pod := statusPod()
	start := metav1.Unix(1000, 0)
	running := podState{phase: corev1.PodRunning, startTime: &start, container: containerRun{state: runningState(start)}}
	pod.Status = buildStatus(pod, running, metav1.Unix(1000, 0))
	pod.Status = buildStatus(pod, running, metav1.Unix(1500, 0))
	if c := condition(pod.Status.Conditions, corev1.PodReady); c.LastTransitionTime.Unix() != 1000 {
		t.Errorf("Ready moved to %v while it stayed True", c.LastTransitionTime)
	}
	done := running
	done.phase = corev1.PodSucceeded
	done.container.state = terminatedState(exit{reason: reasonCompleted}, "")
	pod.Status = buildStatus(pod, done, metav1.Unix(1600, 0))
	if c := condition(pod.Status.Conditions, corev1.PodReady); c.LastTransitionTime.Unix() != 1600 || c.Status != corev1.ConditionFalse {
		t.Errorf("Ready %+v, want False since 1600", c)
	}
	if n := len(pod.Status.Conditions); n != 5 {
		t.Errorf("%d conditions, want 5", n)
	}
}

func TestResumeFrom(t *testing.T) {
	at := metav1.Unix(1000, 0)
	failed := &corev1.ContainerStateTerminated{ExitCode: 1, Reason: reasonError}
	withStatus := func(cs *corev1.ContainerStatus) *corev1.Pod {
		pod := statusPod()
		if cs != nil {
			cs.Name = "lifecycle"
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{*cs}
		}
		return pod
	}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		wantFresh bool
		wantNext  int32
		wantLost  bool
		wantExit  int32 // -1: none
	}{
		{name: "new pod", pod: withStatus(nil), wantFresh: true, wantExit: -1},
		{name: "being created", pod: withStatus(&corev1.ContainerStatus{State: waitingState(reasonContainerCreating, "")}), wantFresh: true, wantExit: -1},
		{name: "running: lost", pod: withStatus(&corev1.ContainerStatus{ContainerID: "dc-local://u1-2", RestartCount: 2, State: runningState(at)}), wantNext: 2, wantLost: true, wantExit: -1},
		{name: "backing off", pod: withStatus(&corev1.ContainerStatus{ContainerID: "dc-local://u1-1", RestartCount: 1,
			State: waitingState(reasonCrashLoopBackOff, ""), LastTerminationState: corev1.ContainerState{Terminated: failed}}), wantNext: 2, wantExit: 1},
		{name: "exited, status not final yet", pod: withStatus(&corev1.ContainerStatus{ContainerID: "dc-local://u1-0",
			State: corev1.ContainerState{Terminated: failed}}), wantNext: 1, wantExit: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resumeFrom(tt.pod)
			exitCode := int32(-1)
			if r.lastExit != nil {
				exitCode = r.lastExit.code
			}
			if r.fresh != tt.wantFresh || r.next != tt.wantNext || r.lost != tt.wantLost || exitCode != tt.wantExit {
				t.Errorf("resume fresh %t next %d lost %t exit %d; want %t %d %t %d", r.fresh, r.next, r.lost, exitCode, tt.wantFresh, tt.wantNext, tt.wantLost, tt.wantExit)
			}
		})
	}
}

func TestRestartDelay(t *testing.T) {
	base, limit := 2*time.Second, 20*time.Second
	want := map[int32]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second, 4: 16 * time.Second, 5: 20 * time.Second, 50: 20 * time.Second}
	for n, d := range want {
		if got := restartDelay(n, base, limit); got != d {
			t.Errorf("restartDelay(%d) = %s, want %s", n, got, d)
		}
	}
}

func TestRestartPolicy(t *testing.T) {
	tests := []struct {
		policy      corev1.RestartPolicy
		code        int32
		wantRestart bool
		wantPhase   corev1.PodPhase
	}{
		{corev1.RestartPolicyNever, 0, false, corev1.PodSucceeded},
		{corev1.RestartPolicyNever, 1, false, corev1.PodFailed},
		{corev1.RestartPolicyOnFailure, 0, false, corev1.PodSucceeded},
		{corev1.RestartPolicyOnFailure, 137, true, corev1.PodFailed},
		{corev1.RestartPolicyAlways, 0, true, corev1.PodSucceeded},
	}
	for _, tt := range tests {
		if got := shouldRestart(tt.policy, tt.code); got != tt.wantRestart {
			t.Errorf("shouldRestart(%s, %d) = %t", tt.policy, tt.code, got)
		}
		if got := finalPhase(tt.code); got != tt.wantPhase {
			t.Errorf("finalPhase(%d) = %s", tt.code, got)
		}
	}
}

// describeState summarizes a container state for comparisons.
func describeState(s corev1.ContainerState) string {
	switch {
	case s.Waiting != nil:
		return "waiting:" + s.Waiting.Reason
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return "terminated:" + strconv.Itoa(int(s.Terminated.ExitCode)) + ":" + s.Terminated.Reason
	}
	return "none"
}

// condition finds a condition by type.
func condition(conditions []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}
