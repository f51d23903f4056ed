package hook

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
)

var (
	pending    = fc.Step{Phase: corev1.PodPending}
	running    = fc.Step{Phase: corev1.PodRunning}
	succeeded  = fc.Step{Phase: corev1.PodSucceeded}
	exitedOne  = fc.Step{Phase: corev1.PodFailed, ExitCode: 1}
	retrying   = func(n int32) fc.Step { return fc.Step{Phase: corev1.PodRunning, Restarts: n} }
	overTime   = fc.Step{Phase: corev1.PodFailed, Restarts: 2, Reason: "DeadlineExceeded", Message: "Pod was active on the node longer than the specified deadline"}
	podDeleted = fc.Step{Delete: true}
)

// existingPod is a hook pod left by an earlier run of the deployer.
func existingPod(rc *corev1.ReplicationController, uid string, phase corev1.PodPhase) *corev1.Pod {
	pod, _ := BuildPod(execHook(dcv1.LifecycleHookFailurePolicyAbort, "app", nil), rc, nil, Pre, 100)
	pod.OwnerReferences[0].UID = metav1UID(uid)
	pod.Status.Phase = phase
	return pod
}

func TestExecutorRun(t *testing.T) {
	abort := execHook(dcv1.LifecycleHookFailurePolicyAbort, "app", nil)
	tests := []struct {
		name        string
		hook        *dcv1.LifecycleHook
		existing    *corev1.Pod
		steps       []fc.Step
		playOnExist []fc.Step
		log         string
		deadline    time.Duration
		wantOut     string
		wantErr     string
		wantCreated int
	}{
		{
			name:        "success with the log in between",
			hook:        abort,
			steps:       []fc.Step{pending, running, succeeded},
			log:         "migrating\ndone",
			wantOut:     "--> pre: Running hook pod ...\nmigrating\ndone\n--> pre: Success\n",
			wantCreated: 1,
		},
		{
			name:        "finished before it was seen running: the log is still shown",
			hook:        abort,
			steps:       []fc.Step{succeeded},
			log:         "quick\n",
			wantOut:     "--> pre: Running hook pod ...\nquick\n--> pre: Success\n",
			wantCreated: 1,
		},
		{
			name:        "Abort fails the rollout",
			hook:        abort,
			steps:       []fc.Step{running, exitedOne},
			log:         "boom\n",
			wantOut:     "--> pre: Running hook pod ...\nboom\n--> pre: Failed\n",
			wantErr:     "pre hook failed: hook pod shop/web-3-hook-pre failed: exit code 1",
			wantCreated: 1,
		},
		{
			name:        "Ignore warns and goes on",
			hook:        execHook(dcv1.LifecycleHookFailurePolicyIgnore, "app", nil),
			steps:       []fc.Step{running, exitedOne},
			log:         "boom\n",
			wantOut:     "--> pre: Running hook pod ...\nboom\n--> pre: Failed\n--> pre: Warning: the hook failed and its failurePolicy is Ignore, so the rollout goes on: hook pod shop/web-3-hook-pre failed: exit code 1\n",
			wantCreated: 1,
		},
		{
			name:        "Retry reports each restart",
			hook:        execHook(dcv1.LifecycleHookFailurePolicyRetry, "app", nil),
			steps:       []fc.Step{running, retrying(1), retrying(2), {Phase: corev1.PodSucceeded, Restarts: 2}},
			log:         "try\n",
			wantOut:     "--> pre: Running hook pod ...\ntry\n--> pre: Retrying hook pod (retry #1)\ntry\n--> pre: Retrying hook pod (retry #2)\ntry\n--> pre: Success\n",
			wantCreated: 1,
		},
		{
			name:        "Retry fails at the deadline",
			hook:        execHook(dcv1.LifecycleHookFailurePolicyRetry, "app", nil),
			steps:       []fc.Step{running, retrying(1), retrying(2), overTime},
			log:         "try\n",
			wantOut:     "--> pre: Running hook pod ...\ntry\n--> pre: Retrying hook pod (retry #1)\ntry\n--> pre: Retrying hook pod (retry #2)\ntry\n--> pre: Failed\n",
			wantErr:     "pre hook failed: hook pod shop/web-3-hook-pre failed: DeadlineExceeded: Pod was active on the node longer than the specified deadline",
			wantCreated: 1,
		},
		{
			name:     "an existing finished pod is reused",
			hook:     abort,
			existing: existingPod(testRC(), "uid-web-3", corev1.PodSucceeded),
			wantOut:  "--> pre: Hook pod already succeeded\n",
		},
		{
			name:        "an existing running pod is followed",
			hook:        abort,
			existing:    existingPod(testRC(), "uid-web-3", corev1.PodRunning),
			playOnExist: []fc.Step{{Phase: corev1.PodSucceeded, After: 300 * time.Millisecond}},
			wantOut:     "--> pre: Hook pod is already running ...\n--> pre: Success\n",
		},
		{
			name:     "a pod of an earlier RC of the same name is not reused",
			hook:     abort,
			existing: existingPod(testRC(), "uid-old", corev1.PodSucceeded),
			wantErr:  "pre hook failed: pod shop/web-3-hook-pre exists but is not a hook pod of replicationcontroller web-3",
		},
		{
			name:        "deleted while running",
			hook:        abort,
			steps:       []fc.Step{running, podDeleted},
			wantOut:     "--> pre: Running hook pod ...\n--> pre: Failed\n",
			wantErr:     "pre hook failed: hook pod shop/web-3-hook-pre was deleted before it finished",
			wantCreated: 1,
		},
		{
			name:     "no time left",
			hook:     abort,
			deadline: -time.Second,
			wantErr:  "pre hook failed: the rollout's active deadline",
		},
		{
			name: "a hook with neither action does nothing",
			hook: &dcv1.LifecycleHook{FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			var objects []runtime.Object
			if tt.existing != nil {
				objects = append(objects, tt.existing)
			}
			cluster := fc.New(ctx, fc.Options{}, objects...)
			defer cluster.Wait()
			defer cancel()
			rc := testRC()
			if len(tt.steps) > 0 {
				cluster.Script("web-3-hook-pre", tt.log, tt.steps...)
			}
			if len(tt.playOnExist) > 0 {
				cluster.Play("shop", "web-3-hook-pre", tt.playOnExist...)
			}
			deadline := tt.deadline
			if deadline == 0 {
				deadline = time.Hour
			}
			var out bytes.Buffer
			e := NewExecutor(cluster.Client, &out, &dcv1.DeploymentStrategy{}, time.Now().Add(deadline))
			e.drainIdle, e.drainMax = 10*time.Millisecond, 100*time.Millisecond
			err := e.Run(ctx, tt.hook, rc, Pre)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if out.String() != tt.wantOut {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), tt.wantOut)
			}
			if got := len(cluster.Created()); got != tt.wantCreated {
				t.Errorf("%d pods created, want %d", got, tt.wantCreated)
			}
		})
	}
}

func TestExecutorPodDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	cluster := fc.New(ctx, fc.Options{})
	defer cluster.Wait()
	defer cancel()
	cluster.Script("web-3-hook-mid", "", succeeded)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	e := NewExecutor(cluster.Client, &bytes.Buffer{}, &dcv1.DeploymentStrategy{Labels: map[string]string{"team": "a"}}, now.Add(300*time.Second))
	e.now = func() time.Time { return now.Add(100 * time.Second) }
	if err := e.Run(ctx, execHook(dcv1.LifecycleHookFailurePolicyAbort, "app", nil), testRC(), Mid); err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.Client.CoreV1().Pods("shop").Get(ctx, "web-3-hook-mid", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := pod.Spec.ActiveDeadlineSeconds; d == nil || *d != 200 {
		t.Errorf("activeDeadlineSeconds %v, want 200", d)
	}
	if pod.Labels["team"] != "a" || pod.Labels[dcv1.DeployerPodTypeLabel] != "hook-mid" {
		t.Errorf("labels %v", pod.Labels)
	}
}

func TestFailureReason(t *testing.T) {
	terminated := func(code int32, msg string) corev1.PodStatus {
		return corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			Name: ContainerName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg}},
		}}}
	}
	tests := []struct {
		status corev1.PodStatus
		want   string
	}{
		{terminated(2, ""), "exit code 2"},
		{terminated(1, "no database\n"), "exit code 1: no database"},
		{corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded"}, "DeadlineExceeded"},
		{corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "low on memory"}, "Evicted: low on memory"},
		{corev1.PodStatus{Phase: corev1.PodFailed}, "the pod failed"},
	}
	for _, tt := range tests {
		if got := failureReason(&corev1.Pod{Status: tt.status}); got != tt.want {
			t.Errorf("failureReason(%+v) = %q, want %q", tt.status, got, tt.want)
		}
	}
}

func metav1UID(s string) types.UID { return types.UID(s) }
