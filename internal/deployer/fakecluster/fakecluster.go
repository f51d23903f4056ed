// Package fakecluster is a client-go fake clientset that behaves enough like a
// cluster for the deployer's tests. The plain fake stores objects and nothing
// else; this one adds what the deployer relies on: the ReplicationController
// scale subresource, an RC manager (acting on scale updates and on writes
// that change spec.replicas) that creates and deletes pods and writes
// RC status (with availability that can lag behind), and a scripted kubelet
// that moves hook pods through their phases and serves their logs.
//
// It is for tests only: nothing in the product imports it.
package fakecluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

var (
	rcResource  = corev1.SchemeGroupVersion.WithResource("replicationcontrollers")
	podResource = corev1.SchemeGroupVersion.WithResource("pods")
)

// Step is one state a scripted pod goes through.
type Step struct {
	// Phase is the pod's phase.
	Phase corev1.PodPhase
	// Restarts is the container's restart count.
	Restarts int32
	// ExitCode, with a terminal phase, is the container's exit code.
	ExitCode int32
	// Reason and Message go to the pod status (e.g. DeadlineExceeded).
	Reason, Message string
	// Delete deletes the pod instead.
	Delete bool
	// After is how long after the previous step this one happens; a few
	// milliseconds when zero.
	After time.Duration
}

// Options shape the fake cluster's behaviour.
type Options struct {
	// AvailableAfter is how long new pods take to become available. Zero
	// makes them available as soon as they exist.
	AvailableAfter time.Duration
	// NeverAvailable names RCs whose pods never become available.
	NeverAvailable []string
}

// Scale is one scale operation the RC manager carried out, with the state of
// every RC right after it.
type Scale struct {
	// RC is the name of the scaled RC and Replicas its new count.
	RC       string
	Replicas int32
	// After maps every RC's name to its spec replicas and available pods.
	After map[string][2]int32
}

// Cluster is a fake clientset with the behaviour of an RC manager and a
// kubelet for scripted pods.
type Cluster struct {
	// Client is the clientset the code under test uses.
	Client *fake.Clientset

	ctx  context.Context
	opts Options

	// rcMu serializes every write of an RC, the client's and the
	// cluster's own: the fake's patch is a read and a write that would
	// otherwise lose a concurrent status update.
	rcMu sync.Mutex

	mu      sync.Mutex
	scales  []Scale
	scripts map[string][]Step
	logs    map[string]string
	created []string
	podSeq  int
	wg      sync.WaitGroup
}

// New returns a cluster holding objects. Its background work stops when ctx
// ends; call Wait before the test ends.
func New(ctx context.Context, opts Options, objects ...runtime.Object) *Cluster {
	c := &Cluster{
		Client:  fake.NewClientset(objects...),
		ctx:     ctx,
		opts:    opts,
		scripts: map[string][]Step{},
		logs:    map[string]string{},
	}
	c.Client.PrependReactor("get", "replicationcontrollers", c.getScale)
	c.Client.PrependReactor("update", "replicationcontrollers", c.updateScale)
	c.Client.PrependReactor("patch", "replicationcontrollers", c.writeRC)
	c.Client.PrependReactor("create", "pods", c.createPod)
	c.Client.PrependReactor("get", "pods", c.getLogs)
	return c
}

// Script makes the kubelet move the named pod through steps once it is
// created, and serve log as its log.
func (c *Cluster) Script(pod string, log string, steps ...Step) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scripts[pod] = steps
	c.logs[pod] = log
}

// Play moves an existing pod through steps in the background.
func (c *Cluster) Play(namespace, pod string, steps ...Step) {
	c.later(0, func() { c.play(namespace, pod, steps) })
}

// WaitWatches waits until clients have opened at least n watches of
// resource, so that a test changes the cluster only once the code under
// test is watching for that change; it fails after timeout.
func (c *Cluster) WaitWatches(ctx context.Context, resource string, n int, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return c.Watches(resource) >= n, nil
	})
}

// Watches counts the watches of resource that clients have opened.
func (c *Cluster) Watches(resource string) int {
	n := 0
	for _, a := range c.Client.Actions() {
		if a.GetVerb() == "watch" && a.GetResource().Resource == resource {
			n++
		}
	}
	return n
}

