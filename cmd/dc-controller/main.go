// Command dc-controller runs the DeploymentConfig and deployer controllers.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	// Mozilla's CA roots, for registries over TLS in images without a
	// CA bundle (used only when the system has no roots).
	_ "golang.org/x/crypto/x509roots/fallback"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/heapgoal"
	"github.com/deployconfig/deployconfig/internal/imagetrigger"
	"github.com/deployconfig/deployconfig/internal/registry"
	"github.com/deployconfig/deployconfig/internal/version"
)

// defaultDeployerImage is the image that ships dc-deploy (and a shell, and
// openshift-deploy): internal/dev/imagebuild's deployconfig/dc-deploy.
const defaultDeployerImage = "ghcr.io/deployconfig/dc-deploy:latest"

// gcInterval is how often dc-controller reads its live heap to size the
// collector's headroom. The cache fills within seconds of a start, and a
// GOGC sized for the heap of a few seconds before lets the heap overshoot by
// as many headrooms as the heap has doubled since; reading the heap costs
// microseconds, and GOGC is set only when it changes.
const gcInterval = time.Second

func main() {
	if os.Getenv("GOGC") == "" {
		tuner := heapgoal.New(controller.MinGCPercent, controller.DefaultGCPercent, controller.GCHeadroom, gcInterval, clock.RealClock{})
		go tuner.Run(context.Background())
	}
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "dc-controller: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		opts         controller.Options
		kubeconfig   string
		namespaces   string
		qps          float64
		burst        int
		allowNets    string
		denyNets     string
		deployerMode string
		allowQuery   string
		denyQuery    string
	)
	fs := flag.NewFlagSet("dc-controller", flag.ContinueOnError)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig; empty means in-cluster or $KUBECONFIG.")
	fs.StringVar(&opts.DeployerImage, "deployer-image", defaultDeployerImage, "Image of deployer pods (a strategy's customParams.image overrides it).")
	fs.IntVar(&opts.Workers, "workers", 5, "Concurrent syncs per controller.")
	fs.StringVar(&namespaces, "namespaces", "", "Comma-separated namespaces to watch; empty means all.")
	// kube-controller-manager's defaults, so that rollouts compare fairly with Deployments.
	fs.Float64Var(&qps, "kube-api-qps", 20, "Client queries per second to the API server.")
	fs.IntVar(&burst, "kube-api-burst", 30, "Client burst to the API server.")
	fs.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080", "Address of the metrics endpoint; 0 turns it off.")
	fs.StringVar(&opts.HealthAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz; 0 turns them off.")
	fs.IntVar(&opts.RolloutLimits.Max, "max-rollouts", 0, "How many rollouts may run at once in the cluster; more wait, first come first served (0: no limit).")
	fs.IntVar(&opts.RolloutLimits.MaxPerNamespace, "max-rollouts-per-namespace", 0, "How many rollouts may run at once in one namespace (0: no limit).")
	fs.BoolVar(&opts.RolloutLimits.HaltOnFailure, "halt-rollouts-on-failure", false, "Start no rollout while the latest rollout of another DeploymentConfig has failed (until it rolls out again, is cancelled or deleted).")
	fs.DurationVar(&opts.SnapshotSecretInterval, "snapshot-secret-interval", controller.DefaultSnapshotSecretInterval, "How often a DeploymentConfig whose configSnapshots follow Secrets reads them to see a change (Secrets are read by name, never watched).")
	fs.DurationVar(&opts.ImagePollInterval, "image-poll-interval", imagetrigger.DefaultPollInterval, "How often each registry tag an ImageChange trigger watches is looked up (jittered; backs off from failing registries).")
	fs.StringVar(&allowNets, strings.TrimPrefix(registry.AllowNetworksFlag, "--"), "", "Comma-separated CIDRs that image-trigger registry requests may connect to although they are loopback, link-local or private (refused by default: a trigger's registry is user input); e.g. the CIDR of an in-cluster registry.")
	fs.StringVar(&denyNets, strings.TrimPrefix(registry.DenyNetworksFlag, "--"), "", "Comma-separated CIDRs image-trigger registry requests never connect to, over --allow-registry-networks: e.g. a cluster's service or pod range outside the private ranges.")
	fs.StringVar(&allowQuery, strings.TrimPrefix(controller.AllowAnalysisNetworksFlag, "--"), "", "Comma-separated CIDRs that the queries of analyses run in dc-controller may connect to although they are loopback, link-local or private (refused by default: a Prometheus address is user input); e.g. the CIDR of an in-cluster Prometheus.")
	fs.StringVar(&denyQuery, strings.TrimPrefix(controller.DenyAnalysisNetworksFlag, "--"), "", "Comma-separated CIDRs analysis queries never connect to, over --allow-analysis-networks (--deny-registry-networks holds for them too).")
	fs.BoolVar(&opts.AllowDeployerModeChoice, strings.TrimPrefix(controller.AllowDeployerModeChoiceFlag, "--"), false, "Let a DeploymentConfig's deployconfig.io/deployer-mode annotation run its rollouts in dc-controller under --deployer-mode=pod; without it the annotation can only keep them in pods.")
	fs.StringVar(&opts.PprofAddr, "pprof-bind-address", "0", "Address of net/http/pprof (profiles of CPU, heap, goroutines); 0 turns it off.")
	fs.StringVar(&deployerMode, "deployer-mode", string(controller.DeployerModePod), "Where rollouts run: pod (a deployer pod each, as OpenShift does) or controller-when-possible (in the leading dc-controller when the rollout needs no container: no Custom strategy, customParams or execNewPod hook). A DeploymentConfig's deployconfig.io/deployer-mode annotation may ask for a pod, or, with --allow-deployer-mode-annotation, for the controller.")
	fs.IntVar(&opts.MaxControllerRollouts, "max-controller-rollouts", controller.DefaultMaxControllerRollouts, "How many rollouts the leader runs in itself at once; more wait (New) for a free slot.")
	fs.Float64Var(&opts.ControllerRolloutQPS, "controller-rollout-qps", 0, fmt.Sprintf("Writes per second that the rollouts the leader runs in itself share; 0 gives them %d each, as a deployer pod has, and never fewer in all than --kube-api-qps.", controller.DeployerPodQPS))
	fs.BoolVar(&opts.LeaderElection, "leader-elect", false, "Elect one active replica through a Lease.")
	fs.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election Lease (default: the pod's namespace).")
	showVersion := fs.Bool("version", false, "Print the version, commit and Go version, and exit.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	err := fs.Parse(os.Args[1:])
	if err != nil {
		return err
	}
	if *showVersion {
		fmt.Println("dc-controller", version.Get())
		return nil
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	if opts.RegistryNetworks.Allow, err = registry.ParseNetworks(registry.AllowNetworksFlag, allowNets); err != nil {
		return err
	}
	if opts.RegistryNetworks.Deny, err = registry.ParseNetworks(registry.DenyNetworksFlag, denyNets); err != nil {
		return err
	}
	if opts.AnalysisNetworks.Allow, err = registry.ParseNetworks(controller.AllowAnalysisNetworksFlag, allowQuery); err != nil {
		return err
	}
	if opts.AnalysisNetworks.Deny, err = registry.ParseNetworks(controller.DenyAnalysisNetworksFlag, denyQuery); err != nil {
		return err
	}
	if opts.DeployerMode, err = controller.ParseDeployerMode("--deployer-mode", deployerMode); err != nil {
		return err
	}
	if opts.ControllerRolloutQPS < 0 {
		return fmt.Errorf("--controller-rollout-qps: %g is not a rate (expected 0, to follow the rollouts in flight, or a positive number of writes per second)", opts.ControllerRolloutQPS)
	}
	if opts.MaxControllerRollouts < 1 {
		return fmt.Errorf("--max-controller-rollouts: %d is not a positive number of rollouts", opts.MaxControllerRollouts)
	}

	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	loading.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(qps), burst
	cfg.UserAgent = "dc-controller"
	if namespaces != "" {
		opts.Namespaces = strings.Split(namespaces, ",")
	}
	mgr, err := controller.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
