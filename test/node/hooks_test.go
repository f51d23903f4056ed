package node

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// Recreate's pre, mid and post hooks run as real containers of the
// application's image, with the template's security context (the
// namespace enforces restricted Pod Security) and its volumes: a Retry
// hook whose first attempt fails is restarted and succeeds, an Ignore hook
// that fails only warns, and each hook's output is in `kubectl dc logs`.
func TestHooksRunAsRealContainers(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	dc := appDC(ns, "web", rollout.Options{Replicas: 2, Strategy: dcv1.DeploymentStrategyTypeRecreate, Hooks: map[string]*dcv1.LifecycleHook{
		"pre": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, `echo "pre hook of $DC_DEPLOYMENT_NAME as uid $(id -u)"`),
		// The scratch volume outlives the container's restart.
		"mid": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyRetry,
			`if [ -f /scratch/tried ]; then echo "mid hook: second attempt"; else touch /scratch/tried; echo "mid hook: first attempt fails"; exit 3; fi`),
		"post": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyIgnore, `echo "post hook fails"; exit 1`),
	}})
	spec := &dc.Spec.Template.Spec
	spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	dc.Spec.Strategy.RecreateParams.Mid.ExecNewPod.Volumes = []string{"scratch"}
	create(t, dc)
	requireComplete(t, ns, "web", 1)

	setVersion(t, ns, "web", "2")
	requireComplete(t, ns, "web", 2)

	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> pre: Running hook pod ...",
		"pre hook of web-2 as uid 1000",
		"--> pre: Success",
		"--> Scaling web-1 down to zero",
		"--> mid: Running hook pod ...",
		"mid hook: first attempt fails",
		"--> mid: Retrying hook pod (retry #1)",
		"mid hook: second attempt",
		"--> mid: Success",
		"--> Scaling web-2 to 1",
		"--> Scaling web-2 to 2",
		"--> post: Running hook pod ...",
		"post hook fails",
		"--> post: Warning",
		"--> Success",
	)
	for _, hookType := range []string{"pre", "mid"} {
		pod, err := suite.clientset.CoreV1().Pods(ns).Get(context.Background(), deployment.HookPodName("web-2", hookType), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Status.Phase != corev1.PodSucceeded {
			t.Errorf("hook pod %s is %s, want Succeeded", pod.Name, pod.Status.Phase)
		}
	}
}

// A pre hook that fails under Abort fails the rollout; the previous
// version keeps serving.
func TestAbortingHookFailsTheRollout(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, appDC(ns, "web", rollout.Options{Replicas: 2, Strategy: dcv1.DeploymentStrategyTypeRecreate}))
	requireComplete(t, ns, "web", 1)
	err := suite.dcs.Update(context.Background(), ns, "web", func(dc *dcv1.DeploymentConfig) {
		setEnv(&dc.Spec.Template.Spec.Containers[0], versionEnv, "2")
		dc.Spec.Strategy.RecreateParams.Pre = rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, `echo "migration failed" >&2; exit 1`)
	})
	if err != nil {
		t.Fatal(err)
	}
	rc := waitDone(t, ns, "web", 2)
	if deployment.Phase(rc) != dcv1.DeploymentPhaseFailed {
		t.Fatalf("web-2 ended %s, want Failed", deployment.Phase(rc))
	}
	assertInOrder(t, deployerLog(t, ns, "web"), "--> pre: Running hook pod ...", "migration failed", "--> pre: Failed")
	if err := suite.dcs.WaitSettled(context.Background(), ns, "web", rolloutTimeout); err != nil {
		t.Fatal(err)
	}
}
