package cli

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// commandCase is one run of a command against a fake cluster, compared
// with a golden file, then checked.
type commandCase struct {
	name  string
	objs  func(t *testing.T) []runtime.Object
	args  []string
	stdin string
	// setup runs before the command, e.g. to start a fake controller.
	setup func(t *testing.T, f *fixture)
	check func(t *testing.T, f *fixture)
}

func runCases(t *testing.T, cases []commandCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.objs != nil {
				objs = tc.objs(t)
			}
			f := newFixture(t, objs...)
			f.stdin = tc.stdin
			if tc.setup != nil {
				tc.setup(t, f)
			}
			golden(t, f.run(tc.args...).String())
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}

// history3 is web with three deployments: #1 complete, #2 failed, #3 in
// the given phase.
func history3(latest dcv1.DeploymentPhase, opts ...dcOption) func(t *testing.T) []runtime.Object {
	return func(t *testing.T) []runtime.Object {
		dc := newDC("web", 3, opts...)
		return []runtime.Object{
			dc,
			newRC(t, dc, 1, dcv1.DeploymentPhaseComplete, 30*time.Minute, scaled(0, 0, 0, 0)),
			newRC(t, dc, 2, dcv1.DeploymentPhaseFailed, 20*time.Minute, scaled(0, 0, 0, 0), reason("deployer pod no longer exists")),
			newRC(t, dc, 3, latest, 2*time.Minute, scaled(3, 3, 3, 3)),
		}
	}
}

func TestRolloutLatest(t *testing.T) {
	runCases(t, []commandCase{{
		name: "starts a new version",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "latest", "web"},
		check: func(t *testing.T, f *fixture) {
			dc := f.getDC("web")
			if dc.Status.LatestVersion != 4 || dc.Status.Details.Message != "manual change" || dc.Status.Details.Causes[0].Type != dcv1.DeploymentTriggerManual {
				t.Errorf("status = %+v, want latestVersion 4 with a manual cause", dc.Status)
			}
		},
	}, {
		name: "dc prefix and -o name",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "latest", "dc/web", "-o", "name"},
	}, {
		name: "dry run changes nothing",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "latest", "web", "--dry-run"},
		check: func(t *testing.T, f *fixture) {
			if v := f.getDC("web").Status.LatestVersion; v != 3 {
				t.Errorf("latestVersion = %d after a dry run", v)
			}
		},
	}, {
		name: "refused while in progress",
		objs: history3(dcv1.DeploymentPhaseRunning),
		args: []string{"rollout", "latest", "web"},
	}, {
		name: "refused when paused",
		objs: history3(dcv1.DeploymentPhaseComplete, paused),
		args: []string{"rollout", "latest", "web"},
	}, {
		name: "first rollout of a manual DC",
		objs: func(*testing.T) []runtime.Object { return []runtime.Object{newDC("web", 0, manualOnly)} },
		args: []string{"rollout", "latest", "web"},
	}, {
		name: "unknown DC",
		args: []string{"rollout", "latest", "nope"},
	}, {
		name: "wrong namespace",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "latest", "web", "-n", "other"},
	}, {
		name: "missing NAME",
		args: []string{"rollout", "latest"},
	}, {
		name: "two names",
		args: []string{"rollout", "latest", "a", "b"},
	}, {
		name: "invalid NAME",
		args: []string{"rollout", "latest", "Web_1"},
	}, {
		name: "bad output",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "latest", "web", "-o", "table"},
		check: func(t *testing.T, f *fixture) {
			if v := f.getDC("web").Status.LatestVersion; v != 3 {
				t.Errorf("latestVersion = %d after a refused -o", v)
			}
		},
	}, {
		name: "bad dry-run",
		args: []string{"rollout", "latest", "web", "--dry-run=maybe"},
	}, {
		name: "no subcommand",
		args: []string{"rollout"},
	}})
}

