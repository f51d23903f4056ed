package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/cli"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
	"github.com/deployconfig/deployconfig/test/invariants"
)

// commandTimeout bounds one run of kubectl or kubectl dc.
const commandTimeout = 3 * time.Minute

// dcNamespace creates a namespace that enforces the restricted Pod
// Security Standard for a test that rolls out DeploymentConfigs; see
// dcNamespaceAt.
func dcNamespace(t *testing.T) string {
	t.Helper()
	return dcNamespaceAt(t, podSecurityRestricted)
}

// dcNamespaceAt creates a namespace that enforces the Pod Security Standard
// level for a test that rolls out DeploymentConfigs, and watches it with an
// invariants.Checker for the whole test: the test fails with every
// DeploymentConfig rule it saw broken.
func dcNamespaceAt(t *testing.T, level string) string {
	t.Helper()
	ns := newNamespaceAt(t, level)
	checker, err := invariants.Start(context.Background(), suite.cluster.Config, ns)
	if err != nil {
		t.Fatalf("watching namespace %s for broken invariants: %v", ns, err)
	}
	// Cleanups run last first: the checker stops before the namespace
	// goes away.
	t.Cleanup(func() {
		if err := invariants.Err(checker.Stop()); err != nil {
			t.Errorf("namespace %s: %v", ns, err)
		}
	})
	return ns
}

// dcClient returns a client that knows DeploymentConfigs.
var dcClient = sync.OnceValues(func() (client.Client, error) {
	scheme, err := cli.NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(suite.cluster.Config, client.Options{Scheme: scheme})
})

// dcs is dcClient for a test.
func dcs(t *testing.T) client.Client {
	t.Helper()
	c, err := dcClient()
	if err != nil {
		t.Fatalf("making a DeploymentConfig client: %v", err)
	}
	return c
}

// newDC is a DeploymentConfig of replicas pause containers named app,
// labelled app=NAME, rolled out with strategy on every config change.
func newDC(name string, replicas int32, strategy dcv1.DeploymentStrategy) *dcv1.DeploymentConfig {
	labels := map[string]string{"app": name}
	return &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: replicas,
			Selector: labels,
			Strategy: strategy,
			Triggers: []dcv1.DeploymentTriggerPolicy{{Type: dcv1.DeploymentTriggerOnConfigChange}},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: restricted(corev1.PodSpec{
					TerminationGracePeriodSeconds: new(int64(1)),
					Containers:                    []corev1.Container{{Name: "app", Image: pauseImage}},
				}),
			},
		},
	}
}

// recreate is a Recreate strategy with the given hooks (nil for none).
func recreate(pre, mid, post *dcv1.LifecycleHook) dcv1.DeploymentStrategy {
	return dcv1.DeploymentStrategy{
		Type:           dcv1.DeploymentStrategyTypeRecreate,
		RecreateParams: &dcv1.RecreateDeploymentStrategyParams{Pre: pre, Mid: mid, Post: post},
	}
}

// rolling is a Rolling strategy with maxSurge and maxUnavailable and the
// smallest update period and interval.
func rolling(maxSurge, maxUnavailable intstr.IntOrString) dcv1.DeploymentStrategy {
	return dcv1.DeploymentStrategy{
		Type: dcv1.DeploymentStrategyTypeRolling,
		RollingParams: &dcv1.RollingDeploymentStrategyParams{
			UpdatePeriodSeconds: new(int64(1)),
			IntervalSeconds:     new(int64(1)),
			MaxSurge:            &maxSurge,
			MaxUnavailable:      &maxUnavailable,
		},
	}
}

// shellHook is an execNewPod hook in the container app that runs script
// with /bin/sh.
func shellHook(policy dcv1.LifecycleHookFailurePolicy, script string) *dcv1.LifecycleHook {
	return &dcv1.LifecycleHook{
		FailurePolicy: policy,
		ExecNewPod:    &dcv1.ExecNewPodHook{ContainerName: "app", Command: []string{"/bin/sh", "-c", script}},
	}
}

// createDC creates a DeploymentConfig in ns.
func createDC(t *testing.T, ns string, dc *dcv1.DeploymentConfig) {
	t.Helper()
	dc = dc.DeepCopy()
	dc.Namespace = ns
	if err := dcs(t).Create(t.Context(), dc); err != nil {
		t.Fatalf("creating deploymentconfig %s: %v", dc.Name, err)
	}
}

// getDC reads a DeploymentConfig.
func getDC(t *testing.T, ns, name string) *dcv1.DeploymentConfig {
	t.Helper()
	dc := &dcv1.DeploymentConfig{}
	if err := dcs(t).Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, dc); err != nil {
		t.Fatalf("reading deploymentconfig %s: %v", name, err)
	}
	return dc
}

// updateDC changes a DeploymentConfig's spec as a user would, retrying on
// conflicts.
func updateDC(t *testing.T, ns, name string, change func(*dcv1.DeploymentConfig)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dc := &dcv1.DeploymentConfig{}
		if err := dcs(t).Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, dc); err != nil {
			return err
		}
		change(dc)
		return dcs(t).Update(t.Context(), dc)
	})
	if err != nil {
		t.Fatalf("updating deploymentconfig %s: %v", name, err)
	}
}

