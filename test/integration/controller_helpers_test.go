package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// waitTimeout bounds every wait on the controllers.
const waitTimeout = 30 * time.Second

// newDC returns a DeploymentConfig with one container, changed by mutate.
func newDC(ns, name string, mutate func(*dcv1.DeploymentConfig)) *dcv1.DeploymentConfig {
	dc := &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: 3,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example.com/web:1"}}},
			},
		},
	}
	if mutate != nil {
		mutate(dc)
	}
	return dc
}

func mustCreate(t *testing.T, obj client.Object) {
	t.Helper()
	if err := cluster.client.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// waitFor polls cond until it holds, failing the test with what it last
// said after waitTimeout.
func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	last := ""
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, state, err := cond(ctx)
		last = state
		return ok, err
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last seen: %s", what, err, last)
	}
}

func getRC(ctx context.Context, ns, name string) (*corev1.ReplicationController, error) {
	rc := &corev1.ReplicationController{}
	err := cluster.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, rc)
	return rc, err
}

func getDC(t *testing.T, ns, name string) *dcv1.DeploymentConfig {
	t.Helper()
	dc := &dcv1.DeploymentConfig{}
	if err := cluster.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, dc); err != nil {
		t.Fatalf("get dc %s: %v", name, err)
	}
	return dc
}

// waitRC waits until the RC exists and check holds for it.
func waitRC(t *testing.T, ns, name, what string, check func(*corev1.ReplicationController) bool) *corev1.ReplicationController {
	t.Helper()
	var rc *corev1.ReplicationController
	waitFor(t, fmt.Sprintf("rc %s: %s", name, what), func(ctx context.Context) (bool, string, error) {
		got, err := getRC(ctx, ns, name)
		if apierrors.IsNotFound(err) {
			return false, "not found", nil
		}
		if err != nil {
			return false, "", err
		}
		rc = got
		return check(got), fmt.Sprintf("phase %s, replicas %d, annotations %v", deployment.Phase(got), deployment.Replicas(got), got.Annotations[dcv1.DeploymentStatusReasonAnnotation]), nil
	})
	return rc
}

func waitPhase(t *testing.T, ns, name string, phase dcv1.DeploymentPhase) *corev1.ReplicationController {
	t.Helper()
	return waitRC(t, ns, name, "phase "+string(phase), func(rc *corev1.ReplicationController) bool {
		return deployment.Phase(rc) == phase
	})
}

// waitPod waits until the pod exists and returns it.
func waitPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	waitFor(t, "pod "+name, func(ctx context.Context) (bool, string, error) {
		err := cluster.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, pod)
		if apierrors.IsNotFound(err) {
			return false, "not found", nil
		}
		return err == nil, "", err
	})
	return pod
}

// waitGone waits until the object no longer exists.
func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%T %s to be gone", obj, obj.GetName()), func(ctx context.Context) (bool, string, error) {
		err := cluster.client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "still there", err
	})
}

// setPodPhase writes a pod's phase as its kubelet would.
func setPodPhase(t *testing.T, ns, name string, phase corev1.PodPhase) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := cluster.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, pod); err != nil {
			return err
		}
		pod.Status.Phase = phase
		return cluster.client.Status().Update(context.Background(), pod)
	})
	if err != nil {
		t.Fatalf("set pod %s phase %s: %v", name, phase, err)
	}
}

// runDeployer plays the deployer pod of a deployment through Running to
// the given end phase and waits for the deployment to follow.
func runDeployer(t *testing.T, ns, rcName string, end corev1.PodPhase) *corev1.ReplicationController {
	t.Helper()
	pod := waitPod(t, ns, deployment.DeployerPodName(rcName))
	setPodPhase(t, ns, pod.Name, corev1.PodRunning)
	waitPhase(t, ns, rcName, dcv1.DeploymentPhaseRunning)
	setPodPhase(t, ns, pod.Name, end)
	want := dcv1.DeploymentPhaseComplete
	if end == corev1.PodFailed {
		want = dcv1.DeploymentPhaseFailed
	}
	return waitPhase(t, ns, rcName, want)
}

// updateDC changes a DeploymentConfig's spec, retrying on conflicts.
func updateDC(t *testing.T, ns, name string, change func(*dcv1.DeploymentConfig)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dc := &dcv1.DeploymentConfig{}
		if err := cluster.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, dc); err != nil {
			return err
		}
		change(dc)
		return cluster.client.Update(context.Background(), dc)
	})
	if err != nil {
		t.Fatalf("update dc %s: %v", name, err)
	}
}

// recordProgress plays the runner of the deployment's rollout: it changes
// the deployment's progress record as the runner writes it.
func recordProgress(t *testing.T, ns, name string, change func(*deployment.Progress)) {
	t.Helper()
	patchRC(t, ns, name, func(rc *corev1.ReplicationController) {
		p := deployment.ProgressOf(rc)
		change(&p)
		p.Seq++
		deployment.SetProgress(rc, p)
	})
}

// patchRC changes an RC as a user would, retrying on conflicts.
func patchRC(t *testing.T, ns, name string, change func(*corev1.ReplicationController)) {
	t.Helper()
	if err := changeRC(ns, name, change, func(ctx context.Context, rc *corev1.ReplicationController) error {
		return cluster.client.Update(ctx, rc)
	}); err != nil {
		t.Fatalf("update rc %s: %v", name, err)
	}
}

// setRCStatus changes an RC's status as kube-controller-manager's RC
// manager would (the integration suites run none), retrying on conflicts
// with dc-controller's own writes of the RC.
func setRCStatus(t *testing.T, ns, name string, change func(*corev1.ReplicationController)) {
	t.Helper()
	if err := changeRC(ns, name, change, func(ctx context.Context, rc *corev1.ReplicationController) error {
		return cluster.client.Status().Update(ctx, rc)
	}); err != nil {
		t.Fatalf("update the status of rc %s: %v", name, err)
	}
}

// changeRC reads an RC, changes it and writes it with write, again from a
// fresh read whenever the write conflicts.
func changeRC(ns, name string, change func(*corev1.ReplicationController), write func(context.Context, *corev1.ReplicationController) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rc, err := getRC(context.Background(), ns, name)
		if err != nil {
			return err
		}
		change(rc)
		return write(context.Background(), rc)
	})
}

// waitCondition waits until the DeploymentConfig has a condition of that
// type, status and reason.
func waitCondition(t *testing.T, ns, name string, ct dcv1.DeploymentConditionType, status corev1.ConditionStatus, reason string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("dc %s condition %s=%s (%s)", name, ct, status, reason), func(ctx context.Context) (bool, string, error) {
		dc := getDC(t, ns, name)
		for _, c := range dc.Status.Conditions {
			if c.Type == ct {
				return c.Status == status && c.Reason == reason, fmt.Sprintf("%s=%s (%s) %s", c.Type, c.Status, c.Reason, c.Message), nil
			}
		}
		return false, fmt.Sprintf("conditions %+v", dc.Status.Conditions), nil
	})
}

// waitEvent waits for an event with that reason about the named object.
func waitEvent(t *testing.T, ns, objectName, reason string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("event %s on %s", reason, objectName), func(ctx context.Context) (bool, string, error) {
		events := &corev1.EventList{}
		if err := cluster.client.List(ctx, events, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var seen []string
		for _, e := range events.Items {
			if e.InvolvedObject.Name == objectName && e.Reason == reason {
				return true, "", nil
			}
			seen = append(seen, e.InvolvedObject.Name+":"+e.Reason)
		}
		return false, fmt.Sprintf("%v", seen), nil
	})
}
