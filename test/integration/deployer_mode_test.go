package integration

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/podruntime"
	"github.com/deployconfig/deployconfig/test/integration/controlplane"
)

// The tests of this file run the same rollouts twice, once by a deployer
// pod (the default) and once in dc-controller (the DeploymentConfig's
// deployconfig.io/deployer-mode: controller-when-possible), and check that
// a user sees the same: phases, annotations, conditions, status, events,
// Services and the rollout's log. Unlike the rest of the package, the
// rollouts really run: the playground's pod runtime runs the deployer pods
// (bound to a node of the test's own) and the test plays the RC manager.

// deployerModes are the two ways a rollout runs; a case runs in both.
var deployerModes = []string{dcv1.DeployerModePod, dcv1.DeployerModeControllerWhenPossible}

// brokenImage is an image whose pods the played RC manager never reports
// available, so that a rollout to it times out.
const brokenImage = "registry.example.com/web:broken"

// runnerNodeLabel selects the node whose pods a test's pod runtime runs.
const runnerNodeLabel = "deployconfig.io/integration-runner"

// modeRollouts is one namespace whose rollouts run in one mode, with what
// its test saw of them.
type modeRollouts struct {
	mode string
	ns   string
	// stateDir holds the pod runtime's files: the deployer pods' logs.
	stateDir string

	mu sync.Mutex
	// pods are the pods labelled as deployer or hook pods, by name, that
	// existed in the namespace.
	pods map[string]bool
	// checkpoints are the states the test recorded, by name, in order.
	checkpoints []checkpoint
	// logs are the rollout logs the test read, by deployment.
	logs map[string][]string
}

// checkpoint is the normalised state of a DeploymentConfig and everything
// a user sees of it at one point of a scenario.
type checkpoint struct {
	name  string
	state []string
}

// newModeRollouts makes a namespace whose rollouts run in mode: a pod
// runtime for its deployer and hook pods, a binder in place of the
// scheduler, and a played RC manager. They stop with t.
func newModeRollouts(t *testing.T, mode string) *modeRollouts {
	t.Helper()
	m := &modeRollouts{mode: mode, ns: newNamespace(t), stateDir: t.TempDir(), pods: map[string]bool{}, logs: map[string][]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	cs := kubernetes.NewForConfigOrDie(cluster.cfg)
	node := m.createNode(t)
	rt, err := podruntime.New(podruntime.Options{
		Config:                     cluster.cfg,
		Kubeconfig:                 cluster.kubeconfig,
		StateDir:                   m.stateDir,
		Deploy:                     podruntime.DeployInProcess,
		DeployerImages:             []string{controlplane.DeployerImage},
		NodeSelector:               labels.SelectorFromSet(labels.Set{runnerNodeLabel: m.ns}),
		ImpersonateServiceAccounts: true,
		Log:                        logr.Discard(),
	})
	if err != nil {
		t.Fatalf("pod runtime: %v", err)
	}
	wg.Go(func() {
		if err := rt.Run(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "pod runtime of %s: %v\n", m.ns, err)
		}
	})
	m.bindPods(ctx, &wg, cs, node)
	m.playRCManager(ctx, &wg, cs)
	return m
}

// createNode makes the node the namespace's deployer and hook pods are
// bound to; only this test's pod runtime runs pods there.
func (m *modeRollouts) createNode(t *testing.T) string {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "runner-" + m.ns, Labels: map[string]string{runnerNodeLabel: m.ns}}}
	mustCreate(t, node)
	t.Cleanup(func() { _ = cluster.client.Delete(context.Background(), node) })
	return node.Name
}

// bindPods plays the scheduler for the namespace's deployer and hook pods,
// binding each to node, and notes every such pod.
func (m *modeRollouts) bindPods(ctx context.Context, wg *sync.WaitGroup, cs kubernetes.Interface, node string) {
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(m.ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = dcv1.DeployerPodForDeploymentLabel }))
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	note := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			m.mu.Lock()
			m.pods[pod.Name] = true
			m.mu.Unlock()
			if pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil {
				queue.Add(pod.Name)
			}
		}
	}
	_, _ = factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: note, UpdateFunc: func(_, obj any) { note(obj) },
	})
	bind := func(name string) error {
		err := cs.CoreV1().Pods(m.ns).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: m.ns, Name: name},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}, metav1.CreateOptions{})
		// A pod that is gone or bound already needs nothing more.
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	m.work(ctx, wg, factory, queue, bind)
}

