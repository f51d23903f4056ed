// Package deployer is dc-deploy: it carries out one deployment (a
// ReplicationController of a DeploymentConfig) from inside its deployer pod.
// It reads the RC and the DeploymentConfig encoded in it, scales down every
// older deployment but the last complete one, runs the strategy with its
// lifecycle hooks, and prints the rollout's log.
//
// Run is called by the dc-deploy binary and, in-process, by the local pod
// runtime; it holds no global state, writes only to the writer it is given
// and builds its own client, so several can run side by side.
package deployer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployer/hook"
	"github.com/deployconfig/deployconfig/internal/deployer/scaler"
	"github.com/deployconfig/deployconfig/internal/deployer/strategy"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/trafficrouting"
)

// Options are the inputs of one run of the deployer.
type Options struct {
	// Namespace and Name identify the deployment (ReplicationController).
	Namespace string
	Name      string
	// Until stops the rollout early: start, pre, mid or N% (0% to 100%).
	// Empty runs it to the end.
	Until string
	// Out receives the rollout's log lines and the hooks' logs.
	Out io.Writer

	// Client is the API client to use. When nil, one is built from Config
	// with a rate limiter of its own, as a separate process would have.
	Client kubernetes.Interface
	// Config is the API server's client configuration, used when Client is nil.
	Config *rest.Config
	// Dynamic reaches the Gateway API routes of trafficRouting. When nil,
	// one is built from Config unless Client is given; without one, a
	// rollout with trafficRouting fails.
	Dynamic dynamic.Interface

	// Started is when the rollout started, for the strategy's
	// activeDeadlineSeconds. Zero means the deployer pod's start time, read
	// from the API server; a rollout dc-controller runs has no pod.
	Started time.Time

	// Log receives diagnostics (not the rollout's log). Optional.
	Log logr.Logger

	// KeptLog, when set, is Out as its runner keeps it on the
	// deployment: each write of the progress record carries it.
	KeptLog deployment.KeptLog
}

// Run carries out the deployment. It returns nil when the rollout
// completed, or stopped at its --until point, and otherwise an error whose
// message is the reason the rollout failed; Run itself never prints the error.
func Run(ctx context.Context, opts Options) error {
	until, err := strategy.ParseUntil(opts.Until)
	if err != nil {
		return err
	}
	if opts.Namespace == "" || opts.Name == "" {
		return errors.New("the deployment's namespace and name are required (DC_DEPLOYMENT_NAMESPACE and DC_DEPLOYMENT_NAME)")
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	client, routes, err := newClients(opts)
	if err != nil {
		return err
	}
	ctx = logr.NewContext(ctx, opts.Log.WithValues("deployment", opts.Namespace+"/"+opts.Name))
	d := &deployer{
		client:    client,
		routes:    routes,
		namespace: opts.Namespace,
		name:      opts.Name,
		until:     until,
		out:       opts.Out,
		scaler:    scaler.New(client, opts.Namespace),
		now:       time.Now,
		started:   opts.Started,
		keptLog:   opts.KeptLog,
	}
	return d.deploy(ctx)
}

// newClients returns the injected clients, or clients of its own built
// from the config. The config's rate limiter is dropped so that this run
// does not share one with another in the same process. The dynamic client,
// for trafficRouting's routes, is nil when a client is injected without one.
func newClients(opts Options) (kubernetes.Interface, dynamic.Interface, error) {
	if opts.Client != nil {
		return opts.Client, opts.Dynamic, nil
	}
	if opts.Config == nil {
		return nil, nil, errors.New("no API client and no client configuration given")
	}
	cfg := rest.CopyConfig(opts.Config)
	cfg.RateLimiter = nil
	return NewClients(cfg)
}

// NewClients returns the typed and dynamic clients a deployer needs, built
// from cfg and sharing one HTTP client and one rate limiter (cfg's, or one
// made from its QPS and burst). Requests that a restarting API server
// refuses are retried.
func NewClients(cfg *rest.Config) (kubernetes.Interface, dynamic.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(newRetryUnreachable)
	if cfg.UserAgent == "" {
		cfg.UserAgent = "dc-deploy"
	}
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, max(cfg.Burst, 1))
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("build the API client: %w", err)
	}
	client, err := kubernetes.NewForConfigAndClient(Protobuf(cfg), httpClient)
	if err != nil {
		return nil, nil, fmt.Errorf("build the API client: %w", err)
	}
	routes, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, nil, fmt.Errorf("build the API client for routes: %w", err)
	}
	return client, routes, nil
}

