package podruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listerscorev1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployer"
)

// Defaults of Options.
const (
	defaultWorkers           = 4
	defaultRestartBackoff    = 2 * time.Second
	defaultMaxRestartBackoff = 20 * time.Second
	defaultShutdownGrace     = 2 * time.Second
	defaultGrace             = 30 * time.Second
	// defaultQPS and defaultBurst are the kubelet's client limits.
	defaultQPS   = 50
	defaultBurst = 100
	// stopTimeout bounds how long Run waits for the pods' work to stop.
	stopTimeout = 30 * time.Second
)

// Component is the runtime's name in events and user agents.
const Component = "dc-local-runtime"

// Options configure a Runtime.
type Options struct {
	// Config is the cluster's client configuration (the playground's
	// admin); required.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig for the same cluster, which
	// local processes get (as KUBECONFIG, rewritten for the pod); required.
	Kubeconfig string
	// StateDir holds the pods' logs and working files; required.
	StateDir string
	// BinDir holds dc-deploy and kubectl; local processes find them on
	// their PATH (dc-deploy also as openshift-deploy).
	BinDir string
	// Deploy runs the deployer in-process for deployer pods. Without it,
	// such pods fail to start.
	Deploy DeployFunc
	// DeployerImages are images whose entrypoint is dc-deploy: a container
	// of one of them (any tag) without a command runs the deployer
	// in-process. A container whose command is dc-deploy or
	// openshift-deploy always does.
	DeployerImages []string
	// NodeSelector selects the nodes whose pods the runtime runs (the
	// playground's kwok nodes); nil means every node.
	NodeSelector labels.Selector
	// ImpersonateServiceAccounts makes a pod's deployer and processes act
	// as the pod's service account, so that they have the permissions
	// they would have in a real cluster rather than the playground's
	// admin's.
	ImpersonateServiceAccounts bool
	// Workers is the number of pods handled at once (their work runs on
	// its own regardless); default 4.
	Workers int
	// QPS and Burst limit each fake node's kubelet client (its pods'
	// status, events, Logs objects): every node the runtime runs pods on
	// has a client and rate limiter of its own, as every kubelet of a
	// real cluster has; default 50 and 100, a kubelet's kubeAPIQPS and
	// kubeAPIBurst. The runtime's watches share one more client of the
	// same limits. Deployers have clients of their own.
	QPS   float32
	Burst int
	// RestartBackoff is the first delay before a failed container of a
	// restartPolicy OnFailure pod is restarted, doubling up to
	// MaxRestartBackoff. The kubelet's 10s and 5m would make Retry hooks
	// slow in a playground, so the defaults are 2s and 20s.
	RestartBackoff, MaxRestartBackoff time.Duration
	// ShutdownGrace is how long the pods' processes get to stop when the
	// runtime stops; default 2s.
	ShutdownGrace time.Duration
	// Log receives the runtime's own log.
	Log logr.Logger
}

// withDefaults checks o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Config == nil:
		return o, errors.New("podruntime: a client configuration is required")
	case o.Kubeconfig == "":
		return o, errors.New("podruntime: a kubeconfig path is required")
	case o.StateDir == "":
		return o, errors.New("podruntime: a state directory is required")
	}
	if o.NodeSelector == nil {
		o.NodeSelector = labels.Everything()
	}
	if o.Workers < 1 {
		o.Workers = defaultWorkers
	}
	if o.QPS <= 0 {
		o.QPS = defaultQPS
	}
	if o.Burst <= 0 {
		o.Burst = defaultBurst
	}
	if o.RestartBackoff <= 0 {
		o.RestartBackoff = defaultRestartBackoff
	}
	if o.MaxRestartBackoff < o.RestartBackoff {
		o.MaxRestartBackoff = max(defaultMaxRestartBackoff, o.RestartBackoff)
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = defaultShutdownGrace
	}
	return o, nil
}