func TestRolloutCancel(t *testing.T) {
	runCases(t, []commandCase{{
		name: "cancels the running rollout",
		objs: history3(dcv1.DeploymentPhaseRunning),
		args: []string{"rollout", "cancel", "web"},
		check: func(t *testing.T, f *fixture) {
			rc := f.getRC("web-3")
			if !deployment.IsCancelled(rc) || rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] != "cancelled by the user" {
				t.Errorf("annotations = %v", rc.Annotations)
			}
			if deployment.IsCancelled(f.getRC("web-1")) {
				t.Error("a complete deployment was marked cancelled")
			}
		},
	}, {
		name: "nothing in progress",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "cancel", "web"},
	}, {
		name: "never rolled out",
		objs: func(*testing.T) []runtime.Object { return []runtime.Object{newDC("web", 0)} },
		args: []string{"rollout", "cancel", "web"},
	}, {
		name: "refused when paused",
		objs: history3(dcv1.DeploymentPhaseRunning, paused),
		args: []string{"rollout", "cancel", "web"},
	}, {
		name: "unknown DC",
		args: []string{"rollout", "cancel", "nope"},
	}, {
		name: "missing NAME",
		args: []string{"rollout", "cancel"},
	}})
}

func TestRolloutRetry(t *testing.T) {
	failedLatest := func(t *testing.T) []runtime.Object {
		dc := newDC("web", 2)
		rc1 := newRC(t, dc, 1, dcv1.DeploymentPhaseComplete, 30*time.Minute, scaled(3, 3, 3, 3))
		rc2 := newRC(t, dc, 2, dcv1.DeploymentPhaseFailed, 5*time.Minute, scaled(0, 0, 0, 0), cancelled)
		return []runtime.Object{dc, rc1, rc2,
			newDeployerPod(rc2, "", corev1.PodFailed), newDeployerPod(rc2, "pre", corev1.PodSucceeded),
			newDeployerPod(rc1, "", corev1.PodSucceeded)}
	}
	runCases(t, []commandCase{{
		name: "retries a failed rollout",
		objs: failedLatest,
		args: []string{"rollout", "retry", "web"},
		check: func(t *testing.T, f *fixture) {
			rc := f.getRC("web-2")
			if deployment.Phase(rc) != dcv1.DeploymentPhaseNew || deployment.IsCancelled(rc) || rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] != "" {
				t.Errorf("annotations = %v, want phase New without cancel and reason", rc.Annotations)
			}
			for _, name := range []string{"web-2-deploy", "web-2-hook-pre"} {
				if _, err := f.kube.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("pod %s: err = %v, want it deleted", name, err)
				}
			}
			if _, err := f.kube.CoreV1().Pods("default").Get(context.Background(), "web-1-deploy", metav1.GetOptions{}); err != nil {
				t.Errorf("the deployer pod of another rollout was touched: %v", err)
			}
		},
	}, {
		name: "refused when complete",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "retry", "web"},
	}, {
		name: "refused when running",
		objs: history3(dcv1.DeploymentPhaseRunning),
		args: []string{"rollout", "retry", "web"},
	}, {
		name: "refused when paused",
		objs: history3(dcv1.DeploymentPhaseFailed, paused),
		args: []string{"rollout", "retry", "web"},
	}, {
		name: "never rolled out",
		objs: func(*testing.T) []runtime.Object { return []runtime.Object{newDC("web", 0)} },
		args: []string{"rollout", "retry", "web"},
	}, {
		name: "unknown DC",
		args: []string{"rollout", "retry", "nope"},
	}})
}

