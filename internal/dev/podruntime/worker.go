package podruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// Why a pod's work stops before its container exits by itself.
var (
	errPodDeleted = errors.New("the pod was deleted")
	errShutdown   = errors.New("the local pod runtime is stopping")
	errDeadline   = errors.New("the pod's active deadline passed")
	errTerminal   = errors.New("the pod has ended already")
)

// statusTimeout bounds one status write after the pod's own work was
// stopped.
const statusTimeout = 30 * time.Second

// podWorker runs one pod (one UID) from its start to its end.
type podWorker struct {
	rt  *Runtime
	c   *controller
	key types.NamespacedName
	uid types.UID
	// pod is the pod as the worker first saw it; what the runtime runs
	// comes from its spec.
	pod *corev1.Pod
	// kubelet is the clients of the pod's node.
	kubelet *nodeClients
	dir     podDir
	log     logr.Logger

	// ctx is the runtime's, for API calls; work is ended by stop, with a
	// cause.
	ctx    context.Context
	work   context.Context
	cancel context.CancelCauseFunc
	grace  atomic.Int64
	done   chan struct{}

	state podState
	// logsServed is set once kwok serves the pod's logs.
	logsServed bool
	// final is set once the pod's status is terminal.
	final bool
}

func newPodWorker(ctx context.Context, rt *Runtime, c *controller, pod *corev1.Pod, kubelet *nodeClients) *podWorker {
	// The work ends only through stop, even when the runtime's context
	// ends: the runtime's shutdown stops it with a grace of its own.
	work, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	w := &podWorker{
		rt:      rt,
		c:       c,
		key:     types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name},
		uid:     pod.UID,
		pod:     pod.DeepCopy(),
		kubelet: kubelet,
		dir:     newPodDir(rt.podsDir, pod),
		log:     rt.log.WithValues("pod", pod.Namespace+"/"+pod.Name),
		ctx:     ctx,
		work:    work,
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	w.grace.Store(int64(terminationGrace(pod)))
	return w
}

// stop ends the pod's work for cause; its processes get grace between
// SIGTERM and SIGKILL (a shorter grace than an earlier stop's wins).
func (w *podWorker) stop(cause error, grace time.Duration) {
	if grace < time.Duration(w.grace.Load()) {
		w.grace.Store(int64(grace))
	}
	w.cancel(cause)
}

func (w *podWorker) currentGrace() time.Duration {
	return time.Duration(w.grace.Load())
}

// run is the worker's goroutine.
func (w *podWorker) run() {
	defer close(w.done)
	err := w.live()
	cause := context.Cause(w.work)
	shutdown := errors.Is(cause, errShutdown) || w.ctx.Err() != nil
	deleted := errors.Is(cause, errPodDeleted)
	w.rt.removeWorker(w, !shutdown && (w.final || deleted))
	switch {
	case shutdown:
		return
	case deleted:
		if err := w.rt.removePod(w.ctx, w.pod.Spec.NodeName, w.key.Namespace, w.key.Name, w.uid); err != nil {
			w.log.Error(err, "Removing the deleted pod")
		}
	case err != nil && !w.final:
		// The pod's status could not be written: a new worker takes over
		// from what the status says, after a while.
		w.log.Error(err, "Running the pod; trying again")
		w.c.queue.AddRateLimited(w.key)
		return
	}
	// The controller looks at the pod again: a deleted pod whose removal
	// failed, a pod that changed meanwhile.
	w.c.queue.Add(w.key)
}

// live runs the pod to its end: the container's instances, restarts by
// restartPolicy, and the final status.
func (w *podWorker) live() error {
	resume := resumeFrom(w.pod)
	w.state = resume.state
	w.state.hostIP = w.c.hostIP(w.pod.Spec.NodeName)
	if w.state.startTime == nil {
		now := metav1.Now()
		w.state.startTime = &now
	}
	if resume.fresh {
		w.state.phase = corev1.PodPending
		w.state.container.state = waitingState(reasonContainerCreating, "")
		if err := w.writeStatus(); err != nil {
			return err
		}
	}
	if d := w.pod.Spec.ActiveDeadlineSeconds; d != nil {
		deadline := w.state.startTime.Add(time.Duration(*d) * time.Second)
		var cancel context.CancelFunc
		w.work, cancel = context.WithDeadlineCause(w.work, deadline, errDeadline)
		defer cancel()
	}
	next, last := resume.next, resume.lastExit
	if resume.lost {
		lost := w.loseInstance(resume.next)
		next, last = resume.next+1, &lost
	}
	if last != nil && !shouldRestart(w.pod.Spec.RestartPolicy, last.code) {
		return w.finish(*last)
	}
	return w.loop(next, last)
}

