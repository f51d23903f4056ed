// Package invariants watches a cluster while end-to-end tests and chaos runs
// drive it, and reports every moment a DeploymentConfig rule is broken:
//
//   - per DeploymentConfig, at most one deployer pod that has not finished;
//   - a deployment past New has only finished older deployments;
//   - no deployer pod leaves a finished phase;
//   - a Rolling rollout never runs more than desired + maxSurge pods (once
//     it has added any);
//   - a Rolling rollout never leaves fewer than desired - maxUnavailable
//     pods available (once that many were), beyond the pods that stopped
//     being available on their own (see checkAvailability);
//   - no ReplicationController has an empty image;
//   - every ReplicationController of a DeploymentConfig is controlled by it
//     (by the DeploymentConfig of that name that exists, for RCs made since
//     it was created);
//   - a DeploymentConfig's status.latestVersion never goes down.
//
// Checks run on every watch event against the informers' stores, which
// always hold a state the cluster was really in, so a violation is never a
// false alarm from events arriving late.
package invariants

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Violation is one broken rule, with the objects involved as YAML.
type Violation struct {
	Rule    string
	Detail  string
	Objects []string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: %s\n%s", v.Rule, v.Detail, strings.Join(v.Objects, "---\n"))
}

// Checker watches one namespace (or all, when empty) and records violations.
type Checker struct {
	pods cache.Indexer
	rcs  cache.Indexer
	// dcs holds the DeploymentConfigs as unstructured objects; nil when
	// the checker does not watch them.
	dcs  cache.Indexer
	stop context.CancelFunc

	mu         sync.Mutex
	violations []Violation
	seen       map[string]bool // rule+detail already reported
	finished   map[types.UID]corev1.PodPhase
	// available is whether each application pod was available when last
	// seen; rollouts is what checkAvailability remembers of each Rolling
	// rollout, by its RC's UID.
	available map[types.UID]bool
	rollouts  map[types.UID]*rollingAvailability
}

// Start begins watching and returns once the caches are synced.
func Start(ctx context.Context, cfg *rest.Config, namespace string) (*Checker, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("invariants client: %w", err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
	podInformer := factory.Core().V1().Pods().Informer()
	rcInformer := factory.Core().V1().ReplicationControllers().Informer()
	dcFactory, dcInformer, err := deploymentConfigInformer(cfg, namespace)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	c := newChecker(podInformer.GetIndexer(), rcInformer.GetIndexer())
	c.dcs = dcInformer.GetIndexer()
	c.stop = cancel
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.observe(obj) },
		UpdateFunc: func(_, obj any) { c.observe(obj) },
	}
	if _, err := podInformer.AddEventHandler(handler); err != nil {
		cancel()
		return nil, err
	}
	if _, err := rcInformer.AddEventHandler(handler); err != nil {
		cancel()
		return nil, err
	}
	if _, err := dcInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: c.observeDeploymentConfig}); err != nil {
		cancel()
		return nil, err
	}
	factory.Start(runCtx.Done())
	dcFactory.Start(runCtx.Done())
	syncCtx, syncCancel := context.WithTimeout(runCtx, time.Minute)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), podInformer.HasSynced, rcInformer.HasSynced, dcInformer.HasSynced) {
		cancel()
		return nil, fmt.Errorf("invariants: caches did not sync")
	}
	return c, nil
}

func newChecker(pods, rcs cache.Indexer) *Checker {
	return &Checker{
		pods:      pods,
		rcs:       rcs,
		stop:      func() {},
		seen:      map[string]bool{},
		finished:  map[types.UID]corev1.PodPhase{},
		available: map[types.UID]bool{},
		rollouts:  map[types.UID]*rollingAvailability{},
	}
}

// Stop ends the watch, runs the checks that only hold at rest and returns
// every violation seen.
func (c *Checker) Stop() []Violation {
	c.stop()
	c.checkOwners()
	c.checkOwnerUIDs()
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Violation(nil), c.violations...)
}

