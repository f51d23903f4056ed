package chaos

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/clusterenv"
)

// deployerMode is the --deployer-mode the run gives dc-controller (the
// -deployer-mode flag), and what it means for the rollouts the scenarios
// start. make chaos and make test-chaos run the suite once in each mode.
type deployerMode struct {
	// flag is the flag's value; empty runs dc-controller with its default,
	// pod.
	flag string
}

// validate refuses a mode dc-controller does not know, before a cluster
// is made for nothing.
func (m deployerMode) validate() error {
	switch m.flag {
	case "", dcv1.DeployerModePod, dcv1.DeployerModeControllerWhenPossible:
		return nil
	}
	return fmt.Errorf("-deployer-mode=%q: want %s or %s", m.flag, dcv1.DeployerModePod, dcv1.DeployerModeControllerWhenPossible)
}

// label names the mode in the tally's last line.
func (m deployerMode) label() string {
	if m.flag == "" {
		return dcv1.DeployerModePod
	}
	return m.flag
}

func (m deployerMode) String() string {
	if m.flag == "" {
		return dcv1.DeployerModePod + " (dc-controller's default)"
	}
	return m.flag
}

// replayArg is the flag that replays a round in this mode.
func (m deployerMode) replayArg() string {
	if m.flag == "" {
		return ""
	}
	return " -deployer-mode=" + m.flag
}

// inController reports whether dc-controller runs the rollouts that need
// no container itself.
func (m deployerMode) inController() bool {
	return m.flag == dcv1.DeployerModeControllerWhenPossible
}

// controllers is spec with the run's deployer mode.
func (m deployerMode) controllers(spec clusterenv.ControllerSpec) clusterenv.ControllerSpec {
	spec.DeployerMode = m.flag
	return spec
}

// runsInController reports whether a rollout of dc belongs in
// dc-controller in this mode: it does when the mode, or dc's own
// dcv1.DeployerModeAnnotation, is controller-when-possible and the rollout
// needs no container of its own.
func (m deployerMode) runsInController(dc *dcv1.DeploymentConfig) bool {
	if own := (deployerMode{flag: dc.Annotations[dcv1.DeployerModeAnnotation]}); own.flag != "" && own.validate() == nil {
		m = own
	}
	return m.inController() && !deployment.NeedsPod(&dc.Spec.Strategy)
}

// checkRunner checks that a deployment ran where the run's deployer mode
// puts it, and in one place only: a deployment that said dc-controller runs
// it never had a deployer pod, and says so only when it belongs in
// dc-controller; a Complete one that belongs there ran there. rc must come
// from the API server, which keeps the encoded DeploymentConfig.
func (r *round) checkRunner(rc *corev1.ReplicationController) error {
	dc, err := deployment.DecodeConfig(rc)
	if err != nil {
		return fmt.Errorf("checking where %s ran: %w", rc.Name, err)
	}
	// The tracker may not have seen rc's last update yet; rc itself says
	// what it says now.
	inController := r.tracker.ranInController(rc.Name) || deployment.RunsInController(rc)
	pods := r.tracker.deployerPods(rc.Name)
	want := suite.mode.runsInController(dc)
	switch {
	case inController && pods > 0:
		return fmt.Errorf("%s ran in dc-controller and had %d deployer pod(s): it ran twice", rc.Name, pods)
	case inController && !want:
		return fmt.Errorf("%s ran in dc-controller, but in deployer mode %s (needs a pod: %t) it belongs in a deployer pod",
			rc.Name, suite.mode, deployment.NeedsPod(&dc.Spec.Strategy))
	case want && !inController && deployment.Phase(rc) == dcv1.DeploymentPhaseComplete:
		return fmt.Errorf("%s is Complete but never said it ran in dc-controller (%d deployer pod(s)), in deployer mode %s", rc.Name, pods, suite.mode)
	}
	return nil
}
