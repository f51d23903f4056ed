package cli

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestRolloutStatusOf(t *testing.T) {
	base := newDC("web", 3)
	running := func(opts ...rcOption) *corev1.ReplicationController {
		return newRC(t, base, 3, dcv1.DeploymentPhaseRunning, time.Minute, opts...)
	}
	withTotal := func(total int32) dcOption { return func(dc *dcv1.DeploymentConfig) { dc.Status.Replicas = total } }
	cases := []struct {
		name     string
		dc       *dcv1.DeploymentConfig
		rc       *corev1.ReplicationController
		revision int64
		want     string
		done     bool
		err      string
	}{
		{name: "updating", dc: newDC("web", 3, withTotal(4)), rc: running(scaled(1, 1, 0, 0)),
			want: "Waiting for rollout to finish: 1 out of 3 new replicas have been updated..."},
		{name: "old pending termination", dc: newDC("web", 3, withTotal(5)), rc: running(scaled(3, 3, 3, 3)),
			want: "Waiting for rollout to finish: 2 old replicas are pending termination..."},
		{name: "not yet available", dc: newDC("web", 3, withTotal(3)), rc: running(scaled(3, 3, 3, 1)),
			want: "Waiting for rollout to finish: 1 of 3 updated replicas are available..."},
		{name: "last steps", dc: newDC("web", 3, withTotal(3)), rc: running(scaled(3, 3, 3, 3)),
			want: "Waiting for rollout to finish: rollout #3 is running its last steps..."},
		{name: "pending", dc: base, rc: newRC(t, base, 3, dcv1.DeploymentPhasePending, time.Minute),
			want: "Waiting for rollout #3 to start..."},
		{name: "being cancelled", dc: base, rc: running(cancelled),
			want: "Waiting for rollout #3 to be cancelled..."},
		{name: "complete", dc: base, rc: newRC(t, base, 3, dcv1.DeploymentPhaseComplete, time.Minute), done: true,
			want: `replication controller "web-3" successfully rolled out`},
		{name: "failed", dc: base, rc: newRC(t, base, 3, dcv1.DeploymentPhaseFailed, time.Minute, reason("deployer pod no longer exists")), done: true,
			err: `rollout #3 of deploymentconfig "web" failed: deployer pod no longer exists (see 'kubectl dc logs web --version 3')`},
		{name: "cancelled", dc: base, rc: newRC(t, base, 3, dcv1.DeploymentPhaseFailed, time.Minute, cancelled), done: true,
			err: `rollout #3 of deploymentconfig "web" was cancelled: cancelled by the user`},
		{name: "not created yet", dc: base, want: "Waiting for rollout #3 to be created..."},
		{name: "creation refused", dc: newDC("web", 3, func(dc *dcv1.DeploymentConfig) {
			dc.Status.Conditions = []dcv1.DeploymentCondition{{Type: dcv1.DeploymentProgressing, Status: corev1.ConditionFalse,
				Reason: dcv1.ReplicationControllerCreateErrorReason, Message: `replicationcontrollers "web-3" is forbidden: exceeded quota`}}
		}), want: `Waiting for rollout #3 to be created: replicationcontrollers "web-3" is forbidden: exceeded quota`},
		{name: "held by a policy's window", dc: newDC("web", 3, func(dc *dcv1.DeploymentConfig) {
			dc.Status.Conditions = []dcv1.DeploymentCondition{{Type: dcv1.DeploymentProgressing, Status: corev1.ConditionUnknown,
				Reason: dcv1.AwaitingWindowReason, Message: "RolloutPolicy fleet: outside its windows until 2026-01-03T09:00:00Z"}}
		}), want: `Waiting for rollout #3: RolloutPolicy fleet: outside its windows until 2026-01-03T09:00:00Z`},
		{name: "spec not observed", dc: newDC("web", 3, func(dc *dcv1.DeploymentConfig) { dc.Generation = 2 }),
			want: "Waiting for latest deployment config spec to be observed by the controller loop..."},
		{name: "paused", dc: newDC("web", 3, paused), done: true,
			want: `Deployment config "web" waiting on manual update (use 'kubectl dc rollout resume web')`},
		{name: "waiting for an image", dc: newDC("web", 0, withImageTrigger),
			want: `Waiting for the first rollout of "web" (an image trigger must resolve an image first)...`},
		{name: "manual, never rolled out", dc: newDC("web", 0, manualOnly), done: true,
			want: `Deployment config "web" has not rolled out yet: it has no triggers (start it with 'kubectl dc rollout latest web')`},
		{name: "other revision", dc: base, revision: 2, done: true,
			err: "--revision: desired revision (2) is different from the running revision (3)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := rolloutStatusOf(tc.dc, tc.rc, tc.revision)
			if st.message != tc.want || st.done != tc.done {
				t.Errorf("got %q (done %v), want %q (done %v)", st.message, st.done, tc.want, tc.done)
			}
			if (st.err == nil) != (tc.err == "") || (st.err != nil && st.err.Error() != tc.err) {
				t.Errorf("err = %v, want %q", st.err, tc.err)
			}
		})
	}
}