// Writes counts the writes (creates, updates, patches and deletes) clients
// have made, so that a test can tell a stuck rollout from a slow one.
func (c *Cluster) Writes() int {
	n := 0
	for _, a := range c.Client.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			n++
		}
	}
	return n
}

// Scales returns the scale operations so far.
func (c *Cluster) Scales() []Scale {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Scale(nil), c.scales...)
}

// Created returns the names of the pods created through the API, in order.
func (c *Cluster) Created() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.created...)
}

// Wait waits for the cluster's background work to end (it ends with the
// context given to New).
func (c *Cluster) Wait() { c.wg.Wait() }

// SetAvailable sets an RC's available pod count, as the RC manager does when
// pods have been ready for minReadySeconds.
func (c *Cluster) SetAvailable(name string, n int32) error {
	c.rcMu.Lock()
	defer c.rcMu.Unlock()
	rc, err := c.rc(name)
	if err != nil {
		return err
	}
	rc.Status.AvailableReplicas = n
	rc.Status.ReadyReplicas = n
	return c.Client.Tracker().Update(rcResource, rc, rc.Namespace)
}

// rc returns a copy of the RC of that name, in whichever namespace it is.
func (c *Cluster) rc(name string) (*corev1.ReplicationController, error) {
	rcs, err := c.rcs("")
	if err != nil {
		return nil, err
	}
	for _, rc := range rcs {
		if rc.Name == name {
			return rc.DeepCopy(), nil
		}
	}
	return nil, fmt.Errorf("replicationcontroller %s not found", name)
}

// getRC returns a copy of a stored RC.
func (c *Cluster) getRC(ns, name string) (*corev1.ReplicationController, error) {
	obj, err := c.Client.Tracker().Get(rcResource, ns, name)
	if err != nil {
		return nil, err
	}
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return nil, fmt.Errorf("stored %s/%s is a %T", ns, name, obj)
	}
	return rc.DeepCopy(), nil
}

// rcs lists the stored RCs of a namespace ("" for all).
func (c *Cluster) rcs(ns string) ([]corev1.ReplicationController, error) {
	obj, err := c.Client.Tracker().List(rcResource, corev1.SchemeGroupVersion.WithKind("ReplicationController"), ns)
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*corev1.ReplicationControllerList)
	if !ok {
		return nil, fmt.Errorf("listed a %T", obj)
	}
	return list.Items, nil
}

// pods lists the stored pods of a namespace.
func (c *Cluster) pods(ns string) ([]corev1.Pod, error) {
	obj, err := c.Client.Tracker().List(podResource, corev1.SchemeGroupVersion.WithKind("Pod"), ns)
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*corev1.PodList)
	if !ok {
		return nil, fmt.Errorf("listed a %T", obj)
	}
	return list.Items, nil
}

// getScale serves GET .../replicationcontrollers/NAME/scale.
func (c *Cluster) getScale(action k8stesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "scale" {
		return false, nil, nil
	}
	get, ok := action.(k8stesting.GetAction)
	if !ok {
		return true, nil, fmt.Errorf("unexpected action %T", action)
	}
	rc, err := c.getRC(get.GetNamespace(), get.GetName())
	if err != nil {
		return true, nil, err
	}
	return true, scaleOf(rc), nil
}

// updateScale serves PUT .../replicationcontrollers/NAME/scale and then acts
// as the RC manager.
func (c *Cluster) updateScale(action k8stesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "scale" {
		return c.writeRC(action)
	}
	c.rcMu.Lock()
	defer c.rcMu.Unlock()
	update, ok := action.(k8stesting.UpdateAction)
	if !ok {
		return true, nil, fmt.Errorf("unexpected action %T", action)
	}
	scale, ok := update.GetObject().(*autoscalingv1.Scale)
	if !ok {
		return true, nil, fmt.Errorf("scale update with a %T", update.GetObject())
	}
	rc, err := c.getRC(update.GetNamespace(), scale.Name)
	if err != nil {
		return true, nil, err
	}
	if err := c.manage(rc, scale.Spec.Replicas); err != nil {
		return true, nil, err
	}
	return true, scaleOf(rc), nil
}