// Err formats violations as one error, or nil when there are none.
func Err(violations []Violation) error {
	if len(violations) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d invariant violation(s):\n", len(violations))
	for _, v := range violations {
		b.WriteString(v.String())
		b.WriteString("\n")
	}
	return fmt.Errorf("%s", b.String())
}

func (c *Checker) observe(obj any) {
	switch o := obj.(type) {
	case *corev1.Pod:
		c.checkPodPhase(o)
		if rc := c.rcOfPod(o); rc != nil {
			c.checkDeployers(rc.Namespace, rc.Labels[dcv1.DeploymentConfigLabel])
		}
		if dc := o.Labels[dcv1.DeploymentConfigSelectorLabel]; dc != "" {
			c.checkSurge(o.Namespace, dc)
			c.followAvailability(o, dc)
			c.checkAvailability(o.Namespace, dc)
		}
	case *corev1.ReplicationController:
		dc := o.Labels[dcv1.DeploymentConfigLabel]
		if dc == "" {
			return
		}
		c.checkImages(o)
		c.checkOrder(o.Namespace, dc)
		c.checkController(o)
		if deployment.Phase(o) != dcv1.DeploymentPhaseRunning {
			// A retry runs the same deployment again: from scratch.
			c.mu.Lock()
			delete(c.rollouts, o.UID)
			c.mu.Unlock()
		} else if desired, ok := deployment.DesiredReplicas(o); ok {
			c.noteDesired(o, desired)
		}
		c.checkAvailability(o.Namespace, dc)
	}
}

// report records a violation once.
func (c *Checker) report(rule, detail string, objects ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := rule + "\x00" + detail
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	v := Violation{Rule: rule, Detail: detail}
	for _, o := range objects {
		data, err := yaml.Marshal(o)
		if err != nil {
			data = []byte(err.Error())
		}
		v.Objects = append(v.Objects, string(data))
	}
	c.violations = append(c.violations, v)
}

func (c *Checker) rcOfPod(pod *corev1.Pod) *corev1.ReplicationController {
	name := pod.Labels[dcv1.DeployerPodForDeploymentLabel]
	if name == "" {
		return nil
	}
	obj, ok, _ := c.rcs.GetByKey(pod.Namespace + "/" + name)
	if !ok {
		return nil
	}
	return obj.(*corev1.ReplicationController)
}

// deploymentsOf returns a DeploymentConfig's RCs from the store, oldest first.
func (c *Checker) deploymentsOf(namespace, dc string) []*corev1.ReplicationController {
	var rcs []*corev1.ReplicationController
	for _, obj := range c.rcs.List() {
		rc := obj.(*corev1.ReplicationController)
		if rc.Namespace == namespace && rc.Labels[dcv1.DeploymentConfigLabel] == dc {
			rcs = append(rcs, rc)
		}
	}
	deployment.SortByVersion(rcs)
	return rcs
}

func isDeployerPod(pod *corev1.Pod) bool {
	_, deployer := pod.Labels[dcv1.DeployerPodForDeploymentLabel]
	_, hook := pod.Labels[dcv1.DeployerPodTypeLabel]
	return deployer && !hook
}

func podFinished(p corev1.PodPhase) bool {
	return p == corev1.PodSucceeded || p == corev1.PodFailed
}

// containersExited reports whether every container of the pod has exited:
// a real kubelet reports that a second or so before it has stopped the pod
// and writes the phase, and dc-controller counts the deployment done then.
// Such a pod runs no deployer any more.
func containersExited(pod *corev1.Pod) bool {
	if len(pod.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated == nil {
			return false
		}
	}
	return true
}

// checkPodPhase: a deployer pod never leaves Succeeded or Failed.
func (c *Checker) checkPodPhase(pod *corev1.Pod) {
	if !isDeployerPod(pod) {
		return
	}
	c.mu.Lock()
	before, wasFinished := c.finished[pod.UID]
	if podFinished(pod.Status.Phase) && !wasFinished {
		c.finished[pod.UID] = pod.Status.Phase
	}
	c.mu.Unlock()
	if wasFinished && pod.Status.Phase != before {
		c.report("deployer pod left a finished phase",
			fmt.Sprintf("pod %s/%s went from %s to %s", pod.Namespace, pod.Name, before, pod.Status.Phase), pod)
	}
}