func TestRolloutUndo(t *testing.T) {
	imageTriggered := func(t *testing.T) []runtime.Object {
		return history3(dcv1.DeploymentPhaseComplete, withImageTrigger)(t)
	}
	runCases(t, []commandCase{{
		name: "back to the last complete revision",
		objs: imageTriggered,
		args: []string{"rollout", "undo", "web"},
		check: func(t *testing.T, f *fixture) {
			dc := f.getDC("web")
			if got := dc.Spec.Template.Spec.Containers[0].Image; got != "registry.example.com/web:1" {
				t.Errorf("image = %s, want revision 1's", got)
			}
			if dc.Spec.Triggers[1].ImageChangeParams.Automatic {
				t.Error("the image trigger is still automatic")
			}
			if dc.Status.LatestVersion != 3 {
				t.Errorf("latestVersion = %d: the ConfigChange trigger should roll it out", dc.Status.LatestVersion)
			}
		},
	}, {
		name: "to a given revision",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "undo", "web", "--to-revision", "2"},
		check: func(t *testing.T, f *fixture) {
			if got := f.getDC("web").Spec.Template.Spec.Containers[0].Image; got != "registry.example.com/web:2" {
				t.Errorf("image = %s, want revision 2's", got)
			}
		},
	}, {
		name: "without a ConfigChange trigger it rolls out itself",
		objs: history3(dcv1.DeploymentPhaseComplete, manualOnly),
		args: []string{"rollout", "undo", "web", "--to-revision=1"},
		check: func(t *testing.T, f *fixture) {
			if v := f.getDC("web").Status.LatestVersion; v != 4 {
				t.Errorf("latestVersion = %d, want 4", v)
			}
		},
	}, {
		name: "unknown revision",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "undo", "web", "--to-revision", "7"},
	}, {
		name: "latest revision",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "undo", "web", "--to-revision", "3"},
	}, {
		name: "negative revision",
		args: []string{"rollout", "undo", "web", "--to-revision", "-1"},
	}, {
		name: "revision not a number",
		args: []string{"rollout", "undo", "web", "--to-revision", "two"},
	}, {
		name: "nothing to go back to",
		objs: func(t *testing.T) []runtime.Object {
			dc := newDC("web", 1)
			return []runtime.Object{dc, newRC(t, dc, 1, dcv1.DeploymentPhaseComplete, time.Minute)}
		},
		args: []string{"rollout", "undo", "web"},
	}, {
		name: "refused when paused",
		objs: history3(dcv1.DeploymentPhaseComplete, paused),
		args: []string{"rollout", "undo", "web"},
	}})
}

func TestRolloutHistory(t *testing.T) {
	runCases(t, []commandCase{{
		name: "table",
		objs: history3(dcv1.DeploymentPhaseRunning),
		args: []string{"rollout", "history", "web"},
	}, {
		name: "one revision",
		objs: history3(dcv1.DeploymentPhaseRunning),
		args: []string{"rollout", "history", "web", "--revision", "2"},
	}, {
		name: "names",
		objs: history3(dcv1.DeploymentPhaseRunning),
		args: []string{"rollout", "history", "web", "-o", "name"},
	}, {
		name: "no history",
		objs: func(*testing.T) []runtime.Object { return []runtime.Object{newDC("web", 0)} },
		args: []string{"rollout", "history", "web"},
	}, {
		name: "unknown revision",
		objs: history3(dcv1.DeploymentPhaseRunning),
		args: []string{"rollout", "history", "web", "--revision", "9"},
	}, {
		name: "unknown DC",
		args: []string{"rollout", "history", "nope"},
	}})
}

func TestRolloutPauseResume(t *testing.T) {
	runCases(t, []commandCase{{
		name: "pause",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "pause", "web"},
		check: func(t *testing.T, f *fixture) {
			if !f.getDC("web").Spec.Paused {
				t.Error("not paused")
			}
		},
	}, {
		name: "already paused",
		objs: history3(dcv1.DeploymentPhaseComplete, paused),
		args: []string{"rollout", "pause", "web"},
	}, {
		name: "resume",
		objs: history3(dcv1.DeploymentPhaseComplete, paused),
		args: []string{"rollout", "resume", "web"},
		check: func(t *testing.T, f *fixture) {
			if f.getDC("web").Spec.Paused {
				t.Error("still paused")
			}
		},
	}, {
		name: "resume a running DC",
		objs: history3(dcv1.DeploymentPhaseComplete),
		args: []string{"rollout", "resume", "web"},
	}, {
		name: "unknown DC",
		args: []string{"rollout", "pause", "nope"},
	}})
}