// Runtime runs the deployer and hook pods of a kwok cluster as a kubelet
// would; see the package documentation.
type Runtime struct {
	opts Options
	// client serves the runtime's watches and what it reads for no
	// node in particular; kubelets write for each node.
	client   kubernetes.Interface
	kubelets *kubelets
	log      logr.Logger
	podsDir  string
	aliasDir string

	mu      sync.Mutex
	workers map[types.UID]*podWorker
	// ended holds the pods whose work has ended, until they are gone: the
	// pod cache may not show their final status yet, and they must never
	// start again.
	ended map[types.UID]types.NamespacedName
}

// New makes a Runtime; Run starts it.
func New(opts Options) (*Runtime, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(opts.Config)
	cfg.QPS, cfg.Burst, cfg.RateLimiter = opts.QPS, opts.Burst, nil
	cfg.UserAgent = Component
	client, err := kubernetes.NewForConfig(deployer.Protobuf(cfg))
	if err != nil {
		return nil, fmt.Errorf("making the runtime's client: %w", err)
	}
	return &Runtime{
		opts:     opts,
		client:   client,
		kubelets: newKubelets(opts.Config, opts.QPS, opts.Burst),
		log:      opts.Log,
		podsDir:  filepath.Join(opts.StateDir, "pods"),
		aliasDir: filepath.Join(opts.StateDir, "bin"),
		workers:  map[types.UID]*podWorker{},
		ended:    map[types.UID]types.NamespacedName{},
	}, nil
}

// Run runs pods until ctx ends, then stops their work (processes get
// ShutdownGrace) and returns. Their status is left as it is: a runtime
// started again takes them over (see the package documentation).
func (r *Runtime) Run(ctx context.Context) error {
	if err := r.prepareDirs(); err != nil {
		return err
	}
	podFactory := informers.NewSharedInformerFactoryWithOptions(r.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = dcv1.DeployerPodForDeploymentLabel
		o.FieldSelector = fields.OneTermNotEqualSelector("spec.nodeName", "").String()
	}))
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(r.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = r.opts.NodeSelector.String()
	}))
	c := &controller{
		rt:    r,
		pods:  podFactory.Core().V1().Pods().Lister(),
		nodes: nodeFactory.Core().V1().Nodes().Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: Component}),
	}
	if err := c.register(podFactory.Core().V1().Pods().Informer(), nodeFactory.Core().V1().Nodes().Informer()); err != nil {
		return err
	}
	r.kubelets.start(ctx)
	defer r.kubelets.shutdown()

	podFactory.Start(ctx.Done())
	nodeFactory.Start(ctx.Done())
	defer podFactory.Shutdown()
	defer nodeFactory.Shutdown()
	for typ, ok := range podFactory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("podruntime: the %v cache did not sync", typ)
		}
	}
	for typ, ok := range nodeFactory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("podruntime: the %v cache did not sync", typ)
		}
	}
	c.pruneDirs()
	r.log.Info("Running deployer and hook pods", "nodes", r.opts.NodeSelector.String(), "state", r.opts.StateDir)
	c.run(ctx)
	r.stopAll()
	return nil
}

// prepareDirs makes the state directories and the openshift-deploy alias
// of dc-deploy.
func (r *Runtime) prepareDirs() error {
	for _, dir := range []string{r.podsDir, r.aliasDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("podruntime: making %s: %w", dir, err)
		}
	}
	if r.opts.BinDir == "" {
		return nil
	}
	target := filepath.Join(r.opts.BinDir, DeployerCommand)
	if err := relink(filepath.Join(r.aliasDir, OpenShiftDeployerCommand), target); err != nil {
		return fmt.Errorf("podruntime: making the %s alias: %w", OpenShiftDeployerCommand, err)
	}
	return nil
}

// pathDirs are the directories local processes find their tools in.
func (r *Runtime) pathDirs() []string {
	return []string{r.opts.BinDir, r.aliasDir}
}

