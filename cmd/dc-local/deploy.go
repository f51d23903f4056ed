package main

import (
	"context"

	"github.com/deployconfig/deployconfig/internal/deployer"
	"github.com/deployconfig/deployconfig/internal/podruntime"
)

// deployInProcess is the pod runtime's DeployFunc: dc-deploy's arguments and
// environment, read as the binary reads them, run in-process with the pod's
// own client configuration.
func deployInProcess(ctx context.Context, run podruntime.DeployerRun) error {
	opts, err := deployer.ParseArgs(run.Args, run.Getenv)
	if err != nil {
		return err
	}
	opts.Out = run.Stdout
	opts.Config = run.Config
	opts.Log = run.Log
	return deployer.Run(ctx, opts)
}
