package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

// rolloutTimeout bounds a whole rollout of a small DeploymentConfig.
const rolloutTimeout = 2 * time.Minute

// hookPod is a pod labelled as the pre hook pod of deployment rc, whose
// command the local pod runtime runs as a local process.
func hookPod(name, rc string, policy corev1.RestartPolicy, command ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			dcv1.DeployerPodForDeploymentLabel: rc,
			dcv1.DeployerPodTypeLabel:          "hook-pre",
		}},
		Spec: restricted(corev1.PodSpec{
			RestartPolicy:                 policy,
			TerminationGracePeriodSeconds: new(int64(5)),
			Containers:                    []corev1.Container{{Name: "lifecycle", Image: pauseImage, Command: command}},
		}),
	}
}

// createPod creates a pod in ns and fails the test when that fails.
func createPod(t *testing.T, ns string, pod *corev1.Pod) {
	t.Helper()
	if _, err := clientset().CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
}

// A hook pod's command runs as a local process: its exit code ends up in
// the container's state, and its output in `kubectl logs`.
func TestHookPodExitCodeAndLog(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, hookPod("hook", "web-1", corev1.RestartPolicyNever, "/bin/sh", "-c", "echo hi; echo to stderr >&2; exit 3"))

	pod := waitPodTerminal(t, ns, "hook")
	state := containerTerminated(pod)
	if pod.Status.Phase != corev1.PodFailed || state == nil || state.ExitCode != 3 || state.Reason != "Error" {
		t.Fatalf("hook pod: phase %s, container %+v; want Failed with exit code 3, reason Error", pod.Status.Phase, state)
	}
	if state.StartedAt.IsZero() || state.FinishedAt.Before(&state.StartedAt) {
		t.Errorf("hook pod: started %v, finished %v", state.StartedAt, state.FinishedAt)
	}
	// Both streams are in the log; their order is not defined, as in a
	// container's log.
	out := kubectl(t, "logs", "-n", ns, "hook")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); !slices.Contains(lines, "hi") || !slices.Contains(lines, "to stderr") || len(lines) != 2 {
		t.Errorf("kubectl logs hook = %q, want the process's output", out)
	}
}

// A local process finds dc-deploy (also as openshift-deploy) and kubectl on
// its PATH, gets the pod's environment, and its KUBECONFIG acts as the
// pod's service account in the pod's namespace.
func TestLocalProcessEnvironment(t *testing.T) {
	ns := newNamespace(t)
	script := `command -v dc-deploy openshift-deploy kubectl >/dev/null || exit 9
kubectl auth whoami -o jsonpath='{.status.userInfo.username}'; echo
echo "$MY_NAMESPACE $GREETING"`
	pod := hookPod("env", "web-1", corev1.RestartPolicyNever, "/bin/sh", "-c", script)
	pod.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "MY_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "WHO", Value: "world"},
		{Name: "GREETING", Value: "hello $(WHO)"},
	}
	createPod(t, ns, pod)

	got := waitPodTerminal(t, ns, "env")
	log := kubectl(t, "logs", "-n", ns, "env")
	if got.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("pod phase %s (%+v), log:\n%s", got.Status.Phase, containerTerminated(got), log)
	}
	want := "system:serviceaccount:" + ns + ":default\n" + ns + " hello world\n"
	if log != want {
		t.Errorf("log %q, want %q", log, want)
	}
}

// activeDeadlineSeconds stops a pod's process and fails the pod, as a
// kubelet does.
func TestActiveDeadlineFailsThePod(t *testing.T) {
	ns := newNamespace(t)
	pod := hookPod("sleeper", "web-1", corev1.RestartPolicyNever, "sleep", "30")
	pod.Spec.ActiveDeadlineSeconds = new(int64(1))
	createPod(t, ns, pod)

	got := waitPodTerminal(t, ns, "sleeper")
	if got.Status.Phase != corev1.PodFailed || got.Status.Reason != "DeadlineExceeded" {
		t.Fatalf("pod: phase %s, reason %q; want Failed, DeadlineExceeded", got.Status.Phase, got.Status.Reason)
	}
	state := containerTerminated(got)
	if state == nil || state.ExitCode == 0 {
		t.Fatalf("container: %+v; want terminated by a signal", state)
	}
	if ran := state.FinishedAt.Sub(state.StartedAt.Time); ran > 10*time.Second {
		t.Errorf("the process ran for %s after a deadline of 1s", ran)
	}
}

// restartPolicy OnFailure (Retry hooks) restarts a failed container after
// a back-off: the restart count goes up, and `kubectl logs -p` shows the
// previous instance.
func TestOnFailureRestartsTheContainer(t *testing.T) {
	ns := newNamespace(t)
	// HOME is the pod's own directory, kept across restarts.
	script := `if [ -f "$HOME/failed-once" ]; then echo second; exit 0; fi; touch "$HOME/failed-once"; echo first; exit 1`
	createPod(t, ns, hookPod("retry", "web-1", corev1.RestartPolicyOnFailure, "/bin/sh", "-c", script))

	pod := waitPodTerminal(t, ns, "retry")
	if pod.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("pod phase %s, want Succeeded", pod.Status.Phase)
	}
	status := pod.Status.ContainerStatuses[0]
	if status.RestartCount != 1 || status.LastTerminationState.Terminated == nil || status.LastTerminationState.Terminated.ExitCode != 1 {
		t.Errorf("container status %+v; want 1 restart after exit code 1", status)
	}
	if out := kubectl(t, "logs", "-n", ns, "retry"); out != "second\n" {
		t.Errorf("kubectl logs = %q, want the current instance's output", out)
	}
	if out := kubectl(t, "logs", "-p", "-n", ns, "retry"); out != "first\n" {
		t.Errorf("kubectl logs -p = %q, want the previous instance's output", out)
	}
}