// checkDeployers: at most one unfinished deployer pod per DeploymentConfig.
func (c *Checker) checkDeployers(namespace, dc string) {
	var running []any
	var names []string
	for _, rc := range c.deploymentsOf(namespace, dc) {
		obj, ok, _ := c.pods.GetByKey(namespace + "/" + deployment.DeployerPodName(rc.Name))
		if !ok {
			continue
		}
		pod := obj.(*corev1.Pod)
		if isDeployerPod(pod) && pod.Labels[dcv1.DeployerPodForDeploymentLabel] == rc.Name && !podFinished(pod.Status.Phase) && !containersExited(pod) {
			running = append(running, pod)
			names = append(names, pod.Name)
		}
	}
	if len(running) > 1 {
		c.report("two deployers at once", fmt.Sprintf("dc %s/%s has unfinished deployer pods %v", namespace, dc, names), running...)
	}
}

// checkOrder: a deployment past New has only finished older deployments.
func (c *Checker) checkOrder(namespace, dc string) {
	rcs := c.deploymentsOf(namespace, dc)
	for i, rc := range rcs {
		if deployment.Phase(rc) == dcv1.DeploymentPhaseNew {
			continue
		}
		for _, older := range rcs[:i] {
			if !deployment.IsTerminal(deployment.Phase(older)) {
				c.report("deployments out of order",
					fmt.Sprintf("%s is %s while older %s is %s", rc.Name, deployment.Phase(rc), older.Name, deployment.Phase(older)), older, rc)
			}
		}
	}
}

// checkImages: no RC runs a container without an image.
func (c *Checker) checkImages(rc *corev1.ReplicationController) {
	if rc.Spec.Template == nil {
		return
	}
	for _, ctr := range append(append([]corev1.Container(nil), rc.Spec.Template.Spec.InitContainers...), rc.Spec.Template.Spec.Containers...) {
		if strings.TrimSpace(ctr.Image) == "" {
			c.report("empty image", fmt.Sprintf("rc %s/%s container %s has no image", rc.Namespace, rc.Name, ctr.Name), rc)
		}
	}
}

// checkController: an RC of a DeploymentConfig is controlled by nothing
// else.
func (c *Checker) checkController(rc *corev1.ReplicationController) {
	for _, ref := range rc.OwnerReferences {
		if ref.Controller == nil || !*ref.Controller {
			continue
		}
		if ref.Kind != "DeploymentConfig" || ref.APIVersion != dcv1.GroupVersion.String() || ref.Name != rc.Labels[dcv1.DeploymentConfigLabel] {
			c.report("foreign controller", fmt.Sprintf("rc %s/%s is controlled by %s %s", rc.Namespace, rc.Name, ref.Kind, ref.Name), rc)
		}
	}
}

// checkOwners runs at rest: every RC of a DeploymentConfig has a controller
// reference to it.
func (c *Checker) checkOwners() {
	for _, obj := range c.rcs.List() {
		rc := obj.(*corev1.ReplicationController)
		dc := rc.Labels[dcv1.DeploymentConfigLabel]
		if dc == "" || rc.DeletionTimestamp != nil {
			continue
		}
		if ref := metav1.GetControllerOf(rc); ref == nil || ref.Kind != "DeploymentConfig" || ref.Name != dc {
			c.report("rc without its controller", fmt.Sprintf("rc %s/%s of dc %s has controller %+v", rc.Namespace, rc.Name, dc, ref), rc)
		}
	}
}