// manage does what the RC manager would after a scale: the pods, the status.
func (c *Cluster) manage(rc *corev1.ReplicationController, n int32) error {
	old := rc.Status.AvailableReplicas
	rc.Spec.Replicas = &n
	rc.Generation++
	rc.Status.ObservedGeneration = rc.Generation
	rc.Status.Replicas = n
	rc.Status.AvailableReplicas = c.availableNow(rc.Name, old, n)
	rc.Status.ReadyReplicas = rc.Status.AvailableReplicas
	if err := c.Client.Tracker().Update(rcResource, rc, rc.Namespace); err != nil {
		return err
	}
	if err := c.syncPods(rc, n); err != nil {
		return err
	}
	c.record(rc.Name, n)
	if c.opts.AvailableAfter > 0 && !c.never(rc.Name) && rc.Status.AvailableReplicas < n {
		c.later(c.opts.AvailableAfter, func() { _ = c.catchUp(rc.Name) })
	}
	return nil
}

// availableNow is the RC's available count right after scaling from old
// available pods to n replicas.
func (c *Cluster) availableNow(name string, old, n int32) int32 {
	switch {
	case c.never(name):
		return 0
	case c.opts.AvailableAfter > 0:
		return min(old, n)
	default:
		return n
	}
}

// catchUp makes every current replica of the RC available.
func (c *Cluster) catchUp(name string) error {
	c.rcMu.Lock()
	defer c.rcMu.Unlock()
	rc, err := c.rc(name)
	if err != nil {
		return err
	}
	rc.Status.AvailableReplicas = ptr.Deref(rc.Spec.Replicas, 1)
	rc.Status.ReadyReplicas = rc.Status.AvailableReplicas
	return c.Client.Tracker().Update(rcResource, rc, rc.Namespace)
}

// writeRC applies a client's write of an RC, serialized with the cluster's,
// and acts as the RC manager when the write changed spec.replicas.
func (c *Cluster) writeRC(action k8stesting.Action) (bool, runtime.Object, error) {
	c.rcMu.Lock()
	defer c.rcMu.Unlock()
	var before *corev1.ReplicationController
	if named, ok := action.(interface{ GetName() string }); ok && named.GetName() != "" {
		before, _ = c.getRC(action.GetNamespace(), named.GetName())
	}
	handled, obj, err := k8stesting.ObjectReaction(c.Client.Tracker())(action)
	if err != nil || before == nil {
		return handled, obj, err
	}
	after, ok := obj.(*corev1.ReplicationController)
	if !ok || ptr.Deref(after.Spec.Replicas, 1) == ptr.Deref(before.Spec.Replicas, 1) {
		return handled, obj, err
	}
	rc := after.DeepCopy()
	if err := c.manage(rc, ptr.Deref(after.Spec.Replicas, 1)); err != nil {
		return true, nil, err
	}
	return true, rc, nil
}

func (c *Cluster) never(name string) bool {
	for _, n := range c.opts.NeverAvailable {
		if n == name {
			return true
		}
	}
	return false
}

