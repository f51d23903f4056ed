package node

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// A Rolling rollout replaces every pod of the sample application with one
// of the new version, which really serves: each new pod answers with it.
func TestRollingRolloutServesTheNewVersion(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, appDC(ns, "web", rollout.Options{Replicas: 3, MaxSurge: "1", MaxUnavailable: "0"}))
	requireComplete(t, ns, "web", 1)

	setVersion(t, ns, "web", "2")
	requireComplete(t, ns, "web", 2)

	assertInOrder(t, deployerLog(t, ns, "web"), "--> Scaling up web-2 from 0 to 3, scaling down web-1 from 3 to 0", "--> Success")
	pods := podsOf(t, ns, "web-2")
	if len(pods) != 3 {
		t.Fatalf("web-2 has %d running pods, want 3", len(pods))
	}
	for _, pod := range pods {
		if code, body := get(t, pod, "/"); code != 200 || !strings.Contains(body, "version 2") {
			t.Errorf("pod %s answered %d %q, want 200 and version 2", pod.Name, code, body)
		}
	}
	if pods := podsOf(t, ns, "web-1"); len(pods) != 0 {
		t.Errorf("web-1 still has %d running pods", len(pods))
	}
}

// Pods that never become ready fail the rollout at the strategy's
// timeout, and the last complete version comes back at full size
// (OpenShift's own e2e scenario, which needs a real readiness probe).
func TestNeverReadyPodsFailTheRolloutAndTheLastVersionComesBack(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	dc := appDC(ns, "web", rollout.Options{Replicas: 2, MaxSurge: "1", MaxUnavailable: "0"})
	dc.Spec.Strategy.RollingParams.TimeoutSeconds = ptr.To(int64(20))
	create(t, dc)
	requireComplete(t, ns, "web", 1)

	err := suite.dcs.Update(context.Background(), ns, "web", func(dc *dcv1.DeploymentConfig) {
		c := &dc.Spec.Template.Spec.Containers[0]
		setEnv(c, versionEnv, "2")
		setEnv(c, "READY", "false")
	})
	if err != nil {
		t.Fatal(err)
	}
	rc := waitDone(t, ns, "web", 2)
	if deployment.Phase(rc) != dcv1.DeploymentPhaseFailed {
		t.Fatalf("web-2 ended %s, want Failed", deployment.Phase(rc))
	}
	if err := suite.dcs.WaitSettled(context.Background(), ns, "web", rolloutTimeout); err != nil {
		t.Fatal(err)
	}
	if err := suite.dcs.WaitProgressing(context.Background(), ns, "web", dcv1.ProgressDeadlineExceededReason, rolloutTimeout); err != nil {
		t.Fatal(err)
	}
	for _, pod := range podsOf(t, ns, "web-1") {
		if code, body := get(t, pod, "/"); code != 200 || !strings.Contains(body, "version 1") {
			t.Errorf("pod %s of web-1 answered %d %q, want 200 and version 1", pod.Name, code, body)
		}
	}
	if n := len(podsOf(t, ns, "web-1")); n != 2 {
		t.Errorf("web-1 has %d running pods after the fall-back, want 2", n)
	}
}

// A deployer pod deleted in the middle of its rollout fails the rollout
// ("deployer pod no longer exists") and the previous version stays.
func TestDeletedDeployerPodFailsTheRollout(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, appDC(ns, "web", rollout.Options{Replicas: 2, Strategy: dcv1.DeploymentStrategyTypeRecreate,
		Hooks: map[string]*dcv1.LifecycleHook{"pre": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, `echo "pre hook of $DC_DEPLOYMENT_NAME"; sleep 1`)}}))
	requireComplete(t, ns, "web", 1)
	err := suite.dcs.Update(context.Background(), ns, "web", func(dc *dcv1.DeploymentConfig) {
		setEnv(&dc.Spec.Template.Spec.Containers[0], versionEnv, "2")
		dc.Spec.Strategy.RecreateParams.Pre = rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "sleep 600")
	})
	if err != nil {
		t.Fatal(err)
	}
	deployer := deployment.DeployerPodName("web-2")
	err = rollout.Poll(context.Background(), rolloutTimeout, func(ctx context.Context) (bool, error) {
		pod, err := suite.clientset.CoreV1().Pods(ns).Get(ctx, deployer, metav1.GetOptions{})
		return err == nil && pod.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("waiting for deployer pod %s to run: %v", deployer, err)
	}
	if err := suite.clientset.CoreV1().Pods(ns).Delete(context.Background(), deployer, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rc := waitDone(t, ns, "web", 2)
	if deployment.Phase(rc) != dcv1.DeploymentPhaseFailed || !strings.Contains(rc.Annotations[dcv1.DeploymentStatusReasonAnnotation], "deployer pod no longer exists") {
		t.Fatalf("web-2 ended %s (%q), want Failed: deployer pod no longer exists", deployment.Phase(rc), rc.Annotations[dcv1.DeploymentStatusReasonAnnotation])
	}
	if err := suite.dcs.WaitSettled(context.Background(), ns, "web", rolloutTimeout); err != nil {
		t.Fatal(err)
	}
	if n := len(podsOf(t, ns, "web-1")); n != 2 {
		t.Errorf("web-1 has %d running pods, want 2", n)
	}
}
