package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// reasonDeployerPodGone is the status reason of a deployment whose
// deployer pod disappeared.
const reasonDeployerPodGone = "deployer pod no longer exists"

// Scenario e: the deployer pod of a running rollout is deleted. The
// deployment must end Failed because its deployer pod no longer exists,
// and the previous version must be back at full size (the automatic
// fall-back), the failed one at zero.
func TestDeployerPodDeleted(t *testing.T) {
	t.Parallel()
	ensureControllers(t, defaultControllers())
	runRounds(t, "e deployer pod deleted", func(r *round) {
		ctx := r.ctx
		name := "victim"
		o := rollout.Options{Replicas: 3, Strategy: dcv1.DeploymentStrategyTypeRolling, MaxSurge: "1", MaxUnavailable: "0"}
		if r.rand.IntN(2) == 0 {
			o.Strategy = dcv1.DeploymentStrategyTypeRecreate
		}
		if err := suite.dcs.Create(ctx, rollout.NewDC(r.ns, name, o)); err != nil {
			r.t.Fatal(err)
		}
		if err := r.checkCompleted(ctx, name, 1, 1); err != nil {
			r.t.Fatalf("first rollout: %v", err)
		}
		// The second rollout's hooks make it last: the deployer pod is
		// deleted during one of them, or while it scales.
		err := suite.dcs.Update(ctx, r.ns, name, func(dc *dcv1.DeploymentConfig) {
			hooks := map[string]*dcv1.LifecycleHook{"pre": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "sleep 2")}
			if o.Strategy == dcv1.DeploymentStrategyTypeRecreate {
				hooks["mid"] = rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "sleep 2")
			}
			dc.Spec.Strategy = rollout.Strategy(rollout.Options{Strategy: o.Strategy, MaxSurge: o.MaxSurge, MaxUnavailable: o.MaxUnavailable, Hooks: hooks})
			dc.Spec.Template.Spec.Containers[0].Env[0].Value = "1"
		})
		if err != nil {
			r.t.Fatal(err)
		}
		rcName := deployment.Name(name, 2)
		pod := r.waitDeployerRunning(ctx, rcName)
		if err := pause(ctx, between(r.rand, 0, 2500*time.Millisecond)); err != nil {
			r.t.Fatal(err)
		}
		grace := []*int64{nil, ptr.To(int64(0))}[r.rand.IntN(2)]
		err = suite.env.Clientset().CoreV1().Pods(r.ns).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: grace,
			Preconditions:      &metav1.Preconditions{UID: &pod.UID},
		})
		if err != nil {
			r.t.Fatalf("deleting the deployer pod: %v", err)
		}
		r.fault("deleted deployer pod %s (grace %v)", pod.Name, ptr.Deref(grace, -1))
		_, rc, err := suite.dcs.WaitLatestDone(ctx, r.ns, name, 2, rolloutTimeout)
		if err != nil {
			r.t.Fatal(err)
		}
		if phase, reason := deployment.Phase(rc), rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; phase != dcv1.DeploymentPhaseFailed || reason != reasonDeployerPodGone {
			r.t.Errorf("%s ended %s (%q), want Failed (%q)", rc.Name, phase, reason, reasonDeployerPodGone)
		}
		if err := suite.dcs.WaitSettled(ctx, r.ns, name, rolloutTimeout); err != nil {
			r.t.Errorf("the previous version is not back: %v", err)
		}
		if err := suite.dcs.WaitProgressing(ctx, r.ns, name, dcv1.ProgressDeadlineExceededReason, rolloutTimeout); err != nil {
			r.t.Error(err)
		}
	})
}

// waitDeployerRunning waits until a deployment's deployer pod runs and
// the deployment is Running, and returns the pod.
func (r *round) waitDeployerRunning(ctx context.Context, rcName string) *corev1.Pod {
	r.t.Helper()
	var pod *corev1.Pod
	waitFor(r.t, ctx, "the deployer of "+rcName+" to run", rolloutTimeout, func(ctx context.Context) (bool, error) {
		rc, err := suite.env.Clientset().CoreV1().ReplicationControllers(r.ns).Get(ctx, rcName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if deployment.IsTerminal(deployment.Phase(rc)) {
			return false, rollout.Permanent(fmt.Errorf("%s ended %s before its deployer was seen running", rcName, deployment.Phase(rc)))
		}
		pod, err = suite.env.Clientset().CoreV1().Pods(r.ns).Get(ctx, deployment.DeployerPodName(rcName), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return deployment.Phase(rc) == dcv1.DeploymentPhaseRunning && pod.Status.Phase == corev1.PodRunning, nil
	})
	return pod
}