// playRCManager reports the pods of the namespace's RCs as the RC manager
// would once they run: as many as spec.replicas, all available, except
// those of brokenImage, which never are.
func (m *modeRollouts) playRCManager(ctx context.Context, wg *sync.WaitGroup, cs kubernetes.Interface) {
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(m.ns))
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if rc, ok := obj.(*corev1.ReplicationController); ok {
			queue.Add(rc.Name)
		}
	}
	_, _ = factory.Core().V1().ReplicationControllers().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	report := func(name string) error {
		rcs := cs.CoreV1().ReplicationControllers(m.ns)
		rc, err := rcs.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if reported(rc) {
			return nil
		}
		rc.Status = playedStatus(rc)
		_, err = rcs.UpdateStatus(ctx, rc, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	m.work(ctx, wg, factory, queue, report)
}

// playedStatus is the status the RC manager would give rc once its pods
// run.
func playedStatus(rc *corev1.ReplicationController) corev1.ReplicationControllerStatus {
	n := deployment.Replicas(rc)
	available := n
	if t := rc.Spec.Template; t != nil && len(t.Spec.Containers) > 0 && t.Spec.Containers[0].Image == brokenImage {
		available = 0
	}
	return corev1.ReplicationControllerStatus{Replicas: n, FullyLabeledReplicas: n, ReadyReplicas: available,
		AvailableReplicas: available, ObservedGeneration: rc.Generation}
}

// reported reports whether rc's status is the one the played RC manager
// gives it.
func reported(rc *corev1.ReplicationController) bool {
	want := playedStatus(rc)
	s := rc.Status
	return s.Replicas == want.Replicas && s.FullyLabeledReplicas == want.FullyLabeledReplicas && s.ReadyReplicas == want.ReadyReplicas &&
		s.AvailableReplicas == want.AvailableReplicas && s.ObservedGeneration == want.ObservedGeneration
}

// work starts the informers and a worker that calls do for each queued
// name, again later when it fails, until ctx ends.
func (m *modeRollouts) work(ctx context.Context, wg *sync.WaitGroup, factory informers.SharedInformerFactory,
	queue workqueue.TypedRateLimitingInterface[string], do func(string) error) {
	factory.Start(ctx.Done())
	wg.Go(func() {
		<-ctx.Done()
		queue.ShutDown()
		factory.Shutdown()
	})
	wg.Go(func() {
		for {
			name, shutdown := queue.Get()
			if shutdown {
				return
			}
			if err := do(name); err != nil && ctx.Err() == nil {
				queue.AddRateLimited(name)
			} else {
				queue.Forget(name)
			}
			queue.Done(name)
		}
	})
}

// dc returns a DeploymentConfig of the namespace that rolls out in the
// mode: the default (pod) carries no annotation.
func (m *modeRollouts) dc(name string, mutate func(*dcv1.DeploymentConfig)) *dcv1.DeploymentConfig {
	return newDC(m.ns, name, func(dc *dcv1.DeploymentConfig) {
		if m.mode != dcv1.DeployerModePod {
			dc.Annotations = map[string]string{dcv1.DeployerModeAnnotation: m.mode}
		}
		if mutate != nil {
			mutate(dc)
		}
	})
}

// kubectlDC runs a kubectl dc command in the namespace and fails the test
// unless it succeeds.
func (m *modeRollouts) kubectlDC(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := kubectlDC(testContext(t, time.Minute), m.ns, args...)
	if code != 0 {
		t.Fatalf("kubectl dc %s: exit %d:\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// settled waits until the DeploymentConfig's rollouts are done with every
// RC at its count of replicas, reported by the RC manager, and the
// condition of a rollout that ended that way.
func (m *modeRollouts) settled(t *testing.T, dc string, replicas map[string]int32, progressing corev1.ConditionStatus, reason string) {
	t.Helper()
	for rc, n := range replicas {
		waitRC(t, m.ns, rc, fmt.Sprintf("%d replicas reported", n), func(rc *corev1.ReplicationController) bool {
			return deployment.Replicas(rc) == n && reported(rc) && deployment.IsTerminal(deployment.Phase(rc))
		})
	}
	waitCondition(t, m.ns, dc, dcv1.DeploymentProgressing, progressing, reason)
}

// countsFollow waits until the RC manager has reported every RC of the
// DeploymentConfig and its status counts their pods, so that a checkpoint
// never catches either half-way.
func (m *modeRollouts) countsFollow(t *testing.T, name string) {
	t.Helper()
	waitFor(t, "dc "+name+" status to count the pods", func(ctx context.Context) (bool, string, error) {
		rcs := &corev1.ReplicationControllerList{}
		if err := cluster.client.List(ctx, rcs, client.InNamespace(m.ns)); err != nil {
			return false, "", err
		}
		dc := getDC(t, m.ns, name)
		var want dcv1.DeploymentConfigStatus
		for i := range rcs.Items {
			rc := &rcs.Items[i]
			if rc.Annotations[dcv1.DeploymentConfigAnnotation] != name {
				continue
			}
			if !reported(rc) {
				return false, "rc " + rc.Name + " not reported yet", nil
			}
			want.Replicas += rc.Status.Replicas
			want.AvailableReplicas += rc.Status.AvailableReplicas
			if deployment.Version(rc) == dc.Status.LatestVersion {
				want.UpdatedReplicas = rc.Status.Replicas
			}
		}
		s := dc.Status
		return s.ObservedGeneration == dc.Generation && s.Replicas == want.Replicas && s.AvailableReplicas == want.AvailableReplicas &&
				s.UpdatedReplicas == want.UpdatedReplicas,
			fmt.Sprintf("observed %d of %d, replicas %d/%d, available %d/%d, updated %d/%d", s.ObservedGeneration, dc.Generation,
				s.Replicas, want.Replicas, s.AvailableReplicas, want.AvailableReplicas, s.UpdatedReplicas, want.UpdatedReplicas), nil
	})
}

// record notes the state of the DeploymentConfig as a checkpoint.
func (m *modeRollouts) record(t *testing.T, name, dc string) {
	t.Helper()
	m.countsFollow(t, dc)
	state := m.state(t, dc)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.checkpoints = append(m.checkpoints, checkpoint{name: name, state: state})
}

// state renders what a user sees of a DeploymentConfig, with the namespace,
// times and request IDs taken out, and without what only one mode has: the
// runner and its start (and the count of writes of the progress record,
// of which the controller's start is one), the log, the deployer pod's
// name and creation failures, the encoded DeploymentConfig (which names
// the namespace).
func (m *modeRollouts) state(t *testing.T, name string) []string {
	t.Helper()
	ctx := context.Background()
	norm := m.normalize
	dc := getDC(t, m.ns, name)
	s := dc.Status
	out := []string{fmt.Sprintf("dc latestVersion=%d replicas=%d updated=%d ready=%d available=%d unavailable=%d",
		s.LatestVersion, s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, s.AvailableReplicas, s.UnavailableReplicas)}
	if s.Details != nil {
		out = append(out, "dc details="+norm(s.Details.Message))
	}
	for _, c := range s.Conditions {
		out = append(out, fmt.Sprintf("dc condition %s=%s (%s) %s", c.Type, c.Status, c.Reason, norm(c.Message)))
	}
	rcs := &corev1.ReplicationControllerList{}
	if err := cluster.client.List(ctx, rcs, client.InNamespace(m.ns)); err != nil {
		t.Fatalf("list rcs: %v", err)
	}
	for _, rc := range rcs.Items {
		if rc.Annotations[dcv1.DeploymentConfigAnnotation] != name {
			continue
		}
		image := ""
		if rc.Spec.Template != nil && len(rc.Spec.Template.Spec.Containers) > 0 {
			image = rc.Spec.Template.Spec.Containers[0].Image
		}
		out = append(out, fmt.Sprintf("rc %s replicas=%d image=%s labels=%v", rc.Name, deployment.Replicas(&rc), image, rc.Labels))
		for k, v := range rc.Annotations {
			switch k {
			case dcv1.DeploymentLogAnnotation, dcv1.DeployerPodAnnotation,
				dcv1.EncodedDeploymentConfigAnnotation, dcv1.DeployerPodCreateFailingSinceAnnotation:
				continue
			case dcv1.RolloutProgressAnnotation:
				v = progressState(&rc)
			case dcv1.PromoteRequestAnnotation:
				v = requestState(&rc)
			}
			out = append(out, fmt.Sprintf("rc %s annotation %s=%s", rc.Name, k, norm(v)))
		}
	}
	services := &corev1.ServiceList{}
	if err := cluster.client.List(ctx, services, client.InNamespace(m.ns)); err != nil {
		t.Fatalf("list services: %v", err)
	}
	for _, svc := range services.Items {
		out = append(out, fmt.Sprintf("service %s selector=%v", svc.Name, svc.Spec.Selector))
	}
	sort.Strings(out)
	return out
}

// progressState renders a deployment's progress record as both modes
// write it: without its runner, its count of writes and its times.
func progressState(rc *corev1.ReplicationController) string {
	p, err := deployment.ReadProgress(rc)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	out := fmt.Sprintf("stage=%s step=%d/%d switch=%q consumed=%d", p.Stage, p.Step, p.Steps, p.Switch, len(p.Consumed))
	if p.Weight != nil {
		out += fmt.Sprintf(" weight=%d", *p.Weight)
	}
	if w := p.Wait; w != nil {
		out += fmt.Sprintf(" wait=%s/%s", w.Gate, w.Reason)
		if w.Duration != nil {
			out += " for " + w.Duration.Duration.String()
		}
	}
	if a := p.Analysis; a != nil {
		out += " analysis=" + a.Label
	}
	return out
}

// requestState renders a deployment's promote request without its ID.
func requestState(rc *corev1.ReplicationController) string {
	req, ok := deployment.ReadRequest(rc)
	if !ok {
		return "unreadable: " + rc.Annotations[dcv1.PromoteRequestAnnotation]
	}
	return fmt.Sprintf("%s gate=%q consumed=%t", req.Kind, req.Gate, deployment.ProgressOf(rc).HasConsumed(req.ID))
}

// controllerFailureWording is how dc-controller words the reason of a
// rollout it ran that failed, where a deployer pod's failure reads
// podFailureWording (the reason names what failed). It is the one wording that differs between the modes; the
// comparison takes it as the pod's, so that everything else must match.
const (
	controllerFailureWording = "deployer failed: "
	podFailureWording        = "deployer pod failed: "
)

// normalize takes out of a value what differs between two runs of the
// same scenario: the namespace and, in controller mode, the failure
// wording.
func (m *modeRollouts) normalize(v string) string {
	v = strings.ReplaceAll(v, m.ns, "NS")
	if m.mode != dcv1.DeployerModePod {
		v = strings.ReplaceAll(v, controllerFailureWording, podFailureWording)
	}
	return v
}

// readLog reads the log of a deployment that has ended, as its user
// would: the deployer pod's log in pod mode, the RC's annotation in
// controller mode (where it also checks that `kubectl dc logs` prints it),
// and notes its lines.
func (m *modeRollouts) readLog(t *testing.T, dc, rcName string) {
	t.Helper()
	rc, err := getRC(context.Background(), m.ns, rcName)
	if err != nil {
		t.Fatalf("get rc %s: %v", rcName, err)
	}
	var text string
	if m.mode == dcv1.DeployerModePod {
		text = m.podLog(t, rcName)
	} else {
		text = rc.Annotations[dcv1.DeploymentLogAnnotation]
		if text == "" {
			t.Errorf("rc %s: no %s annotation: annotations %v", rcName, dcv1.DeploymentLogAnnotation, rc.Annotations)
		}
		if len(text) > 16*1024 {
			t.Errorf("rc %s: log annotation of %d bytes, want at most 16 KiB", rcName, len(text))
		}
		if got := m.kubectlDC(t, "logs", dc, "--version", fmt.Sprint(deployment.Version(rc))); strings.TrimRight(got, "\n") != strings.TrimRight(text, "\n") {
			t.Errorf("kubectl dc logs %s --version %d printed\n%s\nwant the RC's log\n%s", dc, deployment.Version(rc), got, text)
		}
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		lines = append(lines, strings.ReplaceAll(l, m.ns, "NS"))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logs[rcName] = lines
}

// podLog is the output of the deployer pod of a deployment as the pod
// runtime keeps it in its CRI log file: what `kubectl logs` prints on a
// cluster.
func (m *modeRollouts) podLog(t *testing.T, rcName string) string {
	t.Helper()
	pod := &corev1.Pod{}
	key := types.NamespacedName{Namespace: m.ns, Name: deployment.DeployerPodName(rcName)}
	if err := cluster.client.Get(context.Background(), key, pod); err != nil {
		t.Fatalf("deployer pod of %s: %v", rcName, err)
	}
	file := filepath.Join(m.stateDir, "pods", fmt.Sprintf("%s_%s_%s", m.ns, pod.Name, pod.UID), "deployment.log")
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("deployer pod log: %v", err)
	}
	defer f.Close()
	var text strings.Builder
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		// TIMESTAMP STREAM TAG TEXT; a P(artial) record continues on the
		// next one.
		fields := strings.SplitN(scanner.Text(), " ", 4)
		if len(fields) < 3 {
			continue
		}
		if len(fields) == 4 {
			text.WriteString(fields[3])
		}
		if fields[2] == "F" {
			text.WriteByte('\n')
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	return text.String()
}

// checkRunner checks who ran the namespace's rollouts: in pod mode (or
// when wantPods) deployer pods, named as the runner of every RC; in
// controller mode no pod at all, and every RC that started names the
// controller as its runner.
func (m *modeRollouts) checkRunner(t *testing.T, wantPods bool) {
	t.Helper()
	rcs := &corev1.ReplicationControllerList{}
	if err := cluster.client.List(context.Background(), rcs, client.InNamespace(m.ns)); err != nil {
		t.Fatalf("list rcs: %v", err)
	}
	m.mu.Lock()
	pods := slices.Sorted(maps.Keys(m.pods))
	m.mu.Unlock()
	byPod := wantPods || m.mode == dcv1.DeployerModePod
	for _, rc := range rcs.Items {
		runner := deployment.ProgressOf(&rc).Runner
		switch {
		case byPod && (runner.Kind != deployment.RunnerPod || runner.Holder != deployment.DeployerPodName(rc.Name)):
			t.Errorf("rc %s run by a deployer pod has the runner %+v, want its deployer pod", rc.Name, runner)
		case byPod && !slices.Contains(pods, deployment.DeployerPodName(rc.Name)):
			t.Errorf("rc %s has had no deployer pod; pods seen: %v", rc.Name, pods)
		case !byPod && runner.Kind != deployment.RunnerController:
			t.Errorf("rc %s has the runner %+v, want %q", rc.Name, runner, deployment.RunnerController)
		}
	}
	if !byPod && len(pods) > 0 {
		t.Errorf("rollouts run in the controller created pods %v", pods)
	}
}

// events are the reasons of the events about the namespace's
// DeploymentConfigs and RCs, as "Kind/name: Reason".
func (m *modeRollouts) events(ctx context.Context) (map[string]bool, error) {
	list := &corev1.EventList{}
	if err := cluster.client.List(ctx, list, client.InNamespace(m.ns)); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, e := range list.Items {
		if k := e.InvolvedObject.Kind; k == "DeploymentConfig" || k == "ReplicationController" {
			out[fmt.Sprintf("%s/%s: %s", k, e.InvolvedObject.Name, e.Reason)] = true
		}
	}
	return out, nil
}

// compareModes fails the test where what the rollouts of the two modes
// showed differs: the checkpoints, the logs (the controller's log may keep
// earlier runs of a retried deployment before the pod's lines) and the
// events (waited for: events are written in the background).
func compareModes(t *testing.T, pod, ctrl *modeRollouts) {
	t.Helper()
	if len(pod.checkpoints) != len(ctrl.checkpoints) {
		t.Fatalf("%d checkpoints in pod mode, %d in controller mode", len(pod.checkpoints), len(ctrl.checkpoints))
	}
	for i, p := range pod.checkpoints {
		c := ctrl.checkpoints[i]
		if d := lineDiff(p.state, c.state); d != "" {
			t.Errorf("checkpoint %q differs (- pod, + controller):\n%s", p.name, d)
		}
	}
	for rc, lines := range pod.logs {
		got, ok := ctrl.logs[rc]
		if !ok {
			continue
		}
		if len(got) < len(lines) || !slices.Equal(got[len(got)-len(lines):], lines) {
			t.Errorf("log of %s differs (- pod, + controller):\n%s", rc, lineDiff(lines, got))
		} else if len(got) > len(lines) {
			t.Logf("log of %s in controller mode starts with %d more lines: %q", rc, len(got)-len(lines), got[:len(got)-len(lines)])
		}
	}
	sameEvents(t, pod, ctrl)
	sameEvents(t, ctrl, pod)
}

// sameEvents waits until every event reason of from's namespace is also
// in to's.
func sameEvents(t *testing.T, from, to *modeRollouts) {
	t.Helper()
	want, err := from.events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, fmt.Sprintf("the events of %s mode in %s mode", from.mode, to.mode), func(ctx context.Context) (bool, string, error) {
		got, err := to.events(ctx)
		if err != nil {
			return false, "", err
		}
		var missing []string
		for e := range want {
			if !got[e] {
				missing = append(missing, e)
			}
		}
		sort.Strings(missing)
		return len(missing) == 0, fmt.Sprintf("missing %v", missing), nil
	})
}

// lineDiff lists the lines only in a (-) and only in b (+).
func lineDiff(a, b []string) string {
	count := map[string]int{}
	for _, l := range a {
		count[l]++
	}
	for _, l := range b {
		count[l]--
	}
	var out []string
	for l, n := range count {
		for ; n > 0; n-- {
			out = append(out, "- "+l)
		}
		for ; n < 0; n++ {
			out = append(out, "+ "+l)
		}
	}
	if len(out) == 0 && !slices.Equal(a, b) {
		out = append(out, "(same lines in another order)")
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// modeScenario is a sequence of rollouts a user drives; run records its
// checkpoints and logs on m.
type modeScenario struct {
	name string
	run  func(t *testing.T, m *modeRollouts)
}

// TestDeployerModesShowTheSame runs each scenario in both modes, side by
// side, and compares what they showed.
func TestDeployerModesShowTheSame(t *testing.T) {
	for _, sc := range deployerModeScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			runs := make([]*modeRollouts, len(deployerModes))
			for i, mode := range deployerModes {
				runs[i] = newModeRollouts(t, mode)
			}
			t.Run("modes", func(t *testing.T) {
				for _, m := range runs {
					t.Run(m.mode, func(t *testing.T) {
						t.Parallel()
						sc.run(t, m)
						m.checkRunner(t, false)
					})
				}
			})
			if t.Failed() {
				return
			}
			compareModes(t, runs[0], runs[1])
		})
	}
}

func deployerModeScenarios() []modeScenario {
	return []modeScenario{
		{name: "Recreate", run: func(t *testing.T, m *modeRollouts) {
			firstAndChange(t, m, func(dc *dcv1.DeploymentConfig) {
				dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRecreate}
			})
		}},
		{name: "Rolling", run: func(t *testing.T, m *modeRollouts) {
			firstAndChange(t, m, nil)
		}},
		{name: "CanaryPromote", run: canaryPromote},
		{name: "BlueGreenPromote", run: blueGreenPromote},
		{name: "CancelAtPauseThenRetry", run: cancelAtPauseThenRetry},
		{name: "Undo", run: undo},
		{name: "FallBackAfterFailure", run: fallBack},
	}
}

// complete waits for a rollout to end Complete with the DC at rest, and
// records that state and the rollout's log.
func (m *modeRollouts) complete(t *testing.T, checkpointName, dc, rc string, replicas map[string]int32) {
	t.Helper()
	waitPhase(t, m.ns, rc, dcv1.DeploymentPhaseComplete)
	m.settled(t, dc, replicas, corev1.ConditionTrue, dcv1.NewReplicationControllerAvailableReason)
	waitCondition(t, m.ns, dc, dcv1.DeploymentAvailable, corev1.ConditionTrue, dcv1.MinimumReplicasAvailableReason)
	m.record(t, checkpointName, dc)
	m.readLog(t, dc, rc)
}

// firstAndChange: a first rollout, then a template change.
func firstAndChange(t *testing.T, m *modeRollouts, mutate func(*dcv1.DeploymentConfig)) {
	mustCreate(t, m.dc("web", mutate))
	m.complete(t, "first rollout", "web", "web-1", map[string]int32{"web-1": 3})
	changeImage(t, m.ns, "web", "registry.example.com/web:2")
	m.complete(t, "template change", "web", "web-2", map[string]int32{"web-1": 0, "web-2": 3})
}

// pausedAtStep2 changes the image of a canaryDC and waits until its
// rollout is paused at step 2, waiting for a person.
func pausedAtStep2(t *testing.T, m *modeRollouts, rc, image string) {
	t.Helper()
	changeImage(t, m.ns, "web", image)
	waitRC(t, m.ns, rc, "paused at step 2", pausedAt(2))
	waitCondition(t, m.ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.AwaitingPromotionReason)
}

// pausedAt reports whether a deployment waits for a person at the pause
// of step k.
func pausedAt(k int) func(*corev1.ReplicationController) bool {
	return func(rc *corev1.ReplicationController) bool {
		p := deployment.ProgressOf(rc)
		return p.Stage == deployment.StageSteps && p.Step == k && p.Wait != nil &&
			p.Wait.Gate == deployment.StepGate(k) && p.Wait.Reason == dcv1.PauseReasonPause
	}
}

// canaryPromote: a canary rollout pauses at its pause step until promoted.
func canaryPromote(t *testing.T, m *modeRollouts) {
	canary := canaryDC(m.ns, "web")
	mustCreate(t, m.dc("web", func(dc *dcv1.DeploymentConfig) { dc.Spec.Strategy = canary.Spec.Strategy }))
	m.complete(t, "first rollout", "web", "web-1", map[string]int32{"web-1": 3})
	pausedAtStep2(t, m, "web-2", "registry.example.com/web:2")
	waitRC(t, m.ns, "web-2", "pods at the weight", func(rc *corev1.ReplicationController) bool {
		return reported(rc)
	})
	m.record(t, "paused at step 2", "web")
	m.quietLog(t, "web-2", "Step 2 of 2: paused until 'kubectl dc rollout promote web'")
	m.kubectlDC(t, "rollout", "promote", "web")
	m.complete(t, "promoted", "web", "web-2", map[string]int32{"web-1": 0, "web-2": 3})
}

// quietLogWait bounds the wait for the log of a waiting rollout run in
// the controller: dc-controller writes it within 5 seconds of a line.
const quietLogWait = 30 * time.Second

// quietLog checks, in controller mode, that the log of a rollout that
// waits (for a promotion) is written on its RC before the rollout ends.
func (m *modeRollouts) quietLog(t *testing.T, rc, line string) {
	t.Helper()
	if m.mode == dcv1.DeployerModePod {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), quietLogWait)
	defer cancel()
	var last string
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := getRC(ctx, m.ns, rc)
		if err != nil {
			return false, err
		}
		last = got.Annotations[dcv1.DeploymentLogAnnotation]
		return strings.Contains(last, line), nil
	})
	if err != nil {
		t.Fatalf("waiting for the log of waiting rollout %s to hold %q: %v; last seen:\n%s", rc, line, err, last)
	}
}