// checkSurge: while a Rolling deployment is running over an older one, the
// DeploymentConfig's live pods never exceed desired + maxSurge once the new
// deployment has pods it asked for. Before that, older deployments may run
// more: when the DeploymentConfig was scaled down during the previous
// rollout, the last complete deployment still runs the old count until this
// rollout scales it down, and the strategy may not add a pod until it has.
// Pods of the new deployment while its spec is still 0 are left over from
// an attempt before a retry (the fall-back scaled it to 0 and brought the
// old one back), which the RC manager has yet to remove.
func (c *Checker) checkSurge(namespace, dc string) {
	rcs := c.deploymentsOf(namespace, dc)
	var active *corev1.ReplicationController
	for _, rc := range rcs {
		if p := deployment.Phase(rc); p == dcv1.DeploymentPhaseRunning {
			active = rc
		}
	}
	if active == nil {
		return
	}
	config, err := deployment.DecodeConfig(active)
	if err != nil || config.Spec.Strategy.Type != dcv1.DeploymentStrategyTypeRolling || config.Spec.Strategy.RollingParams == nil {
		return
	}
	desired, ok := deployment.DesiredReplicas(active)
	if !ok {
		return
	}
	// A canary's DeploymentConfig scaled down mid-rollout runs the old count
	// until the deployer's next step takes up the new one: the limit is that
	// of the most replicas the rollout was asked for.
	desired = c.noteDesired(active, desired)
	surge, err := intstr.GetScaledValueFromIntOrPercent(config.Spec.Strategy.RollingParams.MaxSurge, int(desired), true)
	if err != nil {
		return
	}
	if config.Spec.Strategy.RollingParams.TrafficRouting != nil {
		// A routed canary's weights are the route's: the stable
		// deployment keeps every pod until the end, and the canary has
		// at most desired pods of its own, as in Argo Rollouts.
		surge = int(desired)
	}
	var live []string
	added := false
	for _, obj := range c.pods.List() {
		pod := obj.(*corev1.Pod)
		if pod.Namespace == namespace && pod.Labels[dcv1.DeploymentConfigSelectorLabel] == dc &&
			pod.DeletionTimestamp == nil && !podFinished(pod.Status.Phase) {
			live = append(live, pod.Name)
			added = added || pod.Labels[dcv1.DeploymentSelectorLabel] == active.Name && deployment.Replicas(active) > 0
		}
	}
	if limit := int(desired) + surge; added && len(live) > limit {
		sort.Strings(live)
		c.report("surge exceeded", fmt.Sprintf("dc %s/%s runs %d pods %v during %s, limit %d (desired %d + maxSurge %d)",
			namespace, dc, len(live), live, active.Name, limit, desired, surge), active)
	}
}

// noteDesired records that the running deployment rc was asked for
// desired replicas and returns the most it was asked for.
func (c *Checker) noteDesired(rc *corev1.ReplicationController, desired int32) int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	state := c.rolloutState(rc)
	state.maxDesired = max(state.maxDesired, desired)
	return state.maxDesired
}

// rollingAvailability is what checkAvailability remembers of one Rolling
// rollout.
type rollingAvailability struct {
	// reached is set once minAvailable pods were available during the
	// rollout: a rollout that starts below (the first one, or one after the
	// DeploymentConfig was scaled up) cannot be held to it before.
	reached bool
	// minAvailable is the minimum reached refers to. A DeploymentConfig
	// scaled up during a canary raises it (dc-controller passes the new
	// count to the deployer), and the new minimum must be reached anew.
	minAvailable int
	// maxDesired is the most replicas the rollout was asked for, which
	// bounds its surge.
	maxDesired int32
	// lost holds the pods that stopped being available on their own during
	// the rollout: they went unready or finished without being deleted.
	lost map[types.UID]bool
}

