package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// Scenario h: a sample of the crash-point harness's cases, on a real API
// server. A canary with two pauses, or a blue-green rollout, has its runner
// killed just after its k-th write of the progress record, k at random; a
// person promotes every wait with `kubectl dc rollout promote`.
//   - In deployer mode controller-when-possible the runner is the leading
//     dc-controller, SIGKILLed and started again. The new leader resumes
//     the rollout where it was: it completes with no promote asked twice,
//     each promote consumed, the new version never scaled down and the
//     active Service never back on the old one once it left it.
//   - In pod mode the runner is the deployer pod, deleted: the rollout
//     fails and falls back, and `kubectl dc rollout retry` then completes
//     it.
func TestCrashPoints(t *testing.T) {
	ensureControllers(t, defaultControllers())
	runRounds(t, "h crash points", func(r *round) {
		c := crashPointCase{blueGreen: r.rand.IntN(2) == 0}
		c.at = 1 + r.rand.IntN(c.writes())
		if err := r.crashPoint(c); err != nil {
			r.t.Error(err)
		}
	})
}

// crashPointCase is one case of scenario h: the strategy, and the write
// of the record the runner is killed after.
type crashPointCase struct {
	blueGreen bool
	at        int
}

// writes is about how many writes of the record an uninterrupted run of
// the case makes: the kill lands at one of them.
func (c crashPointCase) writes() int {
	if c.blueGreen {
		return 5
	}
	return 11
}

// waits is how many times the case waits for a person.
func (c crashPointCase) waits() int {
	if c.blueGreen {
		return 1
	}
	return 2
}

// crashPointName is scenario h's DeploymentConfig, and its active Service.
const crashPointName = "crash"

// crashPointDC is scenario h's DeploymentConfig for c.
func crashPointDC(ns string, c crashPointCase) *dcv1.DeploymentConfig {
	dc := rollout.NewDC(ns, crashPointName, rollout.Options{Replicas: 4, MaxSurge: "1", MaxUnavailable: "0"})
	if c.blueGreen {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen, BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
			ActiveService: crashPointName, PreviewService: crashPointName + "-preview", TimeoutSeconds: ptr.To(int64(rollout.StrategyTimeout)),
		}}
		return dc
	}
	pause := dcv1.RollingStep{Pause: &dcv1.RolloutPause{}}
	dc.Spec.Strategy.RollingParams.Steps = []dcv1.RollingStep{{SetWeight: ptr.To(int32(25))}, pause, {SetWeight: ptr.To(int32(75))}, pause}
	return dc
}

// crashPoint runs one case of scenario h and checks how it ended.
func (r *round) crashPoint(c crashPointCase) error {
	ctx := r.ctx
	if c.blueGreen {
		if err := r.crashPointServices(ctx); err != nil {
			return err
		}
	}
	if err := suite.dcs.Create(ctx, crashPointDC(r.ns, c)); err != nil {
		return err
	}
	if err := r.checkCompleted(ctx, crashPointName, 1, 1); err != nil {
		return fmt.Errorf("first rollout: %w", err)
	}
	to := deployment.Name(crashPointName, 2)
	seen, err := watchRC(ctx, r.ns, to)
	if err != nil {
		return err
	}
	active, err := watchActive(ctx, r.ns)
	if err != nil {
		return err
	}
	promoting, stopPromoting := context.WithCancel(ctx)
	promotes := make(chan int, 1)
	go func() { promotes <- r.promoteEachWait(promoting, to) }()
	if err := suite.dcs.ChangeConfig(ctx, r.ns, crashPointName); err != nil {
		stopPromoting()
		return err
	}
	killed, err := r.killRunnerAt(ctx, to, c.at)
	if err != nil {
		stopPromoting()
		return err
	}
	if killed && !suite.mode.inController() {
		err = r.checkRetried(ctx, to)
	} else {
		err = r.checkCompleted(ctx, crashPointName, 2, 2)
	}
	stopPromoting()
	asked := <-promotes
	if err != nil {
		return fmt.Errorf("killed after write %d: %w", c.at, err)
	}
	rc, err := suite.env.Clientset().CoreV1().ReplicationControllers(r.ns).Get(ctx, to, metav1.GetOptions{})
	if err != nil {
		return err
	}
	r.t.Logf("case %+v: killed %v; %s ended with the record %s", c, killed, to, deployment.ProgressOf(rc).Encode())
	if !killed || !suite.mode.inController() {
		return nil // retried, or done before the write: it starts over
	}
	return checkResumed(c, rc, asked, seen.Stop(), active.Stop())
}

// checkRetried checks a rollout retried once after its deployer pod was
// deleted: it completed, with one deployer pod per attempt.
func (r *round) checkRetried(ctx context.Context, rc string) error {
	_, got, err := suite.dcs.WaitLatestDone(ctx, r.ns, crashPointName, 2, rolloutTimeout)
	if err != nil {
		return err
	}
	if phase := deployment.Phase(got); phase != dcv1.DeploymentPhaseComplete {
		return fmt.Errorf("%s ended %s after its retry: %s", rc, phase, got.Annotations[dcv1.DeploymentStatusReasonAnnotation])
	}
	if n := r.tracker.deployerPods(rc); n > 2 {
		return fmt.Errorf("%s had %d deployer pods for 2 attempts", rc, n)
	}
	return suite.dcs.WaitSettled(ctx, r.ns, crashPointName, rolloutTimeout)
}