// blueGreenPromote: a blue-green rollout waits for its promotion, then
// switches the active Service.
func blueGreenPromote(t *testing.T, m *modeRollouts) {
	for _, name := range []string{"web", "web-preview"} {
		mustCreate(t, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: m.ns, Name: name},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
		})
	}
	mustCreate(t, m.dc("web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen,
			BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: "web", PreviewService: "web-preview"}}
	}))
	m.complete(t, "first rollout", "web", "web-1", map[string]int32{"web-1": 3})
	waitSelects(t, m.ns, "web", "web-1")
	changeImage(t, m.ns, "web", "registry.example.com/web:2")
	waitRC(t, m.ns, "web-2", "awaiting promotion", func(rc *corev1.ReplicationController) bool {
		w := deployment.ProgressOf(rc).Wait
		return w != nil && w.Gate == deployment.GatePromotion && w.Reason == dcv1.PauseReasonPromotion && reported(rc)
	})
	waitCondition(t, m.ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.AwaitingPromotionReason)
	waitSelects(t, m.ns, "web-preview", "web-2")
	m.record(t, "awaiting promotion", "web")
	m.kubectlDC(t, "rollout", "promote", "web")
	m.complete(t, "promoted", "web", "web-2", map[string]int32{"web-1": 0, "web-2": 3})
	waitSelects(t, m.ns, "web", "web-2")
	m.record(t, "switched", "web")
}