// podAvailable reports whether an application pod counts as available:
// running, Ready and not being deleted. minReadySeconds is not waited for,
// so the count is never below the RC manager's and a violation is never a
// false alarm from a pod that was about to become available.
func podAvailable(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// followAvailability records an application pod's availability and, when
// it stopped being available without being deleted (a crash, a failed
// readiness probe, a kill), counts it against the Rolling rollout in
// progress: the strategy removes pods only by scaling an RC down, which
// deletes them.
func (c *Checker) followAvailability(pod *corev1.Pod, dc string) {
	now := podAvailable(pod)
	c.mu.Lock()
	was := c.available[pod.UID]
	c.available[pod.UID] = now
	c.mu.Unlock()
	if !was || now || pod.DeletionTimestamp != nil {
		return
	}
	active, _, ok := c.rollingRollout(pod.Namespace, dc)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rolloutState(active).lost[pod.UID] = true
}

// rolloutState returns what is remembered of a rollout; the caller holds
// c.mu.
func (c *Checker) rolloutState(rc *corev1.ReplicationController) *rollingAvailability {
	state := c.rollouts[rc.UID]
	if state == nil {
		state = &rollingAvailability{lost: map[types.UID]bool{}}
		c.rollouts[rc.UID] = state
	}
	return state
}

// rollingRollout returns the DeploymentConfig's Running Rolling deployment
// and the fewest pods it must keep available (desired - maxUnavailable,
// resolved as OpenShift does: a percentage rounds down, and 1 when maxSurge
// and maxUnavailable both come to 0), or false when none is running.
func (c *Checker) rollingRollout(namespace, dc string) (*corev1.ReplicationController, int, bool) {
	var active *corev1.ReplicationController
	for _, rc := range c.deploymentsOf(namespace, dc) {
		if deployment.Phase(rc) == dcv1.DeploymentPhaseRunning {
			active = rc
		}
	}
	if active == nil {
		return nil, 0, false
	}
	config, err := deployment.DecodeConfig(active)
	if err != nil || config.Spec.Strategy.Type != dcv1.DeploymentStrategyTypeRolling || config.Spec.Strategy.RollingParams == nil {
		return nil, 0, false
	}
	desired, ok := deployment.DesiredReplicas(active)
	if !ok {
		return nil, 0, false
	}
	params := config.Spec.Strategy.RollingParams
	surge, unavailable := 0, 0
	if params.MaxSurge != nil {
		if surge, err = intstr.GetScaledValueFromIntOrPercent(params.MaxSurge, int(desired), true); err != nil {
			return nil, 0, false
		}
	}
	if params.MaxUnavailable != nil {
		if unavailable, err = intstr.GetScaledValueFromIntOrPercent(params.MaxUnavailable, int(desired), false); err != nil {
			return nil, 0, false
		}
	}
	if surge <= 0 && unavailable <= 0 {
		unavailable = 1
	}
	return active, max(int(desired)-unavailable, 0), true
}

// checkAvailability: while a Rolling deployment is running, the
// DeploymentConfig keeps at least desired - maxUnavailable pods available,
// once it has had that many, but for pods that stopped being available on
// their own since. The pods counted are those of the running deployment and
// older ones; a pod of a newer deployment means the stores are between two
// rollouts, and nothing is judged.
func (c *Checker) checkAvailability(namespace, dc string) {
	active, minAvailable, ok := c.rollingRollout(namespace, dc)
	if !ok {
		return
	}
	versions := map[string]int64{}
	for _, rc := range c.deploymentsOf(namespace, dc) {
		versions[rc.Name] = deployment.Version(rc)
	}
	var available []string
	for _, obj := range c.pods.List() {
		pod := obj.(*corev1.Pod)
		if pod.Namespace != namespace || pod.Labels[dcv1.DeploymentConfigSelectorLabel] != dc {
			continue
		}
		if v, known := versions[pod.Labels[dcv1.DeploymentSelectorLabel]]; !known || v > deployment.Version(active) {
			return
		}
		if podAvailable(pod) {
			available = append(available, pod.Name)
		}
	}
	c.mu.Lock()
	state := c.rolloutState(active)
	if minAvailable > state.minAvailable {
		state.reached = false
	}
	state.minAvailable = minAvailable
	if len(available) >= minAvailable {
		state.reached = true
	}
	reached, lost := state.reached, len(state.lost)
	c.mu.Unlock()
	if reached && len(available)+lost < minAvailable {
		sort.Strings(available)
		c.report("availability dropped", fmt.Sprintf("dc %s/%s has %d pods available %v during %s, minimum %d (desired - maxUnavailable), %d stopped on their own",
			namespace, dc, len(available), available, active.Name, minAvailable, lost), active)
	}
}
