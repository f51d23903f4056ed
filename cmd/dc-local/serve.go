package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/deployconfig/deployconfig/internal/dev/playground"
	"github.com/deployconfig/deployconfig/internal/dev/podruntime"
	"github.com/deployconfig/deployconfig/internal/imagetrigger"
	"github.com/deployconfig/deployconfig/internal/registry"
)

const (
	// localDeployerImage is the deployer image of the playground's deployer
	// pods; the pod runtime runs them in-process.
	localDeployerImage = "deployconfig.io/deployer:local"
	// releasedDeployerImage is the image dc-controller uses by default; a
	// manifest that names it runs in-process too.
	releasedDeployerImage = "ghcr.io/deployconfig/dc-deploy"
	// Client limits of the controller: kube-controller-manager's, as
	// dc-controller's defaults, so that rollouts compare fairly with
	// Deployments.
	controllerQPS   = 20
	controllerBurst = 30
)

// playgroundRegistryNetworks are the networks the playground's dc-controller
// may reach registries on: loopback, where a user's local registry listens.
const playgroundRegistryNetworks = "127.0.0.0/8,::1/128"

// serveFlags are the flags of `dc-local serve`.
type serveFlags struct {
	deployerImage string
	workers       int
	metricsAddr   string
	healthAddr    string
	impersonate   bool
	runtimeQPS    float32
	runtimeBurst  int
	verbosity     int
	// imagePollInterval is dc-controller's --image-poll-interval.
	imagePollInterval time.Duration
	// allowRegistryNetworks is dc-controller's --allow-registry-networks.
	allowRegistryNetworks string
	// controller runs dc-controller in serve; without it serve is only
	// the pod runtime (see serve_controller.go).
	controller bool
	// prometheus runs a Prometheus and the exporter it scrapes, for the
	// playground's analysis rollouts.
	prometheus bool
}