// loop starts instance after instance of the container, from number next
// (with last the previous one's exit, if any), until one ends for good or
// the work is stopped.
func (w *podWorker) loop(next int32, last *exit) error {
	for n := next; ; n++ {
		if last != nil {
			if err := w.backOff(n, *last); err != nil {
				return w.stopped(last)
			}
		}
		if w.work.Err() != nil {
			return w.stopped(last)
		}
		ex := w.runInstance(n)
		if w.work.Err() != nil {
			return w.stopped(&ex)
		}
		if !shouldRestart(w.pod.Spec.RestartPolicy, ex.code) {
			return w.finish(ex)
		}
		last = &ex
	}
}

// backOff reports the failed instance and waits before the next one, as a
// kubelet's CrashLoopBackOff does; it returns an error when the work is
// stopped meanwhile.
func (w *podWorker) backOff(n int32, last exit) error {
	delay := restartDelay(n, w.rt.opts.RestartBackoff, w.rt.opts.MaxRestartBackoff)
	w.state.phase = corev1.PodRunning
	w.state.container.last = terminatedState(last, w.state.container.id)
	w.state.container.state = waitingState(reasonCrashLoopBackOff,
		fmt.Sprintf(messageBackOffRestarting, delay, w.containerName(), w.pod.Name, w.pod.Namespace, w.pod.UID))
	if err := w.writeStatus(); err != nil {
		w.log.Error(err, "Writing the back-off status")
	}
	w.event(corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s", w.containerName(), w.pod.Name)
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-w.work.Done():
		return context.Cause(w.work)
	}
}

