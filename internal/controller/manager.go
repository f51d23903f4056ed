// Package controller implements dc-controller: the DeploymentConfig
// controller, which turns DeploymentConfigs into versioned deployments
// (ReplicationControllers), and the deployer controller, which runs each
// deployment's deployer pod and follows it to Complete or Failed.
package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/imagetrigger"
	"github.com/deployconfig/deployconfig/internal/registry"
)

// Options configure dc-controller.
type Options struct {
	// DeployerImage is the image of deployer pods.
	DeployerImage string
	// Workers is the number of concurrent syncs of each controller.
	Workers int
	// Namespaces limits the controller to these namespaces; empty means all.
	Namespaces []string
	// MetricsAddr and HealthAddr are where metrics and /healthz, /readyz are
	// served; "0" turns a server off.
	MetricsAddr string
	HealthAddr  string
	// PprofAddr serves net/http/pprof for profiling; "" or "0" is off.
	PprofAddr string
	// LeaderElection makes replicas elect one active controller through a
	// Lease in LeaderElectionNamespace.
	LeaderElection          bool
	LeaderElectionNamespace string
	// Clock is the time source; nil means the real clock.
	Clock clock.PassiveClock
	// ImagePollInterval is how often the image-trigger controller looks up
	// each watched registry tag; zero means imagetrigger.DefaultPollInterval.
	ImagePollInterval time.Duration
	// RegistryNetworks says which addresses the image-trigger controller's
	// registry requests may connect to; the zero value refuses loopback,
	// link-local and private networks (see registry.NetworkPolicy).
	RegistryNetworks registry.NetworkPolicy
	// AnalysisNetworks says which addresses the queries of the analyses
	// of rollouts run in the controller may connect to; the zero value
	// refuses the same networks as RegistryNetworks, whose Deny also
	// holds for it.
	AnalysisNetworks registry.NetworkPolicy
	// AllowDeployerModeChoice lets a DeploymentConfig's deployer-mode
	// annotation run its rollouts in the controller although DeployerMode
	// is DeployerModePod; without it the annotation can only keep them in
	// pods.
	AllowDeployerModeChoice bool
	// SnapshotSecretInterval is how often a DeploymentConfig whose
	// configuration snapshots follow Secrets looks at them; zero means
	// DefaultSnapshotSecretInterval.
	SnapshotSecretInterval time.Duration
	// RolloutLimits cap how many rollouts run at once; the zero value
	// caps nothing.
	RolloutLimits RolloutLimits
	// DeployerMode says where rollouts run (a DeploymentConfig's
	// deployer-mode annotation overrides it); empty means DeployerModePod.
	DeployerMode DeployerMode
	// MaxControllerRollouts bounds the rollouts run in the controller at
	// once; zero means DefaultMaxControllerRollouts.
	MaxControllerRollouts int
	// ControllerRolloutQPS is the write rate the rollouts run in the
	// controller share; zero means DeployerPodQPS per rollout in flight,
	// never less than the client's QPS.
	ControllerRolloutQPS float64
	// SkipNameValidation lets a manager start in a process where an
	// earlier one ran (a test that restarts dc-controller): controller
	// names are otherwise unique per process, for their metrics.
	SkipNameValidation bool
}

// LeaderElectionID names the Lease replicas of dc-controller elect through.
const LeaderElectionID = "dc-controller.deployconfig.io"