// cancelAtPauseThenRetry: a canary rollout cancelled while it waits at a
// pause step fails and falls back; retried, it pauses again, and promoted
// it completes.
func cancelAtPauseThenRetry(t *testing.T, m *modeRollouts) {
	canary := canaryDC(m.ns, "web")
	mustCreate(t, m.dc("web", func(dc *dcv1.DeploymentConfig) { dc.Spec.Strategy = canary.Spec.Strategy }))
	m.complete(t, "first rollout", "web", "web-1", map[string]int32{"web-1": 3})
	pausedAtStep2(t, m, "web-2", "registry.example.com/web:2")
	m.kubectlDC(t, "rollout", "cancel", "web")
	waitRC(t, m.ns, "web-2", "cancelled by the user", func(rc *corev1.ReplicationController) bool {
		return deployment.Phase(rc) == dcv1.DeploymentPhaseFailed && deployment.IsCancelled(rc)
	})
	m.settled(t, "web", map[string]int32{"web-1": 3, "web-2": 0}, corev1.ConditionFalse, dcv1.RolloutCancelledReason)
	waitCondition(t, m.ns, "web", dcv1.DeploymentStalled, corev1.ConditionTrue, dcv1.RolloutCancelledReason)
	m.record(t, "cancelled", "web")
	if m.mode == dcv1.DeployerModePod {
		waitGone(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: m.ns, Name: "web-2-deploy"}})
	}
	m.kubectlDC(t, "rollout", "retry", "web")
	waitRC(t, m.ns, "web-2", "paused at step 2 again", func(rc *corev1.ReplicationController) bool {
		return !deployment.IsCancelled(rc) && deployment.Phase(rc) == dcv1.DeploymentPhaseRunning && pausedAt(2)(rc) && reported(rc)
	})
	waitCondition(t, m.ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.AwaitingPromotionReason)
	m.record(t, "retried, paused again", "web")
	m.kubectlDC(t, "rollout", "promote", "web")
	m.complete(t, "promoted", "web", "web-2", map[string]int32{"web-1": 0, "web-2": 3})
}