// restartDelay is the back-off before instance n (n ≥ 1): base, doubling
// with every restart, at most limit.
func restartDelay(n int32, base, limit time.Duration) time.Duration {
	d := base
	for i := int32(1); i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// finish writes the pod's final status after its container's last exit.
// The exit is known only here, so the write is tried again until it is
// done, the pod is gone or the runtime stops: a new worker would take over
// from the last status written, which says the container runs, and would
// count it as lost (exit 137) although it ended by itself.
func (w *podWorker) finish(ex exit) error {
	w.state.phase = finalPhase(ex.code)
	w.state.reason, w.state.message = "", ""
	w.state.container.state = terminatedState(ex, w.state.container.id)
	return untilWritten(w.writeStatus, func(err error) bool {
		if w.ctx.Err() != nil || w.final || errors.Is(context.Cause(w.work), errPodDeleted) {
			return false
		}
		w.log.Error(err, "Writing the final status; trying again")
		return true
	})
}

// untilWritten calls write until it succeeds or again, given its error,
// says to stop.
func untilWritten(write func() error, again func(error) bool) error {
	for {
		err := write()
		if err == nil || !again(err) {
			return err
		}
	}
}

// stopped handles work that was stopped from outside: a deadline fails the
// pod; after a deletion or the runtime's shutdown nothing is written (the
// pod goes away, or the next runtime takes over).
func (w *podWorker) stopped(last *exit) error {
	if !errors.Is(context.Cause(w.work), errDeadline) {
		return nil
	}
	ex := exit{code: exitCodeKilled, reason: reasonStatusUnknown, message: "the container was not running when the pod's deadline passed", ended: metav1.Now()}
	if last != nil {
		ex = *last
	}
	w.state.phase = corev1.PodFailed
	w.state.reason, w.state.message = reasonDeadlineExceeded, messageDeadlineExceeded
	w.state.container.state = terminatedState(ex, w.state.container.id)
	w.event(corev1.EventTypeNormal, reasonDeadlineExceeded, "Pod was active on the node longer than the specified deadline")
	return w.writeStatus()
}

// loseInstance handles an instance that was running when the runtime
// stopped: its leftover processes are killed, and it counts as killed.
func (w *podWorker) loseInstance(n int32) exit {
	if killLeftover(w.dir.instancePID(w.containerName(), n)) {
		w.log.Info("Killed the processes of a container the runtime lost when it stopped", "instance", n)
	}
	started := metav1.Now()
	if r := w.state.container.state.Running; r != nil {
		started = r.StartedAt
	}
	return exit{code: exitCodeKilled, reason: reasonStatusUnknown, message: messageLostOnRestart, started: started, ended: metav1.Now()}
}

// runInstance starts instance n of the container and waits for it to end.
func (w *podWorker) runInstance(n int32) exit {
	name := w.containerName()
	p, err := planContainer(w.pod, w.rt.opts.DeployerImages)
	if err != nil {
		return w.startFailed(n, err)
	}
	if p.mode == modeInProcess && w.rt.opts.Deploy == nil {
		return w.startFailed(n, errors.New(messageNoDeployerFunction))
	}
	logFile, err := w.dir.openInstanceLog(name, n)
	if err != nil {
		return w.startFailed(n, err)
	}
	defer func() { _ = logFile.Close() }()
	if !w.logsServed {
		w.serveLogs()
		w.logsServed = true
	}
	out := newCRILog(logFile, time.Now)
	stdout, stderr := out.stream(streamStdout), out.stream(streamStderr)

	started := metav1.Now()
	w.state.phase = corev1.PodRunning
	w.state.reason, w.state.message = "", ""
	w.state.container.restartCount = n
	w.state.container.id = containerID(string(w.uid), n)
	w.state.container.state = runningState(started)
	if err := w.writeStatus(); err != nil {
		w.log.Error(err, "Writing the running status")
	}
	w.event(corev1.EventTypeNormal, "Started", "Started container %s", name)

	var ex exit
	switch p.mode {
	case modeInProcess:
		ex.code, ex.message = w.runDeployer(p, stdout, stderr)
	default:
		ex.code, ex.message = w.runLocalProcess(p, n, stdout, stderr)
	}
	_ = stdout.Close()
	_ = stderr.Close()
	ex.started, ex.ended = started, metav1.Now()
	ex.reason = exitReason(ex.code)
	if ex.message == "" && ex.code != 0 && w.container().TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError {
		ex.message = out.lastOutput()
	}
	return ex
}

// startFailed reports a container that could not be started, as
// container runtimes do: exit code 128, reason StartError.
func (w *podWorker) startFailed(n int32, err error) exit {
	now := metav1.Now()
	w.state.container.restartCount = n
	w.state.container.id = containerID(string(w.uid), n)
	w.event(corev1.EventTypeWarning, "Failed", "Error: %v", err)
	return exit{code: exitCodeStartError, reason: reasonStartError, message: err.Error(), started: now, ended: now}
}

// runDeployer runs the deployer in-process.
func (w *podWorker) runDeployer(p plan, stdout, stderr *criStream) (int32, string) {
	env, notes := containerEnv(w.work, w.pod, w.container(), apiSource{client: w.kubelet.client}, podFacts{hostIP: w.state.hostIP, podIP: w.state.hostIP})
	w.note(notes)
	sa := ""
	if w.rt.opts.ImpersonateServiceAccounts {
		sa = serviceAccountOf(w.pod)
	}
	run := DeployerRun{
		Config: deployerConfig(w.rt.opts.Config, w.pod.Name, sa, w.pod.Namespace),
		Args:   expandAll(p.argv, env.lookup),
		Getenv: func(name string) string { v, _ := env.lookup(name); return v },
		Stdout: stdout,
		Stderr: stderr,
		Log:    w.log,
	}
	return runInProcess(w.work, w.rt.opts.Deploy, run, w.currentGrace)
}

// runLocalProcess runs the container's command as a local process.
func (w *podWorker) runLocalProcess(p plan, n int32, stdout, stderr *criStream) (int32, string) {
	spec, err := w.processSpec(p, n)
	if err != nil {
		ex := w.startFailed(n, err)
		return ex.code, ex.message
	}
	code, err := runProcess(w.work, spec, stdout, stderr, w.currentGrace)
	if err != nil {
		ex := w.startFailed(n, err)
		return ex.code, ex.message
	}
	return code, ""
}

// processSpec builds the local process of instance n: the pod's
// environment, its command with $(VAR) references expanded and found on the
// process's PATH, its working directory when it exists here.
func (w *podWorker) processSpec(p plan, n int32) (processSpec, error) {
	c := w.container()
	podEnv, notes := containerEnv(w.work, w.pod, c, apiSource{client: w.kubelet.client}, podFacts{hostIP: w.state.hostIP, podIP: w.state.hostIP})
	w.note(notes)
	kubeconfig := filepath.Join(string(w.dir), "kubeconfig")
	sa := ""
	if w.rt.opts.ImpersonateServiceAccounts {
		sa = serviceAccountOf(w.pod)
	}
	if err := writePodKubeconfig(w.rt.opts.Kubeconfig, kubeconfig, w.pod.Namespace, sa); err != nil {
		return processSpec{}, err
	}
	env := processEnvironment(podEnv, hostEnv{
		ownDirs:    w.rt.pathDirs(),
		hostPath:   os.Getenv("PATH"),
		home:       w.dir.home(),
		hostname:   hostname(w.pod),
		kubeconfig: kubeconfig,
	})
	argv := expandAll(p.argv, podEnv.lookup)
	path, err := lookPath(argv[0], lookupIn(env, "PATH"))
	if err != nil {
		return processSpec{}, err
	}
	dir := w.dir.home()
	if c.WorkingDir != "" {
		if info, err := os.Stat(c.WorkingDir); err == nil && info.IsDir() {
			dir = c.WorkingDir
		} else {
			w.note([]string{fmt.Sprintf("workingDir %s does not exist here; the process runs in %s", c.WorkingDir, dir)})
		}
	}
	return processSpec{path: path, args: argv, env: env, dir: dir, pidFile: w.dir.instancePID(c.Name, n)}, nil
}

// serveLogs makes kwok serve the pod's logs from the runtime's files and
// waits until it does. Failing only costs `kubectl logs`, so it is logged,
// not returned.
func (w *podWorker) serveLogs() {
	if err := ensureLogsObject(w.work, w.kubelet.dynamic, w.pod, w.dir); err != nil {
		w.log.Error(err, "kubectl logs will not work for this pod")
		return
	}
	if err := waitLogsServed(w.work, kwokLogs(w.kubelet.client, w.kubelet.dynamic, w.pod, w.containerName()), logsServedTimeout); err != nil {
		w.log.Error(err, "kubectl logs may not work for this pod")
	}
}

// statusBackoff spaces the attempts of one status write over about
// statusTimeout, as the kubelet's status manager keeps trying.
func statusBackoff() wait.Backoff {
	return wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 12, Cap: 5 * time.Second}
}