// Deleting a running pod stops its process, then the runtime removes the
// pod, as a kubelet does.
func TestDeletingARunningPodStopsIt(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, hookPod("long", "web-1", corev1.RestartPolicyNever, "sleep", "300"))
	waitFor(t, "the pod to run", podTimeout, func(ctx context.Context) (bool, error) {
		p, err := clientset().CoreV1().Pods(ns).Get(ctx, "long", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning && podReady(p), ignoreNotFound(err)
	})
	if err := clientset().CoreV1().Pods(ns).Delete(t.Context(), "long", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the pod: %v", err)
	}
	waitPodGone(t, ns, "long")
}

// recreateWithPreHook is a DeploymentConfig rolled out with the Recreate
// strategy, with a pre hook.
const recreateWithPreHook = `
apiVersion: apps.deployconfig.io/v1
kind: DeploymentConfig
metadata:
  name: web
spec:
  replicas: 2
  selector:
    app: web
  strategy:
    type: Recreate
    recreateParams:
      pre:
        failurePolicy: Abort
        execNewPod:
          containerName: app
          command: ["/bin/sh", "-c", "echo hello from hook"]
  template:
    metadata:
      labels:
        app: web
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: ["ALL"]
`

// A whole rollout on the playground: the deployer pod runs dc-deploy
// in-process (Running, then Succeeded), the pre hook runs as a local
// process, and the deployer's log holds the hook's output.
func TestRecreateRolloutWithPreHook(t *testing.T) {
	ns := dcNamespace(t)
	deployerPod := deployment.DeployerPodName(deployment.Name("web", 1))
	phases := watchPodPhases(t, ns, deployerPod)
	applyYAML(t, ns, recreateWithPreHook)

	r, err := suite.cluster.WaitRollout(t.Context(), ns, "web", rolloutTimeout, playground.Rollout.Done)
	if err != nil {
		t.Fatal(err)
	}
	if r.Phase() != dcv1.DeploymentPhaseComplete {
		t.Fatalf("deployment #%d is %s (%s), want Complete; deployer log:\n%s", r.Version, r.Phase(),
			r.RC.Annotations[dcv1.DeploymentStatusReasonAnnotation], kubectl(t, "logs", "-n", ns, deployerPod))
	}
	if seen := <-phases; !slices.Equal(compactPhases(seen), []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded}) &&
		!slices.Equal(compactPhases(seen), []corev1.PodPhase{corev1.PodRunning, corev1.PodSucceeded}) {
		t.Errorf("deployer pod phases %v, want Running, then Succeeded", seen)
	}
	log := kubectl(t, "logs", "-n", ns, deployerPod)
	assertInOrder(t, log, "--> pre: Running hook pod ...", "hello from hook", "--> pre: Success", "--> Success")
	hook := waitPodTerminal(t, ns, deployment.HookPodName(r.RC.Name, "pre"))
	if hook.Status.Phase != corev1.PodSucceeded {
		t.Errorf("hook pod phase %s, want Succeeded", hook.Status.Phase)
	}
	if out := kubectl(t, "logs", "-n", ns, hook.Name); out != "hello from hook\n" {
		t.Errorf("kubectl logs %s = %q", hook.Name, out)
	}
}

// applyYAML applies manifests to ns.
func applyYAML(t *testing.T, ns, manifests string) {
	t.Helper()
	objs, err := playground.DecodeManifests([]byte(manifests))
	if err != nil {
		t.Fatal(err)
	}
	a, err := playground.NewApplier(suite.cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Apply(t.Context(), ns, objs...); err != nil {
		t.Fatal(err)
	}
}

// watchPodPhases watches a pod, which need not exist yet, and sends the
// phases it went through once it has ended (or the test's time is up).
func watchPodPhases(t *testing.T, ns, name string) <-chan []corev1.PodPhase {
	t.Helper()
	w, err := clientset().CoreV1().Pods(ns).Watch(t.Context(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
	if err != nil {
		t.Fatalf("watching pod %s: %v", name, err)
	}
	out := make(chan []corev1.PodPhase, 1)
	go func() {
		defer w.Stop()
		var phases []corev1.PodPhase
		timeout := time.After(rolloutTimeout)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					out <- phases
					return
				}
				pod, isPod := ev.Object.(*corev1.Pod)
				if !isPod || ev.Type == watch.Deleted {
					continue
				}
				phases = append(phases, pod.Status.Phase)
				if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
					out <- phases
					return
				}
			case <-timeout:
				out <- phases
				return
			}
		}
	}()
	return out
}

// compactPhases drops repeated phases and the empty phase of a pod just
// created.
func compactPhases(phases []corev1.PodPhase) []corev1.PodPhase {
	var out []corev1.PodPhase
	for _, p := range phases {
		if p != "" && (len(out) == 0 || out[len(out)-1] != p) {
			out = append(out, p)
		}
	}
	return out
}

// assertInOrder checks that text holds the lines in this order.
func assertInOrder(t *testing.T, text string, lines ...string) {
	t.Helper()
	rest := text
	for _, line := range lines {
		i := strings.Index(rest, line)
		if i < 0 {
			t.Errorf("%q is missing, or out of order, in:\n%s", line, text)
			return
		}
		rest = rest[i+len(line):]
	}
}