// NewScheme returns a scheme with the Kubernetes and DeploymentConfig types.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := dcv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// NewManager returns a manager running both controllers, ready to Start.
func NewManager(cfg *rest.Config, opts Options) (manager.Manager, error) {
	if opts.DeployerImage == "" {
		return nil, fmt.Errorf("a deployer image is required")
	}
	if opts.Workers < 1 {
		opts.Workers = 1
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.SnapshotSecretInterval <= 0 {
		opts.SnapshotSecretInterval = DefaultSnapshotSecretInterval
	}
	if opts.DeployerMode == "" {
		opts.DeployerMode = DeployerModePod
	}
	if _, err := ParseDeployerMode("deployer mode", string(opts.DeployerMode)); err != nil {
		return nil, err
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, managerOptions(opts, scheme))
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := setup(mgr, opts); err != nil {
		return nil, err
	}
	return mgr, nil
}

// GracefulShutdownTimeout bounds how long dc-controller waits for running
// syncs when it is told to stop: well below the 30 s a pod gets between
// SIGTERM and SIGKILL, so that a stuck sync never holds a shutdown (or a
// leader's handover) until the kill. controller-runtime's default is 30 s.
const GracefulShutdownTimeout = 10 * time.Second

// managerOptions are the options of dc-controller's manager.
func managerOptions(opts Options, scheme *runtime.Scheme) ctrl.Options {
	return ctrl.Options{
		Scheme:                        scheme,
		Cache:                         cacheOptions(opts.Namespaces),
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:        opts.HealthAddr,
		PprofBindAddress:              opts.PprofAddr,
		LeaderElection:                opts.LeaderElection,
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       ptr(GracefulShutdownTimeout),
		Controller:                    config.Controller{SkipNameValidation: ptr(opts.SkipNameValidation)},
	}
}

// DefaultGCPercent is dc-controller's GOGC when the environment sets none
// and its heap is small; on a large heap dc-controller lowers it to keep
// the collector's headroom to a fixed size (see heapgoal). Its heap is
// mostly the informer cache, which lives as long as the process; Go's
// default of 100 lets the heap grow to twice that between collections,
// and at thousands of DeploymentConfigs that headroom is the largest part
// of the process's memory. 25 trades some CPU in the garbage collector,
// while the caches fill and during rollouts (an idle controller allocates
// little), for a smaller heap: at 3,000 corpus DeploymentConfigs the heap
// in use was 34 MB, against 43 MB at 50 and 53 MB at 100, for 5.4 s of CPU
// to sync instead of 4.2 s and 3.4 s (docs/scaling.md).
const DefaultGCPercent = 25

// MinGCPercent and GCHeadroom bound dc-controller's GOGC on a large heap:
// it falls from DefaultGCPercent as far as MinGCPercent to let the heap
// grow by no more than GCHeadroom bytes between collections. At 20,000
// DeploymentConfigs (a live heap near 137 MB) that is 5 percent, some
// 25 MB less memory than 25 percent would take, for more CPU while the
// caches fill; below 32 MB of live heap nothing changes.
const (
	MinGCPercent = 5
	GCHeadroom   = 8 << 20
)

// cacheOptions keeps only what deployconfig owns in memory: RCs carrying the
// DeploymentConfig label and pods carrying the deployer-pod label, so the
// controller's memory follows the number of DeploymentConfigs, not the
// size of the cluster; and of those only what the controllers read (see
// transformRC and transformPod). Of RCs it leaves out those labelled
// settled (see settled.go): nine in ten of a long-lived DeploymentConfig's.
// Of deployer and hook pods it keeps those
// that have not finished: every deployment keeps its finished deployer pod
// for its log, ten or more per DeploymentConfig, and the deployer controller
// asks the API server about the few it needs once they have finished.
func cacheOptions(namespaces []string) cache.Options {
	return withNamespaces(cache.Options{
		// Nothing reads managedFields, a third of a typical object.
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&dcv1.DeploymentConfig{}: {Transform: transformDC},
			&corev1.ReplicationController{}: {
				Label:     unsettledSelector(),
				Transform: transformRC,
			},
			&corev1.Pod{}: {Label: labels.NewSelector().Add(has(dcv1.DeployerPodForDeploymentLabel)), Field: unfinished(), Transform: transformPod},
			// Only the Services a BlueGreen DeploymentConfig's sync labelled
			// (services.go): the cluster's other Services are none of ours.
			&corev1.Service{}: {Label: labels.NewSelector().Add(has(dcv1.ServiceOfLabel))},
			// ConfigMaps as metadata, for configuration snapshots: a change
			// of one a DeploymentConfig follows syncs it (snapshots.go). Not
			// the copies, which never change.
			configMapMetadata(): {Label: labels.NewSelector().Add(requirement(dcv1.ConfigSnapshotOfLabel, selection.DoesNotExist))},
		},
	}, namespaces)
}

// settledCacheOptions are those of the cache that feeds settledScaleReconciler:
// settled RCs whose status counts pods, which only a hand edit makes.
func settledCacheOptions(namespaces []string, scheme *runtime.Scheme) cache.Options {
	return withNamespaces(cache.Options{
		Scheme:           scheme,
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ReplicationController{}: {
				Label:     labels.NewSelector().Add(requirement(dcv1.DeploymentSettledLabel, selection.Equals, settledValue)),
				Field:     fields.OneTermNotEqualSelector("status.replicas", "0"),
				Transform: transformRC,
			},
		},
	}, namespaces)
}

