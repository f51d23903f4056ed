package nodebench

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestOrderAlternates(t *testing.T) {
	if got := order(1); !slices.Equal(got, []string{SystemDC, SystemDeployment}) {
		t.Errorf("order(1) = %v, want the DC first", got)
	}
	if got := order(2); !slices.Equal(got, []string{SystemDeployment, SystemDC}) {
		t.Errorf("order(2) = %v, want the Deployment first", got)
	}
}

func TestSetVersion(t *testing.T) {
	spec := podSpec("img", "0")
	setVersion(&spec, 7)
	if env := spec.Containers[0].Env; len(env) != 1 || env[0].Value != "7" {
		t.Errorf("env = %v, want VERSION=7 only", env)
	}
}

func TestDeploymentComplete(t *testing.T) {
	d := func(observed int64, replicas, updated, available int32) *appsv1.Deployment {
		return &appsv1.Deployment{
			Spec:   appsv1.DeploymentSpec{Replicas: ptr.To(int32(3))},
			Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated, AvailableReplicas: available},
		}
	}
	tests := []struct {
		name string
		d    *appsv1.Deployment
		want bool
	}{
		{"complete", d(2, 3, 3, 3), true},
		{"change not observed", d(1, 3, 3, 3), false},
		{"old replicas left", d(2, 4, 3, 3), false},
		{"not all updated", d(2, 3, 2, 3), false},
		{"not all available", d(2, 3, 3, 2), false},
	}
	for _, tt := range tests {
		if got := deploymentComplete(tt.d, 2); got != tt.want {
			t.Errorf("%s: deploymentComplete = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCountPods(t *testing.T) {
	pod := func(phase corev1.PodPhase, ready, deleting bool) corev1.Pod {
		p := corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return p
	}
	pods := []corev1.Pod{
		pod(corev1.PodRunning, true, false),
		pod(corev1.PodRunning, true, false),
		pod(corev1.PodRunning, false, false), // not ready yet
		pod(corev1.PodRunning, true, true),   // terminating
		pod(corev1.PodPending, false, false),
		pod(corev1.PodSucceeded, false, false), // a finished deployer
	}
	if ready, busy := countPods(pods); ready != 2 || busy != 3 {
		t.Errorf("countPods = %d ready, %d busy; want 2, 3", ready, busy)
	}
}