// setEnv sets an environment variable of the template's container app: a
// config change.
func setEnv(dc *dcv1.DeploymentConfig, name, value string) {
	c := &dc.Spec.Template.Spec.Containers[0]
	for i := range c.Env {
		if c.Env[i].Name == name {
			c.Env[i].Value = value
			return
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
}

// waitRollout waits until rollout #version of a DeploymentConfig has ended
// and returns it; it fails the test when a newer rollout came first.
func waitRollout(t *testing.T, ns, name string, version int64) playground.Rollout {
	t.Helper()
	r, err := suite.cluster.WaitRollout(t.Context(), ns, name, rolloutTimeout, func(r playground.Rollout) bool {
		return r.Version > version || (r.Version == version && r.Done())
	})
	if err != nil {
		t.Fatalf("rollout #%d of %s (at #%d, phase %q): %v", version, name, r.Version, r.Phase(), err)
	}
	if r.Version != version {
		t.Fatalf("deploymentconfig %s is at rollout #%d, want #%d", name, r.Version, version)
	}
	return r
}

// requirePhase waits for rollout #version to end and fails the test with
// the deployer's log unless it ended in phase.
func requirePhase(t *testing.T, ns, name string, version int64, phase dcv1.DeploymentPhase) *corev1.ReplicationController {
	t.Helper()
	r := waitRollout(t, ns, name, version)
	if r.Phase() != phase {
		log, _ := suite.cluster.DeployerLog(t.Context(), ns, r.RC.Name)
		t.Fatalf("rollout #%d of %s is %s (%s), want %s; deployer log:\n%s", version, name, r.Phase(),
			r.RC.Annotations[dcv1.DeploymentStatusReasonAnnotation], phase, log)
	}
	return r.RC
}

// requireComplete waits until rollout #version is Complete.
func requireComplete(t *testing.T, ns, name string, version int64) *corev1.ReplicationController {
	t.Helper()
	return requirePhase(t, ns, name, version, dcv1.DeploymentPhaseComplete)
}

// getRC reads a ReplicationController.
func getRC(t *testing.T, ns, name string) *corev1.ReplicationController {
	t.Helper()
	rc, err := clientset().CoreV1().ReplicationControllers(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading replicationcontroller %s: %v", name, err)
	}
	return rc
}

// getPod reads a pod.
func getPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod, err := clientset().CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading pod %s: %v", name, err)
	}
	return pod
}

// podsOf lists the pods of a deployment (RC), by the label its pods carry.
func podsOf(ctx context.Context, ns, rc string) ([]corev1.Pod, error) {
	list, err := clientset().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{dcv1.DeploymentSelectorLabel: rc}).String(),
	})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitScaled waits until each deployment (RC name → replicas) is scaled to
// its replicas and runs exactly that many pods, all Running and Ready.
func waitScaled(t *testing.T, ns string, want map[string]int32) {
	t.Helper()
	var state []string
	err := poll(t, rolloutTimeout, func(ctx context.Context) (bool, error) {
		state = state[:0]
		done := true
		for name, n := range want {
			rc, err := clientset().CoreV1().ReplicationControllers(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			pods, err := podsOf(ctx, ns, name)
			if err != nil {
				return false, err
			}
			ready := 0
			for i := range pods {
				if pods[i].DeletionTimestamp == nil && pods[i].Status.Phase == corev1.PodRunning && podReady(&pods[i]) {
					ready++
				}
			}
			state = append(state, fmt.Sprintf("%s: %d replicas, %d pods, %d ready", name, deployment.Replicas(rc), len(pods), ready))
			done = done && deployment.Replicas(rc) == n && len(pods) == int(n) && ready == int(n)
		}
		return done, nil
	})
	if err != nil {
		slices.Sort(state)
		t.Fatalf("waiting for the deployments to be scaled to %v: %v; last seen %v", want, err, state)
	}
}

// waitDC waits until cond holds for a DeploymentConfig, and returns it.
func waitDC(t *testing.T, ns, name, what string, cond func(*dcv1.DeploymentConfig) bool) *dcv1.DeploymentConfig {
	t.Helper()
	dc := &dcv1.DeploymentConfig{}
	err := poll(t, rolloutTimeout, func(ctx context.Context) (bool, error) {
		if err := dcs(t).Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dc); err != nil {
			return false, err
		}
		return cond(dc), nil
	})
	if err != nil {
		t.Fatalf("waiting for deploymentconfig %s: %s: %v; status %+v", name, what, err, dc.Status)
	}
	return dc
}

// hasCondition reports whether a DeploymentConfig has a condition of that
// type, status and reason.
func hasCondition(dc *dcv1.DeploymentConfig, typ dcv1.DeploymentConditionType, status corev1.ConditionStatus, reason string) bool {
	for _, c := range dc.Status.Conditions {
		if c.Type == typ {
			return c.Status == status && c.Reason == reason
		}
	}
	return false
}

