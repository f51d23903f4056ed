package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// blockingHook runs until it is killed the first time; run again (a Retry
// hook's restarted container) it succeeds. It records its PID, as the
// container's main process, in its HOME, which the pod runtime keeps for
// the pod's life. ($$$$ is the shell's $$: the kubelet expands $$ to $ in
// commands.)
const blockingHook = `if [ -e "$HOME/ran" ]; then echo "second run"; exit 0; fi
touch "$HOME/ran"; echo "first run"; echo $$$$ > "$HOME/pid.tmp"; mv "$HOME/pid.tmp" "$HOME/pid"; exec sleep 300`

// How a hook is killed.
const (
	killProcess = "process"
	deletePod   = "pod"
)

// Scenario f: a hook pod is killed while its hook runs: its process is
// killed (as an OOM kill would) or the pod is deleted. The hook's failure
// policy decides: Ignore goes on; Retry reruns a killed container and goes
// on, but a deleted pod fails the rollout; Abort fails it. A failed rollout
// brings the previous version back.
func TestHookKilled(t *testing.T) {
	t.Parallel()
	ensureControllers(t, defaultControllers())
	runRounds(t, "f hook killed", func(r *round) {
		ctx := r.ctx
		name := "hooked"
		point := []string{"pre", "mid", "post"}[r.rand.IntN(3)]
		policy := []dcv1.LifecycleHookFailurePolicy{dcv1.LifecycleHookFailurePolicyAbort, dcv1.LifecycleHookFailurePolicyRetry, dcv1.LifecycleHookFailurePolicyIgnore}[r.rand.IntN(3)]
		mode := []string{killProcess, deletePod}[r.rand.IntN(2)]
		kind := dcv1.DeploymentStrategyTypeRecreate
		if point != "mid" && r.rand.IntN(2) == 0 {
			kind = dcv1.DeploymentStrategyTypeRolling
		}
		r.t.Logf("%s %s hook with failurePolicy %s, killed by %s", kind, point, policy, mode)
		o := rollout.Options{Replicas: 2, Strategy: kind}
		if err := suite.dcs.Create(ctx, rollout.NewDC(r.ns, name, o)); err != nil {
			r.t.Fatal(err)
		}
		if err := r.checkCompleted(ctx, name, 1, 1); err != nil {
			r.t.Fatalf("first rollout: %v", err)
		}
		err := suite.dcs.Update(ctx, r.ns, name, func(dc *dcv1.DeploymentConfig) {
			o.Hooks = map[string]*dcv1.LifecycleHook{point: rollout.ExecHook(policy, blockingHook)}
			dc.Spec.Strategy = rollout.Strategy(o)
			dc.Spec.Template.Spec.Containers[0].Env[0].Value = "1"
		})
		if err != nil {
			r.t.Fatal(err)
		}
		rcName := deployment.Name(name, 2)
		pod, pid := r.waitHookRunning(ctx, deployment.HookPodName(rcName, point))
		if mode == killProcess {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				r.t.Fatalf("killing the hook's process %d: %v", pid, err)
			}
		} else if err := suite.env.Clientset().CoreV1().Pods(r.ns).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}); err != nil {
			r.t.Fatalf("deleting the hook pod: %v", err)
		}
		r.fault("killed the %s hook of %s (%s, failurePolicy %s)", point, rcName, mode, policy)
		_, rc, err := suite.dcs.WaitLatestDone(ctx, r.ns, name, 2, rolloutTimeout)
		if err != nil {
			r.t.Fatal(err)
		}
		goesOn := policy == dcv1.LifecycleHookFailurePolicyIgnore || (policy == dcv1.LifecycleHookFailurePolicyRetry && mode == killProcess)
		want := dcv1.DeploymentPhaseFailed
		if goesOn {
			want = dcv1.DeploymentPhaseComplete
		}
		if phase := deployment.Phase(rc); phase != want {
			r.t.Errorf("%s ended %s (%s), want %s", rc.Name, phase, rc.Annotations[dcv1.DeploymentStatusReasonAnnotation], want)
		}
		r.checkDeployerLog(ctx, rcName, point, policy, mode)
		if err := suite.dcs.WaitSettled(ctx, r.ns, name, rolloutTimeout); err != nil {
			r.t.Errorf("after the rollout: %v", err)
		}
	})
}

// waitHookRunning waits until a hook pod runs its hook's first run, and
// returns the pod and the PID of its process.
func (r *round) waitHookRunning(ctx context.Context, podName string) (*corev1.Pod, int) {
	r.t.Helper()
	dir, err := suite.env.Options.RuntimeDir()
	if err != nil {
		r.t.Fatal(err)
	}
	var pod *corev1.Pod
	var pid int
	waitFor(r.t, ctx, "hook pod "+podName+" to run", rolloutTimeout, func(ctx context.Context) (bool, error) {
		p, err := suite.env.Clientset().CoreV1().Pods(r.ns).Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			return false, rollout.Permanent(fmt.Errorf("hook pod %s ended %s before it was killed", podName, p.Status.Phase))
		}
		home := filepath.Join(dir, "pods", fmt.Sprintf("%s_%s_%s", r.ns, p.Name, p.UID), "home")
		data, err := os.ReadFile(filepath.Join(home, "pid"))
		if err != nil {
			return false, nil
		}
		pod = p
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	return pod, pid
}

// checkDeployerLog checks that the deployer said what happened to the hook.
func (r *round) checkDeployerLog(ctx context.Context, rcName, point string, policy dcv1.LifecycleHookFailurePolicy, mode string) {
	r.t.Helper()
	log, err := suite.env.Cluster.DeployerLog(ctx, r.ns, rcName)
	if err != nil {
		r.t.Errorf("reading the deployer's log: %v", err)
		return
	}
	var want string
	switch {
	case policy == dcv1.LifecycleHookFailurePolicyRetry && mode == killProcess:
		want = fmt.Sprintf("--> %s: Retrying hook pod (retry #1)", point)
	case policy == dcv1.LifecycleHookFailurePolicyIgnore:
		want = fmt.Sprintf("--> %s: Warning", point)
	default:
		want = fmt.Sprintf("--> %s: Failed", point)
	}
	if !strings.Contains(log, want) {
		r.t.Errorf("the deployer's log of %s lacks %q:\n%s", rcName, want, log)
	}
}
