package nodebench

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// controllerArgs are dc-controller's extra arguments for the deployer
// mode: none for pod mode, its default, so that the run states only what
// it changes.
func controllerArgs(mode string) []string {
	if mode == dcv1.DeployerModePod {
		return nil
	}
	return []string{"--deployer-mode=" + mode}
}

// rolloutDCInController starts rollout version of the DC with start and
// times it when dc-controller runs it: trigger → the RC seen
// Complete. A deployer pod seen for it, or an RC Complete without the
// controller's runner annotation, fails the sample: it would be a pod-mode
// figure in an in-controller report.
func (m *measurer) rolloutDCInController(ctx context.Context, version int64, start trigger) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	rcName := deployment.Name(dcName, version)
	pods, err := m.watchName(ctx, "pods", deployment.DeployerPodName(rcName))
	if err != nil {
		return Sample{}, err
	}
	defer pods.Stop()
	rcs, err := m.watchName(ctx, "replicationcontrollers", rcName)
	if err != nil {
		return Sample{}, err
	}
	defer rcs.Stop()
	t0, err := start(ctx)
	if err != nil {
		return Sample{}, err
	}
	s := Sample{System: SystemDC, InController: true}
	for {
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("rollout %s: not complete after %s", rcName, m.timeout)
		case ev, ok := <-pods.ResultChan():
			if !ok {
				return s, fmt.Errorf("rollout %s: the watch of its deployer pod ended", rcName)
			}
			if _, isPod := ev.Object.(*corev1.Pod); isPod {
				return s, fmt.Errorf("rollout %s: a deployer pod was created, but dc-controller should run it itself", rcName)
			}
		case ev, ok := <-rcs.ResultChan():
			if !ok {
				return s, fmt.Errorf("rollout %s: the watch of its RC ended", rcName)
			}
			rc, isRC := ev.Object.(*corev1.ReplicationController)
			if !isRC {
				continue
			}
			if done, err := inControllerDone(rc, rcName); done || err != nil {
				s.Complete = time.Since(t0).Seconds()
				return s, err
			}
		}
	}
}

// inControllerDone reports whether the in-controller rollout of rc has
// ended, with an error when it failed or was not run by the controller.
func inControllerDone(rc *corev1.ReplicationController, rcName string) (bool, error) {
	switch deployment.Phase(rc) {
	case dcv1.DeploymentPhaseComplete:
		if runner := deployment.ProgressOf(rc).Runner.Kind; runner != deployment.RunnerController {
			return true, fmt.Errorf("rollout %s: Complete, but its runner is %q, not %q: it did not run in the controller",
				rcName, runner, deployment.RunnerController)
		}
		return true, nil
	case dcv1.DeploymentPhaseFailed:
		return true, fmt.Errorf("rollout %s failed: %s", rcName, rc.Annotations[dcv1.DeploymentStatusReasonAnnotation])
	}
	return false, nil
}