// Protobuf returns a copy of cfg whose requests and answers carry built-in
// objects as protobuf, as kube-controller-manager's and the kubelet's do:
// the API server encodes an object once for all such clients of a watch,
// and spends less CPU on protobuf than on JSON either way. Custom
// resources have no protobuf form; use cfg for them.
func Protobuf(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return cfg
}

// deployer is one run of the deployer.
type deployer struct {
	client kubernetes.Interface
	// routes reaches Gateway API routes; nil refuses trafficRouting.
	routes    dynamic.Interface
	namespace string
	name      string
	until     strategy.Until
	out       io.Writer
	scaler    *scaler.Scaler
	now       func() time.Time
	// started, when set, is when the rollout started (see Options.Started).
	started time.Time
	// keptLog, when set, is out as the runner keeps it on the deployment.
	keptLog deployment.KeptLog
}

// deploy loads the deployment and its configuration, clears the way, and
// runs the strategy.
func (d *deployer) deploy(ctx context.Context) error {
	to, dc, desired, err := d.load(ctx)
	if err != nil {
		return err
	}
	s := effectiveStrategy(dc)
	from, err := d.prepare(ctx, dc.Name, s, to)
	if err != nil {
		return err
	}
	if d.until.Is(strategy.UntilStart) {
		fmt.Fprintf(d.out, "--> Reached %s\n", d.until)
		return nil
	}
	outcome, err := d.runStrategy(ctx, s, from, to, desired)
	if err != nil {
		return err
	}
	if outcome == strategy.Completed {
		fmt.Fprintln(d.out, "--> Success")
	}
	return nil
}

// load reads the deployment, the DeploymentConfig encoded in it and its
// desired replica count.
func (d *deployer) load(ctx context.Context) (*corev1.ReplicationController, *dcv1.DeploymentConfig, int32, error) {
	to, err := d.scaler.Get(ctx, d.name)
	if err != nil {
		return nil, nil, 0, err
	}
	if deployment.IsCancelled(to) {
		// The controller deletes a cancelled deployment's deployer pod; a
		// deployer that starts before that happens must not scale anything.
		return nil, nil, 0, fmt.Errorf("deployment %s/%s was cancelled", to.Namespace, to.Name)
	}
	dc, err := deployment.DecodeConfig(to)
	if err != nil {
		return nil, nil, 0, err
	}
	desired, ok := deployment.DesiredReplicas(to)
	if !ok {
		return nil, nil, 0, fmt.Errorf("replicationcontroller %s/%s has no valid %s annotation", to.Namespace, to.Name, dcv1.DesiredReplicasAnnotation)
	}
	return to, dc, desired, nil
}

// prepare finds the deployment being replaced (the newest other Complete
// one) and scales every other deployment of the DeploymentConfig to zero,
// so that only the two the strategy works on run pods.
func (d *deployer) prepare(ctx context.Context, dcName string, s *dcv1.DeploymentStrategy, to *corev1.ReplicationController) (*corev1.ReplicationController, error) {
	rcs, err := d.deployments(ctx, dcName)
	if err != nil {
		return nil, err
	}
	from := deployment.Live(rcs, to)
	if from != nil && deployment.Version(from) > deployment.Version(to) {
		return nil, fmt.Errorf("deployment %s is older than the complete deployment %s; not rolling back over it", to.Name, from.Name)
	}
	timeout := strategyTimeout(s)
	for _, rc := range rcs {
		if rc.Name == to.Name || (from != nil && rc.Name == from.Name) || deployment.Replicas(rc) == 0 {
			continue
		}
		if _, err := d.scaler.Scale(ctx, rc.Name, 0, timeout); err != nil {
			return nil, fmt.Errorf("scale older deployment %s down: %w", rc.Name, err)
		}
		fmt.Fprintf(d.out, "--> Scaled older deployment %s down\n", rc.Name)
	}
	return from, nil
}

// deployments lists the DeploymentConfig's deployments, oldest first.
func (d *deployer) deployments(ctx context.Context, dcName string) ([]*corev1.ReplicationController, error) {
	selector := labels.SelectorFromSet(labels.Set{dcv1.DeploymentConfigLabel: dcName}).String()
	list, err := d.client.CoreV1().ReplicationControllers(d.namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list the deployments of deploymentconfig %s/%s: %w", d.namespace, dcName, err)
	}
	rcs := make([]*corev1.ReplicationController, len(list.Items))
	for i := range list.Items {
		rcs[i] = &list.Items[i]
	}
	deployment.SortByVersion(rcs)
	return rcs, nil
}

