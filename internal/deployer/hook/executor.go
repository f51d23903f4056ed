package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/analysis"
	"github.com/deployconfig/deployconfig/internal/deployer/observe"
	"github.com/deployconfig/deployconfig/internal/registry"
)

// Default drain timings of a hook's log stream; see follower.drain.
const (
	defaultDrainIdle = time.Second
	defaultDrainMax  = 10 * time.Second
)

// deadlineSlack is how long past a hook pod's active deadline the executor
// keeps waiting for it: the kubelet needs a moment to fail the pod.
const deadlineSlack = time.Minute

// registryUserAgent names dc-deploy in the requests of tagImages hooks, so
// that registry operators can tell them apart.
const registryUserAgent = "dc-deploy"

// Executor runs the lifecycle hooks of one rollout.
type Executor struct {
	client       kubernetes.Interface
	out          io.Writer
	strategy     *dcv1.DeploymentStrategy
	deadline     time.Time
	registryOpts registry.Options

	// analysisOpts are the options of analysis hooks' runs (tests shorten
	// their waits).
	analysisOpts analysis.Options

	// now, pause, drainIdle and drainMax are fields so tests can shorten them.
	now       func() time.Time
	pause     func(ctx context.Context, d time.Duration) error
	drainIdle time.Duration
	drainMax  time.Duration
}

// NewExecutor returns an Executor that creates hook pods with client, writes
// the rollout's log lines and the hooks' logs to out, adds the strategy's
// labels and annotations to hook pods, and gives each pod what is left until
// deadline (the end of the rollout's active deadline) to run. The same
// deadline bounds the registry calls of tagImages hooks, which authenticate
// with the pull secrets of the deployment's pod template, read through
// client.
func NewExecutor(client kubernetes.Interface, out io.Writer, strategy *dcv1.DeploymentStrategy, deadline time.Time) *Executor {
	return &Executor{
		client:       client,
		out:          out,
		strategy:     strategy,
		deadline:     deadline,
		registryOpts: registry.Options{remote.WithUserAgent(registryUserAgent)},
		now:          time.Now,
		pause:        sleep,
		drainIdle:    defaultDrainIdle,
		drainMax:     defaultDrainMax,
	}
}

// Run runs the hook of type hookType (pre, mid or post) for the deployment
// rc and applies its failure policy: it returns nil when the rollout may go
// on, and the reason it may not otherwise. A nil hook does nothing.
func (e *Executor) Run(ctx context.Context, hook *dcv1.LifecycleHook, rc *corev1.ReplicationController, hookType string) error {
	if hook == nil {
		return nil
	}
	var err error
	switch {
	case hook.ExecNewPod != nil:
		err = e.execNewPod(ctx, hook, rc, hookType)
	case len(hook.TagImages) > 0:
		err = e.tagImages(ctx, hook, rc, hookType)
	case hook.Analysis != nil:
		err = e.analyze(ctx, hook, rc, hookType)
	default:
		return nil
	}
	if err == nil || ctx.Err() != nil {
		return err
	}
	if hook.FailurePolicy == dcv1.LifecycleHookFailurePolicyIgnore {
		fmt.Fprintf(e.out, "--> %s: Warning: the hook failed and its failurePolicy is Ignore, so the rollout goes on: %v\n", hookType, err)
		return nil
	}
	return fmt.Errorf("%s hook failed: %w", hookType, err)
}

// execNewPod creates (or finds) the hook pod and follows it to its end.
func (e *Executor) execNewPod(ctx context.Context, hook *dcv1.LifecycleHook, rc *corev1.ReplicationController, hookType string) error {
	seconds, err := ActiveDeadline(e.deadline, e.now())
	if err != nil {
		return err
	}
	pod, err := BuildPod(hook, rc, e.strategy, hookType, seconds)
	if err != nil {
		return err
	}
	pod, created, err := e.createOrReuse(ctx, pod, rc)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(e.out, "--> %s: Running hook pod ...\n", hookType)
	}
	tctx, cancel := context.WithTimeout(ctx, time.Duration(seconds)*time.Second+deadlineSlack)
	defer cancel()
	r := &podRun{e: e, namespace: pod.Namespace, name: pod.Name, label: hookType, created: created}
	return r.follow(tctx, ctx)
}

// createOrReuse creates the hook pod, or returns the one an earlier attempt
// of this deployer made (a custom strategy may run dc-deploy several times):
// a hook runs once per deployment, never twice at once.
func (e *Executor) createOrReuse(ctx context.Context, pod *corev1.Pod, rc *corev1.ReplicationController) (*corev1.Pod, bool, error) {
	pods := e.client.CoreV1().Pods(pod.Namespace)
	made, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err == nil {
		return made, true, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, false, fmt.Errorf("create hook pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	existing, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return nil, false, fmt.Errorf("get existing hook pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if !belongsTo(existing, rc) {
		return nil, false, fmt.Errorf("pod %s/%s exists but is not a hook pod of replicationcontroller %s", pod.Namespace, pod.Name, rc.Name)
	}
	return existing, false, nil
}

// belongsTo reports whether an existing pod is a hook pod of this very RC,
// not of an earlier RC of the same name.
func belongsTo(pod *corev1.Pod, rc *corev1.ReplicationController) bool {
	if pod.Labels[dcv1.DeployerPodForDeploymentLabel] != rc.Name {
		return false
	}
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "ReplicationController" && ref.Name == rc.Name {
			return rc.UID == "" || ref.UID == rc.UID
		}
	}
	return true
}

// podRun follows one hook pod: its phase, its container restarts, its log.
type podRun struct {
	e         *Executor
	namespace string
	name      string
	label     string
	// created: this run made the pod. active: the pod was seen unfinished.
	// Either way its log and outcome belong in this deployer's output; a
	// reused pod that had already finished is only reported.
	created   bool
	active    bool
	announced bool
	retries   int32
	streamed  int32
	stream    *follower
}

// follow watches the pod until it ends (bounded by ctx) and reports the
// outcome; logs are opened with logCtx so that they outlive a timeout only
// as long as the drain allows.
func (r *podRun) follow(ctx, logCtx context.Context) error {
	r.streamed = -1
	pods := r.e.client.CoreV1().Pods(r.namespace)
	get := func(ctx context.Context) (*corev1.Pod, error) {
		p, err := pods.Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get hook pod %s/%s: %w", r.namespace, r.name, err)
		}
		return p, nil
	}
	watchFn := func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return pods.Watch(ctx, opts)
	}
	pod, err := observe.Object(ctx, r.name, get, watchFn, func(p *corev1.Pod) (bool, error) {
		return r.observe(logCtx, p), nil
	})
	if err != nil {
		r.stop(false)
		return r.waitError(ctx, logCtx, err)
	}
	r.stop(true)
	return r.report(pod)
}

