package playground

import (
	"context"
	"errors"
)

// ErrNoController is what StartController returns until the playground can
// run dc-controller.
var ErrNoController = errors.New("dc-controller is not part of the playground yet: DeploymentConfigs are stored but not rolled out")

// StartController is where the playground will run dc-controller against
// the cluster, with deployer pods run in-process by dc-deploy and hook pods
// as local processes (kwok leaves both Pending for it; see StageConfig).
// Until then it returns ErrNoController.
func (c *Cluster) StartController(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return ErrNoController
}