func TestRolloutStatusOnce(t *testing.T) {
	runCases(t, []commandCase{{
		name: "complete",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "status", "web"},
	}, {
		name: "running, without watching",
		objs: history3(dcv1.DeploymentPhaseRunning),
		args: []string{"rollout", "status", "web", "--watch=false"},
	}, {
		name: "failed",
		objs: func(t *testing.T) []runtime.Object {
			dc := newDC("web", 1)
			return []runtime.Object{dc, newRC(t, dc, 1, dcv1.DeploymentPhaseFailed, time.Minute, reason("pre hook failed"))}
		},
		args: []string{"rollout", "status", "web"},
	}, {
		name: "cancelled",
		objs: func(t *testing.T) []runtime.Object {
			dc := newDC("web", 1)
			return []runtime.Object{dc, newRC(t, dc, 1, dcv1.DeploymentPhaseFailed, time.Minute, cancelled)}
		},
		args: []string{"rollout", "status", "web"},
	}, {
		name: "name taken by a foreign RC",
		objs: func(t *testing.T) []runtime.Object {
			dc := newDC("web", 2, func(dc *dcv1.DeploymentConfig) {
				dc.Status.Conditions = []dcv1.DeploymentCondition{{Type: dcv1.DeploymentProgressing, Status: corev1.ConditionFalse,
					Reason: dcv1.ReplicationControllerCreateErrorReason, Message: `replication controller "web-2" already exists and it couldn't be adopted`}}
			})
			leftover := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: "default",
				Annotations: map[string]string{"openshift.io/deployment.phase": "Complete"}}}
			return []runtime.Object{dc, newRC(t, dc, 1, dcv1.DeploymentPhaseComplete, time.Hour), leftover}
		},
		args: []string{"rollout", "status", "web", "--watch=false"},
	}, {
		name: "paused",
		objs: history3(dcv1.DeploymentPhaseRunning, paused),
		args: []string{"rollout", "status", "web"},
	}, {
		name: "other revision",
		objs: history3(dcv1.DeploymentPhaseRunning),
		args: []string{"rollout", "status", "web", "--revision", "2"},
	}, {
		name: "negative timeout",
		args: []string{"rollout", "status", "web", "--timeout=-1s"},
	}, {
		name: "bad timeout",
		args: []string{"rollout", "status", "web", "--timeout", "soon"},
	}, {
		name: "unknown DC",
		args: []string{"rollout", "status", "nope"},
	}})
}

// rolloutScript is a running rollout of web-1 (3 replicas) and the changes
// the controller and deployer make to it, one per step.
func rolloutScript(t *testing.T, f *fixture, final dcv1.DeploymentPhase) []func() {
	ctx := context.Background()
	setRC := func(phase dcv1.DeploymentPhase, current, available int32) func() {
		return func() {
			rc := f.getRC("web-1")
			rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(phase)
			if phase == dcv1.DeploymentPhaseFailed {
				rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] = "timed out waiting for pods"
			}
			rc.Status.Replicas, rc.Status.ReadyReplicas, rc.Status.AvailableReplicas = current, available, available
			if _, err := f.kube.CoreV1().ReplicationControllers("default").Update(ctx, rc, metav1.UpdateOptions{}); err != nil {
				t.Error(err)
			}
		}
	}
	// The fake clientset keeps status on a plain update.
	return []func(){
		setRC(dcv1.DeploymentPhaseRunning, 0, 0),
		setRC(dcv1.DeploymentPhaseRunning, 1, 0),
		setRC(dcv1.DeploymentPhaseRunning, 3, 1),
		setRC(dcv1.DeploymentPhaseRunning, 3, 3),
		setRC(final, 3, 3),
	}
}

// TestRolloutStatusWatch follows a rollout as its deployment changes, with
// a line per change off a terminal and a progress bar on one.
func TestRolloutStatusWatch(t *testing.T) {
	cases := []struct {
		name     string
		terminal bool
		final    dcv1.DeploymentPhase
		// waits are what the output must show before each scripted change.
		waits []string
	}{{
		name:  "lines until complete",
		final: dcv1.DeploymentPhaseComplete,
		waits: []string{"Waiting for rollout #1 to start...", "0 out of 3", "1 out of 3", "1 of 3 updated", "last steps"},
	}, {
		name:  "lines until failed",
		final: dcv1.DeploymentPhaseFailed,
		waits: []string{"Waiting for rollout #1 to start...", "0 out of 3", "1 out of 3", "1 of 3 updated", "last steps"},
	}, {
		name:     "progress bar until complete",
		terminal: true,
		final:    dcv1.DeploymentPhaseComplete,
		waits:    []string{"Waiting for rollout #1 to start...", "0/3 updated", "1/3 updated", "1/3 available", "3/3 available"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dc := newDC("web", 1)
			f := newFixture(t, dc, newRC(t, dc, 1, dcv1.DeploymentPhasePending, time.Second))
			f.terminal = tc.terminal
			script := append([]func(){func() {}}, rolloutScript(t, f, tc.final)...)
			out, errOut := newSyncBuffer(), newSyncBuffer()
			args := []string{"rollout", "status", "web", "-w"}
			done := make(chan int)
			go func() { done <- Main(context.Background(), f.factory(out, errOut), args) }()
			// The first step only waits: the rollout is pending.
			for i, wait := range tc.waits {
				out.waitFor(t, wait)
				if i+1 < len(script) {
					script[i+1]()
				}
			}
			var code int
			select {
			case code = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("rollout status did not end; output:\n%s", out.String())
			}
			golden(t, result{args: args, stdout: out.String(), stderr: errOut.String(), code: code}.String())
		})
	}
}

func TestRolloutStatusTimeout(t *testing.T) {
	f := newFixture(t, history3(dcv1.DeploymentPhaseRunning)(t)...)
	golden(t, f.run("rollout", "status", "web", "--timeout", "100ms").String())
}