// withNamespaces limits a cache to namespaces, unless there are none.
func withNamespaces(opts cache.Options, namespaces []string) cache.Options {
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// unsettledSelector selects the RCs the manager's cache holds: those of a
// DeploymentConfig but for the settled ones. Settled is the label's value
// "true" and nothing else, as every reader of the label has it (settled.go):
// an RC whose label someone set to another value stays in the cache, and
// the controller labels it again once it settles.
func unsettledSelector() labels.Selector {
	return labels.NewSelector().Add(has(dcv1.DeploymentConfigLabel), requirement(dcv1.DeploymentSettledLabel, selection.NotEquals, settledValue))
}

// has is the label requirement that a key is there.
func has(key string) labels.Requirement { return requirement(key, selection.Exists) }

func requirement(key string, op selection.Operator, values ...string) labels.Requirement {
	req, err := labels.NewRequirement(key, op, values)
	if err != nil {
		// The keys are constants; a bad one is a programming error.
		panic(err)
	}
	return *req
}

// unfinished selects pods that have neither succeeded nor failed. A pod
// that finishes leaves a watch with this selector as a deletion.
func unfinished() fields.Selector {
	return fields.AndSelectors(
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
	)
}

func setup(mgr manager.Manager, opts Options) error {
	ctx := context.Background()
	if err := indexInNamespace(ctx, mgr.GetCache(), &corev1.ReplicationController{}, rcByDeploymentConfig, indexRCByDeploymentConfig); err != nil {
		return fmt.Errorf("index replicationcontrollers: %w", err)
	}
	if err := indexInNamespace(ctx, mgr.GetCache(), &corev1.Pod{}, podByDeployment, func(o client.Object) []string {
		return []string{o.GetLabels()[dcv1.DeployerPodForDeploymentLabel]}
	}); err != nil {
		return fmt.Errorf("index pods: %w", err)
	}
	// Read across namespaces (the rollout gate counts every namespace's
	// running rollouts), so indexed the way controller-runtime does.
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ReplicationController{}, rcRunning, indexRCRunning); err != nil {
		return fmt.Errorf("index running replicationcontrollers: %w", err)
	}
	if err := indexInNamespace(ctx, mgr.GetCache(), &dcv1.DeploymentConfig{}, dcByConfigSource, indexDCByConfigSource); err != nil {
		return fmt.Errorf("index deploymentconfigs by config source: %w", err)
	}

	access := newDeployerAccess(mgr.GetClient())
	recorder := mgr.GetEventRecorder("dc-controller")
	priorities := rolloutPriorities{reader: mgr.GetCache()}

	dcClient, err := controllerClient(mgr)
	if err != nil {
		return err
	}
	// Always there: a DeploymentConfig's annotation may ask for it
	// whatever the controller's mode.
	runner, err := newRolloutRunner(mgr.GetConfig(), opts.MaxControllerRollouts, opts.ControllerRolloutQPS, mgr.GetLogger().WithName("rollouts"))
	if err != nil {
		return err
	}
	placement := runPlacement{Mode: opts.DeployerMode, AllowModeChoice: opts.AllowDeployerModeChoice, runner: runner}
	dcReconciler := &DeploymentConfigReconciler{
		Client: dcClient, APIReader: mgr.GetAPIReader(), Recorder: recorder, Clock: opts.Clock, access: access,
		invalid: newInvalidAnalyses(), memo: newSourceMemo(), keys: newSnapshotKeys(), placement: placement,
	}
	// Always a gate: RolloutPolicies may govern rollouts without any flag.
	dcReconciler.gate = newRolloutGate(opts.RolloutLimits, mgr.GetCache(), opts.Clock)
	// Watches rather than For: For's handler gives every event of the
	// DeploymentConfig itself the default priority.
	err = ctrl.NewControllerManagedBy(mgr).
		Named("deploymentconfig").
		Watches(&dcv1.DeploymentConfig{}, enqueueByPriority(requestFor, priorities.deploymentConfig)).
		Watches(&corev1.ReplicationController{}, enqueueDCsOfRC(priorities.deploymentConfigOfRC)).
		Watches(&corev1.Service{}, enqueueByPriority(deploymentConfigOfService, startsNoRollout)).
		// Metadata only: a change of a followed ConfigMap's data changes
		// its resourceVersion, and the sync reads the ConfigMap itself.
		// Secrets are not watched (dc-controller may not list them, see
		// docs/security.md): secretPolling looks at them.
		Watches(&corev1.ConfigMap{}, enqueueByPriority(deploymentConfigsOfSource(mgr.GetCache(), "ConfigMap"), sourceStartsRollout), builder.OnlyMetadata).
		WatchesRawSource(gateSource(dcReconciler.gate)).
		WithOptions(workerOptions(mgr, "deploymentconfig", dcv1.GroupVersion.WithKind("DeploymentConfig"), opts.Workers)).
		Complete(afterSync{Reconciler: admissionSync{Reconciler: dcReconciler, gate: dcReconciler.gate}, reader: mgr.GetCache(), secretInterval: opts.SnapshotSecretInterval, gate: dcReconciler.gate})
	if err != nil {
		return fmt.Errorf("set up deploymentconfig controller: %w", err)
	}

	if err := setupPolicies(mgr, dcReconciler.gate.policies); err != nil {
		return err
	}

	deployerClient, err := controllerClient(mgr)
	if err != nil {
		return err
	}
	if err := mgr.Add(withAnalysisClient{runner, analysisClient(opts)}); err != nil {
		return fmt.Errorf("add the rollout runner: %w", err)
	}
	deployerReconciler := &DeployerReconciler{
		Client: deployerClient, APIReader: mgr.GetAPIReader(), Recorder: recorder, Clock: opts.Clock,
		DeployerImage: opts.DeployerImage, access: access, runPlacement: placement,
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("deployer").
		Watches(&corev1.ReplicationController{}, enqueueByPriority(requestFor, priorities.deployment), builder.WithPredicates(skipCreatedAtRest())).
		Watches(&corev1.Pod{}, enqueueByPriority(deploymentOfPod, priorities.deployment)).
		WatchesRawSource(source.Channel(runner.wake, &handler.EnqueueRequestForObject{})).
		WithOptions(workerOptions(mgr, "deployer", corev1.SchemeGroupVersion.WithKind("ReplicationController"), opts.Workers)).
		Complete(deployerReconciler)
	if err != nil {
		return fmt.Errorf("set up deployer controller: %w", err)
	}

	err = ctrl.NewControllerManagedBy(mgr).
		Named("release").
		For(&corev1.ReplicationController{}, builder.WithPredicates(onlyDeletes())).
		Complete(&releaseReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()})
	if err != nil {
		return fmt.Errorf("set up release controller: %w", err)
	}

	if err := setupSettledScale(mgr, opts); err != nil {
		return err
	}

	if err := imagetrigger.Setup(mgr, imagetrigger.Options{
		PollInterval: opts.ImagePollInterval, Workers: opts.Workers,
		Registry: registry.Options{registry.WithNetworkPolicy(opts.RegistryNetworks)},
	}); err != nil {
		return err
	}

	collector, err := newMetricsCollector(ctx, mgr.GetCache(), opts.Clock, mgr.Elected())
	if err != nil {
		return err
	}
	deployerReconciler.finished = collector.finished
	if err := metrics.Registry.Register(collector); err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	// A stopped manager takes its collector along, so that a later one in
	// the same process (SkipNameValidation) registers its own.
	if err := mgr.Add(unregisterOnStop{collector}); err != nil {
		return fmt.Errorf("add the metrics collector: %w", err)
	}
	if err := metrics.Registry.Register(runner.inFlight); err != nil {
		// A second manager in one process (tests) shares the first's gauge.
		var registered prometheus.AlreadyRegisteredError
		if !errors.As(err, &registered) {
			return fmt.Errorf("register metrics: %w", err)
		}
		runner.inFlight = registered.ExistingCollector.(prometheus.Gauge)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("readyz", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return fmt.Errorf("caches are not synced")
		}
		return nil
	})
}