// writeStatus writes the worker's state into the pod's status, retrying
// conflicts with the latest pod and other errors for a while. A pod that is
// gone, or was replaced by another of the same name, stops the work; so
// does a pod whose status is terminal already, which is never rewritten.
func (w *podWorker) writeStatus() error {
	ctx, cancel := context.WithTimeout(w.ctx, statusTimeout)
	defer cancel()
	pod, err := w.c.pods.Pods(w.key.Namespace).Get(w.key.Name)
	if err != nil {
		pod = nil
	}
	retriable := func(err error) bool {
		return ctx.Err() == nil && !apierrors.IsNotFound(err) && !errors.Is(err, errTerminal)
	}
	err = retry.OnError(statusBackoff(), retriable, func() error {
		updated, err := w.updateStatus(ctx, pod)
		pod = updated
		return err
	})
	switch {
	case err == nil:
		w.final = w.final || w.state.terminal()
		return nil
	case apierrors.IsNotFound(err):
		w.stop(errPodDeleted, 0)
	case errors.Is(err, errTerminal):
		w.final = true
		w.stop(errTerminal, 0)
	}
	return fmt.Errorf("writing the status of pod %s: %w", w.key, err)
}

// updateStatus writes the status once, onto pod, or onto the latest pod
// when pod is nil. It returns the pod to try again with: nil after an
// error, so that the next attempt reads the latest.
func (w *podWorker) updateStatus(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	pods := w.kubelet.client.CoreV1().Pods(w.key.Namespace)
	if pod == nil {
		latest, err := pods.Get(ctx, w.key.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		pod = latest
	}
	if pod.UID != w.uid {
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), w.key.Name)
	}
	if isTerminal(pod) {
		return nil, errTerminal
	}
	update := pod.DeepCopy()
	update.Status = buildStatus(pod, w.state, metav1.Now())
	if _, err := pods.UpdateStatus(ctx, update, metav1.UpdateOptions{}); err != nil {
		return nil, err
	}
	return nil, nil
}