// startWorker starts the work of a pod unless it runs already, writing
// with the clients of the pod's node; it reports whether it started one.
func (r *Runtime) startWorker(ctx context.Context, c *controller, pod *corev1.Pod) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.workers[pod.UID]; ok {
		return false, nil
	}
	if _, ok := r.ended[pod.UID]; ok {
		return false, nil
	}
	kubelet, err := r.kubelets.of(pod.Spec.NodeName)
	if err != nil {
		return false, err
	}
	w := newPodWorker(ctx, r, c, pod, kubelet)
	r.workers[pod.UID] = w
	go w.run()
	return true, nil
}

// worker returns the worker of a pod, if any.
func (r *Runtime) worker(uid types.UID) *podWorker {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.workers[uid]
}

// workersOf returns the workers of every pod of a name, e.g. after the pod
// was deleted and perhaps created again.
func (r *Runtime) workersOf(key types.NamespacedName) []*podWorker {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*podWorker
	for _, w := range r.workers {
		if w.key == key {
			out = append(out, w)
		}
	}
	return out
}

// removeWorker forgets a worker that has stopped. When its pod has ended
// (its final status is written, or it was deleted) the pod is never started
// again; otherwise (its status could not be written, or the runtime is
// stopping) a new worker may take it over.
func (r *Runtime) removeWorker(w *podWorker, ended bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.workers[w.uid] == w {
		delete(r.workers, w.uid)
	}
	if ended {
		r.ended[w.uid] = w.key
	}
}

// forget drops what the runtime remembers of the pods of a name that are
// gone.
func (r *Runtime) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for uid, k := range r.ended {
		if k == key {
			delete(r.ended, uid)
		}
	}
}

// stopAll stops every pod's work for the runtime's shutdown and waits
// (bounded) for it to end.
func (r *Runtime) stopAll() {
	r.mu.Lock()
	workers := make([]*podWorker, 0, len(r.workers))
	for _, w := range r.workers {
		workers = append(workers, w)
	}
	r.mu.Unlock()
	for _, w := range workers {
		w.stop(errShutdown, r.opts.ShutdownGrace)
	}
	deadline := time.After(stopTimeout)
	for _, w := range workers {
		select {
		case <-w.done:
		case <-deadline:
			r.log.Info("Some pods' work did not stop in time", "timeout", stopTimeout)
			return
		}
	}
}

// controller feeds pod events to the runtime through a work queue.
type controller struct {
	rt    *Runtime
	pods  listerscorev1.PodLister
	nodes listerscorev1.NodeLister
	queue workqueue.TypedRateLimitingInterface[types.NamespacedName]
}

// register adds the event handlers: every pod change is a sync of that
// pod; a node that appears (e.g. a fake node that became selected) is a
// sync of its pods.
func (c *controller) register(pods, nodes cache.SharedIndexInformer) error {
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingObjectToName(obj); err == nil {
			c.queue.Add(types.NamespacedName{Namespace: key.Namespace, Name: key.Name})
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return fmt.Errorf("podruntime: watching pods: %w", err)
	}
	if _, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if node, ok := obj.(*corev1.Node); ok {
				c.enqueueNode(node.Name)
			}
		},
	}); err != nil {
		return fmt.Errorf("podruntime: watching nodes: %w", err)
	}
	return nil
}

// enqueueNode queues every pod bound to a node.
func (c *controller) enqueueNode(node string) {
	pods, err := c.pods.List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range pods {
		if p.Spec.NodeName == node {
			c.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		}
	}
}