// checkResumed checks a rollout resumed after its runner was killed.
func checkResumed(c crashPointCase, rc *corev1.ReplicationController, asked int, replicas []int32, active []string) error {
	where := fmt.Sprintf("killed after write %d", c.at)
	p := deployment.ProgressOf(rc)
	if asked != c.waits() || len(p.Consumed) != asked {
		return fmt.Errorf("%s: %d promotes asked and %d consumed, want %d of each: %s", where, asked, len(p.Consumed), c.waits(), p.Encode())
	}
	for i := 1; i < len(replicas); i++ {
		if replicas[i] < replicas[i-1] {
			return fmt.Errorf("%s: %s was scaled down on the way: %v", where, rc.Name, replicas)
		}
	}
	for i, s := range active {
		if s == rc.Name && i+1 < len(active) {
			return fmt.Errorf("%s: the active Service went back after selecting %s: %v", where, rc.Name, active)
		}
	}
	return nil
}

// crashPointServices creates the blue-green rollout's Services.
func (r *round) crashPointServices(ctx context.Context) error {
	for _, name := range []string{crashPointName, crashPointName + "-preview"} {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": crashPointName},
				Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}
		if _, err := suite.env.Clientset().CoreV1().Services(r.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating service %s: %w", name, err)
		}
	}
	return nil
}

// killRunnerAt kills the runner of deployment rc once its record has had
// at writes (see TestCrashPoints), and in pod mode retries the failed
// rollout. It reports false when the rollout ended first.
func (r *round) killRunnerAt(ctx context.Context, rc string, at int) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, rolloutTimeout)
	defer cancel()
	w, err := suite.env.Clientset().CoreV1().ReplicationControllers(r.ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + rc})
	if err != nil {
		return false, err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		got, ok := ev.Object.(*corev1.ReplicationController)
		if !ok {
			continue
		}
		if deployment.IsTerminal(deployment.Phase(got)) {
			return false, nil
		}
		if deployment.ProgressOf(got).Seq < int64(at) {
			continue
		}
		if suite.mode.inController() {
			return true, r.killLeader(ctx, rc, at)
		}
		return true, r.deleteDeployerAndRetry(ctx, rc, at)
	}
	return false, fmt.Errorf("%s: no write %d of its record within %s (watch: %v)", rc, at, rolloutTimeout, ctx.Err())
}

// killLeader SIGKILLs dc-controller and starts it again.
func (r *round) killLeader(ctx context.Context, rc string, at int) error {
	replicas := suite.env.Controllers.Replicas()
	if len(replicas) == 0 {
		return fmt.Errorf("no dc-controller replica to kill")
	}
	victim := replicas[0]
	if err := victim.Kill(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("killing %s: %w", victim.Name, err)
	}
	r.fault("SIGKILL %s, running %s, after write %d of its record", victim.Name, rc, at)
	return victim.Start(context.WithoutCancel(ctx))
}

// deleteDeployerAndRetry deletes the deployer pod of rc at once, waits
// for the rollout to fail, and retries it.
func (r *round) deleteDeployerAndRetry(ctx context.Context, rc string, at int) error {
	pods := suite.env.Clientset().CoreV1().Pods(r.ns)
	err := pods.Delete(ctx, deployment.DeployerPodName(rc), metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the deployer pod of %s: %w", rc, err)
	}
	r.fault("deleted the deployer pod of %s after write %d of its record", rc, at)
	_, got, err := suite.dcs.WaitLatestDone(ctx, r.ns, crashPointName, 2, rolloutTimeout)
	if err != nil {
		return err
	}
	if deployment.Phase(got) == dcv1.DeploymentPhaseComplete {
		return nil // it was done with its last write
	}
	_, stderr, err := suite.dcs.KubectlDC(ctx, r.ns, "rollout", "retry", crashPointName)
	if err != nil {
		return fmt.Errorf("kubectl dc rollout retry: %w: %s", err, stderr)
	}
	return nil
}

// promoteEachWait plays the person who promotes: whenever deployment rc
// waits for a person and no pending request answers the wait, it runs
// `kubectl dc rollout promote`. It returns how many promotes it ran.
func (r *round) promoteEachWait(ctx context.Context, rc string) int {
	asked := 0
	for ctx.Err() == nil {
		got, err := suite.env.Clientset().CoreV1().ReplicationControllers(r.ns).Get(ctx, rc, metav1.GetOptions{})
		if err == nil {
			if w, waits := deployment.AwaitingPerson(got); waits {
				if _, answered := deployment.Pending(got, deployment.ProgressOf(got), w.Gate); !answered {
					if _, _, err := suite.dcs.KubectlDC(ctx, r.ns, "rollout", "promote", crashPointName); err == nil {
						asked++
					}
				}
			}
		}
		_ = pause(ctx, 100*time.Millisecond)
	}
	return asked
}

// watchRC records the replicas deployment rc is scaled to.
func watchRC(ctx context.Context, ns, rc string) (*rollout.History[int32], error) {
	w, err := suite.env.Clientset().CoreV1().ReplicationControllers(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + rc})
	if err != nil {
		return nil, err
	}
	return rollout.Record(ctx, w, func(obj runtime.Object) (int32, bool) {
		got, ok := obj.(*corev1.ReplicationController)
		if !ok {
			return 0, false
		}
		return deployment.Replicas(got), true
	}), nil
}

// watchActive records the deployment the active Service selects.
func watchActive(ctx context.Context, ns string) (*rollout.History[string], error) {
	w, err := suite.env.Clientset().CoreV1().Services(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + crashPointName})
	if err != nil {
		return nil, err
	}
	return rollout.Record(ctx, w, func(obj runtime.Object) (string, bool) {
		svc, ok := obj.(*corev1.Service)
		if !ok {
			return "", false
		}
		return svc.Spec.Selector[dcv1.DeploymentSelectorLabel], true
	}), nil
}