func newServeCommand(g *globalFlags) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run dc-controller and the local pod runtime against the playground cluster",
		Long: `serve runs, in the foreground, what makes the playground roll out
DeploymentConfigs: dc-controller, and the local pod runtime that runs
deployer pods (dc-deploy in-process) and hook pods (their command as a local
process), writing their status and logs as a kubelet would.

'dc-local up' starts it in the background (log: ~/.kwok/clusters/NAME/serve.log)
and 'dc-local down' stops it; run it by hand to watch its log, after
stopping the background one. Only one runs per cluster.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.deployerImage, "deployer-image", localDeployerImage, "image of deployer pods; the runtime runs it as dc-deploy in-process")
	fl.IntVar(&f.workers, "workers", 5, "concurrent syncs per controller")
	fl.StringVar(&f.metricsAddr, "metrics-bind-address", "0", "address of dc-controller's metrics endpoint; 0 turns it off")
	fl.StringVar(&f.healthAddr, "health-probe-bind-address", "0", "address of dc-controller's /healthz and /readyz; 0 turns them off")
	fl.BoolVar(&f.impersonate, "impersonate-service-accounts", true, "deployer and hook pods act as their service account, with its permissions, as in a real cluster")
	fl.Float32Var(&f.runtimeQPS, "runtime-kube-api-qps", 50, "queries per second of the pod runtime's own client (a kubelet's default)")
	fl.IntVar(&f.runtimeBurst, "runtime-kube-api-burst", 100, "burst of the pod runtime's own client (a kubelet's default)")
	fl.IntVar(&f.verbosity, "log-level", 0, "log verbosity (0: info, higher: more detail)")
	fl.DurationVar(&f.imagePollInterval, "image-poll-interval", imagetrigger.DefaultPollInterval, "how often dc-controller looks up each registry tag an ImageChange trigger watches")
	fl.StringVar(&f.allowRegistryNetworks, strings.TrimPrefix(registry.AllowNetworksFlag, "--"), playgroundRegistryNetworks,
		"comma-separated CIDRs dc-controller's registry requests may connect to although loopback, link-local or private; the playground allows loopback, where local registries listen")
	fl.BoolVar(&f.prometheus, "prometheus", false, "run Prometheus (bin/prometheus) on loopback, scraping an exporter of app_requests_total whose traffic dc-local up sets, for the analysis sample")
	addControllerFlag(fl, f)
	return cmd
}

// runServe runs the controller and the runtime until ctx ends or one of
// them fails.
func runServe(ctx context.Context, g *globalFlags, f *serveFlags) error {
	o, err := g.options(os.Stderr)
	if err != nil {
		return err
	}
	if exists, err := playground.Exists(o); err != nil || !exists {
		return errors.Join(err, fmt.Errorf("playground %q does not exist: run dc-local up", g.name))
	}
	release, err := playground.HoldServerLock(o)
	if err != nil {
		return err
	}
	defer release()
	// A log file for people: plain lines, no stack traces for errors that
	// are retried anyway.
	log := zap.New(zap.Level(zapcore.Level(-f.verbosity)), zap.ConsoleEncoder(), zap.StacktraceLevel(zapcore.DPanicLevel))
	// controller-runtime logs through its package logger; set it once, here.
	ctrl.SetLogger(log)
	kubeconfig, err := o.KubeconfigPath()
	if err != nil {
		return err
	}
	stateDir, err := o.RuntimeDir()
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
	}
	runController, err := newController(cfg, f)
	if err != nil {
		return err
	}
	rt, err := podruntime.New(podruntime.Options{
		Config:                     cfg,
		Kubeconfig:                 kubeconfig,
		StateDir:                   stateDir,
		BinDir:                     o.BinDir,
		Deploy:                     podruntime.DeployInProcess,
		DeployerImages:             []string{f.deployerImage, releasedDeployerImage},
		NodeSelector:               labels.SelectorFromSet(labels.Set{playground.FakeNodeLabel: playground.FakeNodeLabelValue}),
		ImpersonateServiceAccounts: f.impersonate,
		QPS:                        f.runtimeQPS,
		Burst:                      f.runtimeBurst,
		Log:                        log.WithName("runtime"),
	})
	if err != nil {
		return err
	}
	if f.prometheus {
		stop, err := playground.StartPrometheus(ctx, o)
		if err != nil {
			// The rest of the playground works without it.
			log.Error(err, "not running prometheus: the analysis sample cannot be measured")
		} else {
			defer stop()
		}
	}
	log.Info("dc-local serve", "cluster", o.Name, "pid", os.Getpid(), "deployerImage", f.deployerImage, "controller", f.controller, "prometheus", f.prometheus)
	return runBoth(ctx, log, runController, rt.Run, func(ctx context.Context) error {
		return watchCluster(ctx, o, clusterCheckInterval)
	})
}

// clusterCheckInterval is how often serve checks that its cluster exists.
const clusterCheckInterval = 5 * time.Second

// errClusterGone stops serve when its cluster was removed without it, e.g.
// by kwokctl delete cluster: a server without a cluster would only log
// connection errors for ever.
var errClusterGone = errors.New("the playground cluster was removed; stopping")

// watchCluster returns errClusterGone once the cluster no longer exists,
// or nil when ctx ends.
func watchCluster(ctx context.Context, o playground.Options, every time.Duration) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if exists, err := playground.Exists(o); err == nil && !exists {
			return errClusterGone
		}
	}
}

// runBoth runs the functions until ctx ends or one of them returns; then
// it stops the other and waits for it. It returns the first error.
func runBoth(ctx context.Context, log logr.Logger, fns ...func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			errs[i] = fn(ctx)
			cancel()
		})
	}
	wg.Wait()
	log.Info("dc-local serve stopped")
	return errors.Join(errs...)
}

// controllerConfig is the controller's client configuration.
func controllerConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst, c.RateLimiter = controllerQPS, controllerBurst, nil
	c.UserAgent = "dc-controller"
	return c
}