// unregisterOnStop unregisters a collector when the manager stops.
type unregisterOnStop struct{ prometheus.Collector }

// Start waits for the manager to stop.
func (u unregisterOnStop) Start(ctx context.Context) error {
	<-ctx.Done()
	metrics.Registry.Unregister(u.Collector)
	return nil
}

// NeedLeaderElection is false: the collector is registered on every replica.
func (unregisterOnStop) NeedLeaderElection() bool { return false }

// setupSettledScale runs settledScaleReconciler on its own small cache of
// settled RCs that have pods: the manager's cache leaves settled RCs out.
func setupSettledScale(mgr manager.Manager, opts Options) error {
	cacheOpts := settledCacheOptions(opts.Namespaces, mgr.GetScheme())
	cacheOpts.HTTPClient, cacheOpts.Mapper = mgr.GetHTTPClient(), mgr.GetRESTMapper()
	settledCache, err := cache.New(mgr.GetConfig(), cacheOpts)
	if err != nil {
		return fmt.Errorf("create the cache of settled replicationcontrollers: %w", err)
	}
	if err := mgr.Add(settledCache); err != nil {
		return fmt.Errorf("add the cache of settled replicationcontrollers: %w", err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("settled").
		WatchesRawSource(source.Kind(settledCache, &corev1.ReplicationController{},
			&handler.TypedEnqueueRequestForObject[*corev1.ReplicationController]{})).
		Complete(&settledScaleReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()})
	if err != nil {
		return fmt.Errorf("set up settled controller: %w", err)
	}
	return nil
}

// workerOptions are the options of a rollout controller: its workers, the
// priority queue its handlers' priorities need (controller-runtime's
// default, made explicit), and the logger For would have given it.
func workerOptions(mgr manager.Manager, name string, gvk schema.GroupVersionKind, workers int) controller.Options {
	return controller.Options{
		MaxConcurrentReconciles: workers,
		UsePriorityQueue:        ptr(true),
		LogConstructor:          kindLogger(mgr, name, gvk),
	}
}

// controllerClient returns a client of its own for one controller: it
// reads from the manager's cache and writes through one rate limiter of the
// configured QPS and burst for all resources, as kube-controller-manager
// gives each of its controllers a clientset of its own whose API groups share
// one limiter. (Left to itself, controller-runtime would give every resource
// a limiter of its own: several times the configured rate.) The two
// controllers of a rollout then do not wait for each other's writes.
func controllerClient(mgr manager.Manager) (client.Client, error) {
	cfg := rest.CopyConfig(mgr.GetConfig())
	if cfg.QPS > 0 {
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	c, err := client.New(cfg, client.Options{
		HTTPClient: mgr.GetHTTPClient(),
		Scheme:     mgr.GetScheme(),
		Mapper:     mgr.GetRESTMapper(),
		Cache:      &client.CacheOptions{Reader: mgr.GetCache()},
	})
	if err != nil {
		return nil, fmt.Errorf("create a controller's client: %w", err)
	}
	return c, nil
}

// indexRCByDeploymentConfig returns the DeploymentConfigs an RC belongs to:
// the one its label names and the one that controls it.
func indexRCByDeploymentConfig(o client.Object) []string {
	var names []string
	if name := o.GetLabels()[dcv1.DeploymentConfigLabel]; name != "" {
		names = append(names, name)
	}
	if ref := controllerName(o); ref != "" && (len(names) == 0 || names[0] != ref) {
		names = append(names, ref)
	}
	return names
}

// deploymentConfigsOfRC maps an RC event to the DeploymentConfigs it
// concerns.
func deploymentConfigsOfRC(_ context.Context, o client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, name := range indexRCByDeploymentConfig(o) {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}})
	}
	return reqs
}

// deploymentOfPod maps a deployer or hook pod event to its deployment.
func deploymentOfPod(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[dcv1.DeployerPodForDeploymentLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

func onlyDeletes() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
	}
}

// skipCreatedAtRest keeps out of the deployer controller's queue the
// deployments it first sees finished with nothing to tidy: when
// dc-controller starts, its informer lists every deployment of every
// DeploymentConfig, nearly all of them finished, and a sync of each would
// change nothing while 20,000 queued requests held megabytes at the moment
// the caches are fullest. A change to such a deployment (a cancel, a
// retry) still reaches the controller as an update.
func skipCreatedAtRest() predicate.Funcs {
	return predicate.Funcs{CreateFunc: func(e event.CreateEvent) bool {
		rc, ok := e.Object.(*corev1.ReplicationController)
		return !ok || !finishedAtRest(rc)
	}}
}

// controllerName returns the name of the DeploymentConfig controlling
// an object, or "".
func controllerName(o client.Object) string {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "DeploymentConfig" && ref.APIVersion == dcv1.GroupVersion.String() {
			return ref.Name
		}
	}
	return ""
}