// settled reports whether a DeploymentConfig's status is about its current
// spec and counts replicas running pods, all of them available.
func settled(replicas int32) func(*dcv1.DeploymentConfig) bool {
	return func(dc *dcv1.DeploymentConfig) bool {
		s := dc.Status
		return s.ObservedGeneration >= dc.Generation && s.Replicas == replicas && s.UpdatedReplicas == replicas &&
			s.ReadyReplicas == replicas && s.AvailableReplicas == replicas && s.UnavailableReplicas == 0
	}
}

// poll polls cond until it holds, for at most timeout; unlike waitFor it
// returns the error, so that the caller can say what it last saw.
func poll(t *testing.T, timeout time.Duration, cond wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(t.Context(), pollInterval, timeout, true, cond)
}

// waitGone waits until an object no longer exists: get returns NotFound.
func waitGone(t *testing.T, what string, get func(ctx context.Context) error) {
	t.Helper()
	waitFor(t, what+" to go away", podTimeout, func(ctx context.Context) (bool, error) {
		err := get(ctx)
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
}

// waitPodRunning waits until a pod runs.
func waitPodRunning(t *testing.T, ns, name string) {
	t.Helper()
	waitFor(t, "pod "+name+" to run", podTimeout, func(ctx context.Context) (bool, error) {
		p, err := clientset().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, ignoreNotFound(err)
	})
}

// podWatch follows a DeploymentConfig's application pods and records the
// most pods that were alive at once and the fewest that were available.
type podWatch struct {
	maxLive, minAvailable int
	done                  chan struct{}
	stop                  context.CancelFunc
	err                   error
}

// watchDCPods starts following the pods of DeploymentConfig dc: those it
// lists now, then every change. A pod is alive until it is deleted or
// finished, available while it is alive, Running and Ready (the tests'
// DeploymentConfigs have no minReadySeconds).
func watchDCPods(t *testing.T, ns, dc string) *podWatch {
	t.Helper()
	selector := labels.SelectorFromSet(labels.Set{dcv1.DeploymentConfigSelectorLabel: dc}).String()
	pods := clientset().CoreV1().Pods(ns)
	list, err := pods.List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("listing the pods of %s: %v", dc, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatalf("watching the pods of %s: %v", dc, err)
	}
	current := map[string]*corev1.Pod{}
	for i := range list.Items {
		current[list.Items[i].Name] = &list.Items[i]
	}
	pw := &podWatch{done: make(chan struct{}), stop: cancel}
	pw.maxLive, pw.minAvailable = count(current)
	go func() {
		defer close(pw.done)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					pw.err = errors.New("the watch of the pods ended early")
					return
				}
				pod, isPod := ev.Object.(*corev1.Pod)
				switch {
				case ev.Type == watch.Error || !isPod:
					pw.err = apierrors.FromObject(ev.Object)
					return
				case ev.Type == watch.Deleted:
					delete(current, pod.Name)
				default:
					current[pod.Name] = pod
				}
				live, available := count(current)
				pw.maxLive = max(pw.maxLive, live)
				pw.minAvailable = min(pw.minAvailable, available)
			}
		}
	}()
	t.Cleanup(cancel)
	return pw
}

// count returns how many pods are alive and how many available.
func count(pods map[string]*corev1.Pod) (live, available int) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		live++
		if p.Status.Phase == corev1.PodRunning && podReady(p) {
			available++
		}
	}
	return live, available
}

// Stop ends the watch and returns what it recorded.
func (pw *podWatch) Stop(t *testing.T) (maxLive, minAvailable int) {
	t.Helper()
	pw.stop()
	<-pw.done
	if pw.err != nil {
		t.Fatalf("following the pods: %v", pw.err)
	}
	return pw.maxLive, pw.minAvailable
}

// result is how a command ended.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// run runs a program of $DC_BIN with stdin, against the suite's cluster (as
// KUBECONFIG), with $DC_BIN first on the PATH so that kubectl finds its
// kubectl-dc plugin. Only a failure to start it fails the test.
func run(t *testing.T, stdin, program string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(suite.binDir, program), args...)
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+suite.cluster.Kubeconfig,
		"PATH="+suite.binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s %s: %v", program, strings.Join(args, " "), err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// kubectlDC runs `kubectl dc ARGS -n NS`, the plugin as a user calls it.
func kubectlDC(t *testing.T, ns string, args ...string) result {
	t.Helper()
	return run(t, "", "kubectl", append(append([]string{"dc"}, args...), "-n", ns)...)
}

// mustDC runs `kubectl dc ARGS -n NS` and fails the test unless it exits
// 0 with nothing on stderr; it returns stdout.
func mustDC(t *testing.T, ns string, args ...string) string {
	t.Helper()
	r := kubectlDC(t, ns, args...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("kubectl dc %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// deployerLog is the deployer log of a DeploymentConfig's latest rollout,
// as `kubectl dc logs NAME` shows it.
func deployerLog(t *testing.T, ns, name string) string {
	t.Helper()
	return mustDC(t, ns, "logs", name)
}