// undo: `kubectl dc rollout undo` rolls the previous template out again
// as a new version.
func undo(t *testing.T, m *modeRollouts) {
	firstAndChange(t, m, nil)
	m.kubectlDC(t, "rollout", "undo", "web")
	m.complete(t, "rolled back", "web", "web-3", map[string]int32{"web-1": 0, "web-2": 0, "web-3": 3})
	if rc, _ := getRC(context.Background(), m.ns, "web-3"); rc.Spec.Template.Spec.Containers[0].Image != "registry.example.com/web:1" {
		t.Errorf("rolled back to image %s, want registry.example.com/web:1", rc.Spec.Template.Spec.Containers[0].Image)
	}
}

// fallBack: a rollout whose pods never become available fails after its
// timeout, and the last complete version serves again.
func fallBack(t *testing.T, m *modeRollouts) {
	mustCreate(t, m.dc("web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy.RollingParams = &dcv1.RollingDeploymentStrategyParams{TimeoutSeconds: ptr(int64(2))}
	}))
	m.complete(t, "first rollout", "web", "web-1", map[string]int32{"web-1": 3})
	changeImage(t, m.ns, "web", brokenImage)
	waitPhase(t, m.ns, "web-2", dcv1.DeploymentPhaseFailed)
	m.settled(t, "web", map[string]int32{"web-1": 3, "web-2": 0}, corev1.ConditionFalse, dcv1.ProgressDeadlineExceededReason)
	m.record(t, "failed, fallen back", "web")
	m.readLog(t, "web", "web-2")
}

