package controller

import dcv1 "github.com/deployconfig/deployconfig/api/v1"

// AllowDeployerModeChoiceFlag is the dc-controller flag that lets a
// DeploymentConfig's deployer-mode annotation run its rollouts in the
// controller when the controller's --deployer-mode is pod.
const AllowDeployerModeChoiceFlag = "--allow-deployer-mode-annotation"

// runsInControllerUnder is runsInController with the cluster admin's say:
// a rollout run in the controller acts (queries an analysis's Prometheus,
// writes routes) from dc-controller's place in the network and with its
// rights, so under DeployerModePod a DeploymentConfig's annotation can
// only keep its rollouts in pods, unless the admin lets authors choose
// (AllowDeployerModeChoiceFlag). Under DeployerModeControllerWhenPossible
// the annotation may still ask for a pod.
func runsInControllerUnder(mode DeployerMode, authorsChoose bool, dc *dcv1.DeploymentConfig) (bool, error) {
	inController, err := runsInController(mode, dc)
	if mode == DeployerModePod && !authorsChoose {
		return false, err
	}
	return inController, err
}
