package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/registry"
)

// addControllerFlag adds --controller, which lets serve run the pod runtime
// alone: dc-controller then runs as processes of its own, e.g. several
// replicas with leader election, or one that chaos tests kill and restart,
// while deployer and hook pods keep running.
func addControllerFlag(fl *pflag.FlagSet, f *serveFlags) {
	fl.BoolVar(&f.controller, "controller", true, "also run dc-controller; with --controller=false serve is only the pod runtime, for a dc-controller run separately")
}

// newController returns what runs dc-controller in serve: its manager's
// Start, or, with --controller=false, a function that only waits for the
// end of serve.
func newController(cfg *rest.Config, f *serveFlags) (func(context.Context) error, error) {
	if !f.controller {
		return func(ctx context.Context) error {
			<-ctx.Done()
			return nil
		}, nil
	}
	if f.imagePollInterval <= 0 {
		return nil, fmt.Errorf("--image-poll-interval %s: want a positive duration", f.imagePollInterval)
	}
	allow, err := registry.ParseNetworks(registry.AllowNetworksFlag, f.allowRegistryNetworks)
	if err != nil {
		return nil, err
	}
	mgr, err := controller.NewManager(controllerConfig(cfg), controller.Options{
		DeployerImage: f.deployerImage,
		Workers:       f.workers,
		MetricsAddr:   f.metricsAddr,
		HealthAddr:    f.healthAddr,
		// The playground's registries are often local ones a user pushes
		// to while trying triggers out, so the interval is a flag here too.
		ImagePollInterval: f.imagePollInterval,
		RegistryNetworks:  registry.NetworkPolicy{Allow: allow},
		// The playground's Prometheus listens on loopback too, and its
		// DeploymentConfigs try rollouts in the controller by annotation.
		AnalysisNetworks:        registry.NetworkPolicy{Allow: allow},
		AllowDeployerModeChoice: true,
	})
	if err != nil {
		return nil, err
	}
	return mgr.Start, nil
}