// event records an event about the pod, as the kubelet does.
func (w *podWorker) event(eventType, reason, format string, args ...any) {
	w.kubelet.recorder.Eventf(w.pod, eventType, reason, format, args...)
}

// note reports what the runtime had to leave out or change, in the pod's
// events and the runtime's log.
func (w *podWorker) note(notes []string) {
	for _, n := range notes {
		w.log.Info("Note", "note", n)
		w.event(corev1.EventTypeWarning, "LocalRuntime", "%s", n)
	}
}

func (w *podWorker) container() *corev1.Container {
	return &w.pod.Spec.Containers[0]
}

func (w *podWorker) containerName() string {
	if len(w.pod.Spec.Containers) == 0 {
		return ""
	}
	return w.pod.Spec.Containers[0].Name
}

// resume is where a worker starts from: nothing yet, or what an earlier
// runtime left in the pod's status.
type resume struct {
	state podState
	// fresh: no instance has been started yet.
	fresh bool
	// next is the number of the next instance to start; with lost, the
	// number of an instance that was running and is lost.
	next int32
	lost bool
	// lastExit is the exit of the previous instance, if it is known.
	lastExit *exit
}

// resumeFrom reads where to start from a non-terminal pod's status.
func resumeFrom(pod *corev1.Pod) resume {
	r := resume{state: podState{phase: pod.Status.Phase, startTime: pod.Status.StartTime}}
	status := firstContainerStatus(pod)
	if status == nil {
		r.fresh = true
		return r
	}
	r.state.container = containerRun{
		restartCount: status.RestartCount,
		id:           status.ContainerID,
		state:        *status.State.DeepCopy(),
		last:         *status.LastTerminationState.DeepCopy(),
	}
	switch {
	case status.State.Running != nil:
		r.next, r.lost = status.RestartCount, true
	case status.State.Terminated != nil:
		ex := exitOf(status.State.Terminated)
		r.next, r.lastExit = status.RestartCount+1, &ex
	case status.State.Waiting != nil && status.LastTerminationState.Terminated != nil && status.ContainerID != "":
		// Backing off after a failed instance.
		ex := exitOf(status.LastTerminationState.Terminated)
		r.next, r.lastExit = status.RestartCount+1, &ex
	default:
		r.fresh = status.ContainerID == ""
		r.next = status.RestartCount
	}
	return r
}

// exitOf reads an exit back from a terminated state.
func exitOf(t *corev1.ContainerStateTerminated) exit {
	return exit{code: t.ExitCode, reason: t.Reason, message: t.Message, started: t.StartedAt, ended: t.FinishedAt}
}

// firstContainerStatus is the status of the pod's (first) container.
func firstContainerStatus(pod *corev1.Pod) *corev1.ContainerStatus {
	if len(pod.Spec.Containers) == 0 {
		return nil
	}
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == pod.Spec.Containers[0].Name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// serviceAccountOf is the pod's service account.
func serviceAccountOf(pod *corev1.Pod) string {
	if pod.Spec.ServiceAccountName != "" {
		return pod.Spec.ServiceAccountName
	}
	return "default"
}

// hostname is the pod's host name, as the kubelet sets HOSTNAME.
func hostname(pod *corev1.Pod) string {
	if pod.Spec.Hostname != "" {
		return pod.Spec.Hostname
	}
	return pod.Name
}

// expandAll expands $(VAR) references in every argument.
func expandAll(argv []string, lookup func(string) (string, bool)) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = expand(a, lookup)
	}
	return out
}