// TestDeployerModeRunsPodsForContainers: in controller-when-possible mode
// a rollout that needs a pod of its own (an execNewPod hook, a Custom
// strategy, and a tagImages hook, whose registry calls stay in the
// namespace's pod) still gets a deployer pod, which runs it to the end.
func TestDeployerModeRunsPodsForContainers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*testing.T, *dcv1.DeploymentConfig)
	}{
		{name: "ExecNewPodHook", mutate: func(t *testing.T, dc *dcv1.DeploymentConfig) {
			dc.Spec.Strategy.RollingParams = &dcv1.RollingDeploymentStrategyParams{Pre: &dcv1.LifecycleHook{
				FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort,
				ExecNewPod:    &dcv1.ExecNewPodHook{ContainerName: "web", Command: []string{"true"}}}}
		}},
		{name: "TagImagesHook", mutate: func(t *testing.T, dc *dcv1.DeploymentConfig) {
			// A closed port on loopback: the copy fails at once, and the
			// hook's failure is ignored.
			dc.Spec.Strategy.RollingParams = &dcv1.RollingDeploymentStrategyParams{Pre: &dcv1.LifecycleHook{
				FailurePolicy: dcv1.LifecycleHookFailurePolicyIgnore,
				TagImages: []dcv1.TagImageHook{{ContainerName: "web",
					To: corev1.ObjectReference{Kind: "DockerImage", Name: closedAddress(t) + "/web:copied"}}}}}
		}},
		{name: "Custom", mutate: func(t *testing.T, dc *dcv1.DeploymentConfig) {
			dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeCustom,
				CustomParams: &dcv1.CustomDeploymentStrategyParams{Image: "registry.example.com/custom:1", Command: []string{"true"}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newModeRollouts(t, dcv1.DeployerModeControllerWhenPossible)
			mustCreate(t, m.dc("web", func(dc *dcv1.DeploymentConfig) { tc.mutate(t, dc) }))
			waitPod(t, m.ns, "web-1-deploy")
			rc := waitPhase(t, m.ns, "web-1", dcv1.DeploymentPhaseComplete)
			if got := rc.Annotations[dcv1.DeployerPodAnnotation]; got != "web-1-deploy" {
				t.Errorf("rc annotation %s = %q, want web-1-deploy", dcv1.DeployerPodAnnotation, got)
			}
			m.settled(t, "web", map[string]int32{"web-1": 3}, corev1.ConditionTrue, dcv1.NewReplicationControllerAvailableReason)
			m.checkRunner(t, true)
		})
	}
}

// TestInvalidDeployerModeAnnotation: a deployer-mode annotation with a
// value that is no mode is reported on the rollout, naming the annotation
// and the values it takes, and the rollout runs in dc-controller's own
// mode (a deployer pod, in these tests) to the end.
func TestInvalidDeployerModeAnnotation(t *testing.T) {
	m := newModeRollouts(t, dcv1.DeployerModePod)
	mustCreate(t, m.dc("web", func(dc *dcv1.DeploymentConfig) {
		dc.Annotations = map[string]string{dcv1.DeployerModeAnnotation: "sideways"}
	}))
	waitEventMessage(t, m.ns, "web-1", controller.EventInvalidDeployerMode,
		fmt.Sprintf("annotation %s: %q is not a deployer mode (expected %q or %q)", dcv1.DeployerModeAnnotation, "sideways",
			dcv1.DeployerModePod, dcv1.DeployerModeControllerWhenPossible))
	waitPod(t, m.ns, "web-1-deploy")
	waitPhase(t, m.ns, "web-1", dcv1.DeploymentPhaseComplete)
	m.settled(t, "web", map[string]int32{"web-1": 3}, corev1.ConditionTrue, dcv1.NewReplicationControllerAvailableReason)
	m.checkRunner(t, true)
}