// observe handles one state of the pod and reports whether it has ended.
func (r *podRun) observe(logCtx context.Context, pod *corev1.Pod) bool {
	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	if !terminal {
		r.active = true
	}
	if !r.created && !terminal && !r.announced {
		r.announced = true
		fmt.Fprintf(r.e.out, "--> %s: Hook pod is already running ...\n", r.label)
	}
	if !r.created && !r.active {
		return terminal
	}
	status := containerStatus(pod)
	var restarts int32
	if status != nil {
		restarts = status.RestartCount
	}
	if restarts > r.retries {
		r.stop(true)
		for n := r.retries + 1; n <= restarts; n++ {
			fmt.Fprintf(r.e.out, "--> %s: Retrying hook pod (retry #%d)\n", r.label, n)
		}
		r.retries = restarts
	}
	if started(pod, status) && r.streamed < restarts {
		r.stop(true)
		r.streamed = restarts
		r.stream = startFollower(logCtx, r.openLog, !terminal, r.e.out, r.label)
	}
	return terminal
}

// openLog opens the hook container's log through the pods/log subresource.
func (r *podRun) openLog(ctx context.Context, follow bool) (io.ReadCloser, error) {
	opts := &corev1.PodLogOptions{Container: ContainerName, Follow: follow}
	return r.e.client.CoreV1().Pods(r.namespace).GetLogs(r.name, opts).Stream(ctx)
}

// stop ends the current log stream: drained when the container has ended
// (so its last lines are shown), cut off otherwise.
func (r *podRun) stop(drain bool) {
	if r.stream == nil {
		return
	}
	if drain {
		r.stream.drain(r.e.drainIdle, r.e.drainMax)
	} else {
		r.stream.abort()
	}
	r.stream = nil
}

// report prints and returns the outcome of a finished pod.
func (r *podRun) report(pod *corev1.Pod) error {
	shown := r.created || r.active
	if pod.Status.Phase == corev1.PodSucceeded {
		if shown {
			fmt.Fprintf(r.e.out, "--> %s: Success\n", r.label)
		} else {
			fmt.Fprintf(r.e.out, "--> %s: Hook pod already succeeded\n", r.label)
		}
		return nil
	}
	fmt.Fprintf(r.e.out, "--> %s: Failed\n", r.label)
	return fmt.Errorf("hook pod %s/%s failed: %s", r.namespace, r.name, failureReason(pod))
}

// waitError explains why following the pod stopped before it ended.
func (r *podRun) waitError(ctx, parent context.Context, err error) error {
	switch {
	case errors.Is(err, observe.ErrDeleted):
		fmt.Fprintf(r.e.out, "--> %s: Failed\n", r.label)
		return fmt.Errorf("hook pod %s/%s was deleted before it finished", r.namespace, r.name)
	case parent.Err() == nil && ctx.Err() != nil:
		fmt.Fprintf(r.e.out, "--> %s: Failed\n", r.label)
		return fmt.Errorf("hook pod %s/%s did not finish within its active deadline", r.namespace, r.name)
	}
	return err
}

// containerStatus returns the status of the hook pod's container, if any.
func containerStatus(pod *corev1.Pod) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == ContainerName {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	if len(pod.Status.ContainerStatuses) == 1 {
		return &pod.Status.ContainerStatuses[0]
	}
	return nil
}

// started reports whether the container has started, so that it has a log.
func started(pod *corev1.Pod, status *corev1.ContainerStatus) bool {
	if status != nil {
		return status.State.Running != nil || status.State.Terminated != nil
	}
	return pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == corev1.PodSucceeded
}

// failureReason says why a hook pod failed, from what the kubelet recorded:
// the pod's reason (e.g. DeadlineExceeded) or the container's exit.
func failureReason(pod *corev1.Pod) string {
	switch reason, msg := pod.Status.Reason, strings.TrimSpace(pod.Status.Message); {
	case reason != "" && msg != "":
		return reason + ": " + msg
	case reason != "" || msg != "":
		return reason + msg
	}
	status := containerStatus(pod)
	if status == nil || status.State.Terminated == nil {
		return "the pod failed"
	}
	t := status.State.Terminated
	reason := fmt.Sprintf("exit code %d", t.ExitCode)
	if msg := strings.TrimSpace(t.Message); msg != "" {
		reason += ": " + msg
	}
	return reason
}