// runStrategy runs the strategy with its hooks.
func (d *deployer) runStrategy(ctx context.Context, s *dcv1.DeploymentStrategy, from, to *corev1.ReplicationController, desired int32) (strategy.Outcome, error) {
	deadline, err := d.rolloutDeadline(ctx, to, s)
	if err != nil {
		return strategy.Completed, err
	}
	hooks := hook.NewExecutor(d.client, d.out, s, deadline)
	if err := validateStepAnalyses(s); err != nil {
		return strategy.Completed, err
	}
	rollout := strategy.New(d.scaler, hooks, d.out, d.until).
		WithServices(d.client.CoreV1().Services(d.namespace)).
		WithAnalysis(stepAnalysis{client: d.client, out: d.out}).
		WithKeptLog(d.keptLog)
	if d.routes != nil {
		rollout = rollout.WithRoutes(func(tr *dcv1.TrafficRouting) strategy.Routes {
			return trafficrouting.Router{Client: trafficrouting.Dynamic(d.routes), Namespace: d.namespace, Routing: tr}
		})
	}
	switch s.Type {
	case dcv1.DeploymentStrategyTypeBlueGreen:
		return rollout.BlueGreen(ctx, s.BlueGreenParams, from, to, desired)
	case dcv1.DeploymentStrategyTypeRecreate:
		return rollout.Recreate(ctx, s.RecreateParams, from, to, desired)
	case dcv1.DeploymentStrategyTypeRolling:
		return rollout.Rolling(ctx, s.RollingParams, from, to, desired)
	}
	return strategy.Completed, fmt.Errorf("unsupported strategy type %q", s.Type)
}

// effectiveStrategy returns the strategy to run, with every default set. A
// Custom strategy's command that calls dc-deploy gets the standard rollout:
// Recreate when it has recreateParams, Rolling otherwise.
func effectiveStrategy(dc *dcv1.DeploymentConfig) *dcv1.DeploymentStrategy {
	if dc.Spec.Strategy.Type != dcv1.DeploymentStrategyTypeCustom {
		return &dc.Spec.Strategy
	}
	c := dc.DeepCopy()
	c.Spec.Strategy.Type = dcv1.DeploymentStrategyTypeRolling
	if c.Spec.Strategy.RecreateParams != nil {
		c.Spec.Strategy.Type = dcv1.DeploymentStrategyTypeRecreate
	}
	dcv1.SetDefaults(c)
	return &c.Spec.Strategy
}

// rolloutDeadline is when the strategy's activeDeadlineSeconds ends,
// counted from the deployer pod's start (the RC's creation when the pod
// cannot tell): hook pods get what is left of it.
func (d *deployer) rolloutDeadline(ctx context.Context, to *corev1.ReplicationController, s *dcv1.DeploymentStrategy) (time.Time, error) {
	budget := dcv1.DefaultActiveDeadlineSeconds
	if s.ActiveDeadlineSeconds != nil {
		budget = *s.ActiveDeadlineSeconds
	}
	start, err := d.startTime(ctx, to)
	if err != nil {
		return time.Time{}, err
	}
	return start.Add(time.Duration(budget) * time.Second), nil
}

// startTime is when the deployer pod started, or the rollout when no pod
// runs it.
func (d *deployer) startTime(ctx context.Context, to *corev1.ReplicationController) (time.Time, error) {
	if !d.started.IsZero() {
		return d.started, nil
	}
	name := to.Annotations[dcv1.DeployerPodAnnotation]
	if name == "" {
		name = deployment.DeployerPodName(to.Name)
	}
	pod, err := d.client.CoreV1().Pods(d.namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil && pod.Status.StartTime != nil:
		return pod.Status.StartTime.Time, nil
	case err != nil && !apierrors.IsNotFound(err):
		return time.Time{}, fmt.Errorf("get deployer pod %s/%s: %w", d.namespace, name, err)
	case !to.CreationTimestamp.IsZero():
		return to.CreationTimestamp.Time, nil
	}
	return d.now(), nil
}

// strategyTimeout is how long the strategy waits for pods.
func strategyTimeout(s *dcv1.DeploymentStrategy) time.Duration {
	var v *int64
	switch {
	case s.Type == dcv1.DeploymentStrategyTypeRecreate && s.RecreateParams != nil:
		v = s.RecreateParams.TimeoutSeconds
	case s.Type == dcv1.DeploymentStrategyTypeRolling && s.RollingParams != nil:
		v = s.RollingParams.TimeoutSeconds
	case s.Type == dcv1.DeploymentStrategyTypeBlueGreen && s.BlueGreenParams != nil:
		v = s.BlueGreenParams.TimeoutSeconds
	}
	if v == nil {
		return time.Duration(dcv1.DefaultTimeoutSeconds) * time.Second
	}
	return time.Duration(*v) * time.Second
}