// run processes the queue until ctx ends.
func (c *controller) run(ctx context.Context) {
	var wg sync.WaitGroup
	for range c.rt.opts.Workers {
		wg.Go(func() {
			for c.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

// next handles one queued pod; it returns false once the queue is shut
// down.
func (c *controller) next(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		c.rt.log.Error(err, "Syncing a pod", "pod", key)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// sync brings one pod's work in line with the pod: it starts the work of a
// new pod, stops the work of a deleted one and then removes the pod, and
// leaves terminal pods alone.
func (c *controller) sync(ctx context.Context, key types.NamespacedName) error {
	pod, err := c.pods.Pods(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		for _, w := range c.rt.workersOf(key) {
			w.stop(errPodDeleted, 0)
		}
		c.rt.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	for _, w := range c.rt.workersOf(key) {
		if w.uid != pod.UID {
			w.stop(errPodDeleted, 0)
		}
	}
	if !c.runsOn(pod.Spec.NodeName) {
		return nil
	}
	if pod.DeletionTimestamp != nil {
		return c.terminate(ctx, pod)
	}
	if isTerminal(pod) {
		return nil
	}
	started, err := c.rt.startWorker(ctx, c, pod)
	if started {
		c.rt.log.V(1).Info("Running pod", "pod", key, "uid", pod.UID, "node", pod.Spec.NodeName)
	}
	return err
}

// terminate stops a deleted pod's work; once nothing runs, it removes the
// pod for good, as a kubelet does.
func (c *controller) terminate(ctx context.Context, pod *corev1.Pod) error {
	if w := c.rt.worker(pod.UID); w != nil {
		// The worker removes the pod when its work has stopped.
		w.stop(errPodDeleted, deletionGrace(pod))
		return nil
	}
	return c.rt.removePod(ctx, pod.Spec.NodeName, pod.Namespace, pod.Name, pod.UID)
}

// removePod deletes a pod whose work has stopped, with no grace period left
// and only if it is still the same pod, and removes its files; the delete
// is its node's kubelet's.
func (r *Runtime) removePod(ctx context.Context, node, namespace, name string, uid types.UID) error {
	kubelet, err := r.kubelets.of(node)
	if err != nil {
		return err
	}
	err = kubelet.client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64(0)),
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("removing pod %s/%s: %w", namespace, name, err)
	}
	dir := filepath.Join(r.podsDir, fmt.Sprintf("%s_%s_%s", namespace, name, uid))
	if err := os.RemoveAll(dir); err != nil {
		r.log.Error(err, "Removing a pod's files", "dir", dir)
	}
	return nil
}

// runsOn reports whether the runtime runs the pods of a node.
func (c *controller) runsOn(node string) bool {
	if node == "" {
		return false
	}
	_, err := c.nodes.Get(node)
	return err == nil
}

// hostIP is the node's internal address, the pod's host IP.
func (c *controller) hostIP(node string) string {
	n, err := c.nodes.Get(node)
	if err != nil {
		return ""
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// pruneDirs removes the files of pods that no longer exist, e.g. deleted
// while the runtime was not running.
func (c *controller) pruneDirs() {
	entries, err := os.ReadDir(c.rt.podsDir)
	if err != nil {
		return
	}
	pods, err := c.pods.List(labels.Everything())
	if err != nil {
		return
	}
	live := sets.New[string]()
	for _, p := range pods {
		live.Insert(string(p.UID))
	}
	for _, e := range entries {
		i := strings.LastIndexByte(e.Name(), '_')
		if i < 0 || live.Has(e.Name()[i+1:]) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(c.rt.podsDir, e.Name()))
	}
}

// isTerminal reports whether a pod has ended for good.
func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// deletionGrace is how long a deleted pod's processes get between SIGTERM
// and SIGKILL.
func deletionGrace(pod *corev1.Pod) time.Duration {
	if s := pod.DeletionGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return terminationGrace(pod)
}

// terminationGrace is the pod's terminationGracePeriodSeconds.
func terminationGrace(pod *corev1.Pod) time.Duration {
	if s := pod.Spec.TerminationGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return defaultGrace
}

// apiSource is an objectSource backed by the API server.
type apiSource struct {
	client kubernetes.Interface
}

func (s apiSource) configMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return s.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (s apiSource) secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return s.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}