// syncPods creates or deletes the RC's pods so that n exist.
func (c *Cluster) syncPods(rc *corev1.ReplicationController, n int32) error {
	pods, err := c.pods(rc.Namespace)
	if err != nil {
		return err
	}
	selector := labels.SelectorFromSet(rc.Spec.Selector)
	var mine []corev1.Pod
	for _, p := range pods {
		if selector.Matches(labels.Set(p.Labels)) {
			mine = append(mine, p)
		}
	}
	for i := int(n); i < len(mine); i++ {
		if err := c.Client.Tracker().Delete(podResource, rc.Namespace, mine[i].Name); err != nil {
			return err
		}
	}
	for i := len(mine); i < int(n); i++ {
		if err := c.Client.Tracker().Create(podResource, c.appPod(rc), rc.Namespace); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) appPod(rc *corev1.ReplicationController) *corev1.Pod {
	c.mu.Lock()
	c.podSeq++
	seq := c.podSeq
	c.mu.Unlock()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-%d", rc.Name, seq),
			Namespace: rc.Namespace,
			Labels:    rc.Spec.Selector,
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// record keeps a scale operation with every RC's state after it.
func (c *Cluster) record(name string, n int32) {
	after := map[string][2]int32{}
	rcs, _ := c.rcs("")
	for _, rc := range rcs {
		after[rc.Name] = [2]int32{ptr.Deref(rc.Spec.Replicas, 1), rc.Status.AvailableReplicas}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scales = append(c.scales, Scale{RC: name, Replicas: n, After: after})
}

// createPod stores a created pod and, when it has a script, starts playing it.
func (c *Cluster) createPod(action k8stesting.Action) (bool, runtime.Object, error) {
	create, ok := action.(k8stesting.CreateAction)
	if !ok {
		return true, nil, fmt.Errorf("unexpected action %T", action)
	}
	created, ok := create.GetObject().(*corev1.Pod)
	if !ok {
		return true, nil, fmt.Errorf("pod create with a %T", create.GetObject())
	}
	pod := created.DeepCopy()
	if err := c.Client.Tracker().Create(podResource, pod, create.GetNamespace()); err != nil {
		return true, nil, err
	}
	c.mu.Lock()
	c.created = append(c.created, pod.Name)
	steps := c.scripts[pod.Name]
	c.mu.Unlock()
	if len(steps) > 0 {
		c.later(0, func() { c.play(pod.Namespace, pod.Name, steps) })
	}
	return true, pod.DeepCopy(), nil
}

// play moves a pod through its steps, a little apart so that watchers see
// each of them.
func (c *Cluster) play(ns, name string, steps []Step) {
	for _, s := range steps {
		after := s.After
		if after == 0 {
			after = 5 * time.Millisecond
		}
		if !c.sleep(after) {
			return
		}
		if s.Delete {
			_ = c.Client.Tracker().Delete(podResource, ns, name)
			return
		}
		obj, err := c.Client.Tracker().Get(podResource, ns, name)
		if err != nil {
			return
		}
		stored, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		pod := stored.DeepCopy()
		apply(pod, s)
		if err := c.Client.Tracker().Update(podResource, pod, ns); err != nil {
			return
		}
	}
}

// apply writes a step into the pod's status as a kubelet would.
func apply(pod *corev1.Pod, s Step) {
	pod.Status.Phase = s.Phase
	pod.Status.Reason = s.Reason
	pod.Status.Message = s.Message
	if pod.Status.StartTime == nil {
		now := metav1.Now()
		pod.Status.StartTime = &now
	}
	cs := corev1.ContainerStatus{Name: containerName(pod), RestartCount: s.Restarts}
	switch s.Phase {
	case corev1.PodRunning:
		cs.State.Running = &corev1.ContainerStateRunning{}
	case corev1.PodSucceeded, corev1.PodFailed:
		reason := "Completed"
		if s.ExitCode != 0 {
			reason = "Error"
		}
		cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: s.ExitCode, Reason: reason}
	default:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
}

func containerName(pod *corev1.Pod) string {
	if len(pod.Spec.Containers) == 0 {
		return ""
	}
	return pod.Spec.Containers[0].Name
}

// getLogs serves GET .../pods/NAME/log. The fake clientset does not pass the
// pod's name to reactors, so it serves the log of the most recently created
// scripted pod: the deployer runs one hook pod at a time.
func (c *Cluster) getLogs(action k8stesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "log" {
		return false, nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.created) - 1; i >= 0; i-- {
		if log, ok := c.logs[c.created[i]]; ok {
			return true, &runtime.Unknown{Raw: []byte(log)}, nil
		}
	}
	return true, &runtime.Unknown{}, nil
}

// later runs f after d in the background, unless the context ends first.
func (c *Cluster) later(d time.Duration, f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if c.sleep(d) {
			f()
		}
	}()
}

func (c *Cluster) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func scaleOf(rc *corev1.ReplicationController) *autoscalingv1.Scale {
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: rc.Name, Namespace: rc.Namespace, ResourceVersion: rc.ResourceVersion},
		Spec:       autoscalingv1.ScaleSpec{Replicas: ptr.Deref(rc.Spec.Replicas, 1)},
		Status: autoscalingv1.ScaleStatus{
			Replicas: rc.Status.Replicas,
			Selector: labels.SelectorFromSet(rc.Spec.Selector).String(),
		},
	}
}
