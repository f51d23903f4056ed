package nodebench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// measurer rolls the benchmark's objects out and times them.
type measurer struct {
	client    client.Client
	clientset kubernetes.Interface
	namespace string
	// memoryRoot is the kubelet's memory cgroup hierarchy.
	memoryRoot     string
	sampleInterval time.Duration
	timeout        time.Duration
	// inController says dc-controller runs the DC's rollouts itself
	// (--deployer-mode=controller-when-possible): there is no deployer pod.
	inController bool
}

// trigger is a write that starts a rollout; it returns the time just
// before the write that succeeded, which is the rollout's start.
type trigger func(ctx context.Context) (time.Time, error)

// rolloutDC starts rollout version of the DC with start and times it,
// with its first new pod.
func (m *measurer) rolloutDC(ctx context.Context, version int64, start trigger) (Sample, error) {
	selector := dcPodSelector(deployment.Name(dcName, version))
	return m.withFirstPod(ctx, selector, dcv1.DeploymentSelectorLabel, func(mark func(time.Time)) (Sample, error) {
		marked := func(ctx context.Context) (time.Time, error) {
			t0, err := start(ctx)
			mark(t0)
			return t0, err
		}
		if m.inController {
			return m.rolloutDCInController(ctx, version, marked)
		}
		return m.rolloutDCPod(ctx, version, marked)
	})
}

// rolloutDCPod starts rollout version of the DC, run by a deployer pod,
// with start and times it.
func (m *measurer) rolloutDCPod(ctx context.Context, version int64, start trigger) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	rcName := deployment.Name(dcName, version)
	pods, err := m.watchName(ctx, "pods", deployment.DeployerPodName(rcName))
	if err != nil {
		return Sample{}, err
	}
	defer pods.Stop()
	rcs, err := m.watchName(ctx, "replicationcontrollers", rcName)
	if err != nil {
		return Sample{}, err
	}
	defer rcs.Stop()
	t0, err := start(ctx)
	if err != nil {
		return Sample{}, err
	}
	s := Sample{System: SystemDC}
	var sampler *memorySampler
	defer func() {
		if sampler != nil {
			sampler.stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("rollout %s: not complete after %s", rcName, m.timeout)
		case ev, ok := <-pods.ResultChan():
			if !ok {
				return s, fmt.Errorf("rollout %s: the watch of its deployer pod ended", rcName)
			}
			pod, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				continue
			}
			if sampler == nil {
				sampler = startSampler(ctx, m.memoryRoot, pod.UID, m.sampleInterval)
			}
			if id := deployerContainerID(pod); id != "" {
				sampler.setContainer(id)
			}
			if pod.Status.Phase == corev1.PodRunning && s.DeployerRunning == 0 {
				s.DeployerRunning = time.Since(t0).Seconds()
			}
			if deployerExited(pod) && s.DeployerExited == 0 {
				s.DeployerExited = time.Since(t0).Seconds()
			}
			if pod.Status.Phase == corev1.PodSucceeded && s.DeployerDone == 0 {
				s.DeployerDone = time.Since(t0).Seconds()
			}
			if s.Complete != 0 && s.DeployerDone != 0 {
				return m.finishDC(ctx, s, t0, sampler, rcName)
			}
		case ev, ok := <-rcs.ResultChan():
			if !ok {
				return s, fmt.Errorf("rollout %s: the watch of its RC ended", rcName)
			}
			rc, isRC := ev.Object.(*corev1.ReplicationController)
			if !isRC {
				continue
			}
			switch deployment.Phase(rc) {
			case dcv1.DeploymentPhaseComplete:
				if s.Complete != 0 {
					continue
				}
				s.Complete = time.Since(t0).Seconds()
				// The two watches are separate streams: the RC's Complete
				// may come before the pod's Succeeded, which caused it.
				if s.DeployerDone != 0 {
					return m.finishDC(ctx, s, t0, sampler, rcName)
				}
			case dcv1.DeploymentPhaseFailed:
				return s, fmt.Errorf("rollout %s failed: %s", rcName, rc.Annotations[dcv1.DeploymentStatusReasonAnnotation])
			}
		}
	}
}

// finishDC adds the deployer pod's memory and the times of its first and
// last log lines to a complete DC rollout that started at t0.
func (m *measurer) finishDC(ctx context.Context, s Sample, t0 time.Time, sampler *memorySampler, rcName string) (Sample, error) {
	if s.DeployerRunning == 0 || s.DeployerDone == 0 {
		return s, fmt.Errorf("rollout %s: complete, but its deployer pod was not seen both Running and Succeeded", rcName)
	}
	if sampler == nil {
		return s, fmt.Errorf("rollout %s: complete, but its deployer pod was never seen", rcName)
	}
	peaks, seen := sampler.stop()
	if !seen {
		return s, fmt.Errorf("rollout %s: the deployer pod's memory cgroup was never found under %s", rcName, m.memoryRoot)
	}
	s.DeployerPeak, s.DeployerContainerPeak, s.DeployerRSS = peaks.Pod, peaks.Container, peaks.RSS
	logs, err := m.clientset.CoreV1().Pods(m.namespace).GetLogs(deployment.DeployerPodName(rcName), &corev1.PodLogOptions{Timestamps: true}).DoRaw(ctx)
	if err != nil {
		return s, fmt.Errorf("rollout %s: reading its deployer's log: %w", rcName, err)
	}
	first, last, err := logSpan(logs)
	if err != nil {
		return s, fmt.Errorf("rollout %s: its deployer's log: %w", rcName, err)
	}
	s.LogFirst, s.LogLast = first.Sub(t0).Seconds(), last.Sub(t0).Seconds()
	return s, nil
}

// logSpan is the times of the first and last lines of a log read with
// timestamps (each line starts with an RFC 3339 time the runtime took when
// the line was written).
func logSpan(data []byte) (first, last time.Time, err error) {
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		stamp, _, _ := strings.Cut(line, " ")
		t, perr := time.Parse(time.RFC3339Nano, stamp)
		if perr != nil {
			return first, last, fmt.Errorf("a line without a timestamp: %q", line)
		}
		if first.IsZero() {
			first = t
		}
		last = t
	}
	if first.IsZero() {
		return first, last, errors.New("no lines")
	}
	return first, last, nil
}

// deployerExited reports whether the kubelet has reported the deployer
// container terminated (which it does before the pod's phase, once the
// pod's sandbox is stopped too).
func deployerExited(pod *corev1.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Terminated != nil {
			return true
		}
	}
	return false
}

// deployerContainerID is the deployer container's runtime ID, once the
// kubelet reports it.
func deployerContainerID(pod *corev1.Pod) string {
	for _, c := range pod.Status.ContainerStatuses {
		if c.ContainerID != "" {
			return c.ContainerID
		}
	}
	return ""
}

// rolloutDeployment starts a rollout of the Deployment with start and
// waits until it is complete as `kubectl rollout status` says: generation
// is the Deployment's generation after start's write. It times the first
// new pod too.
func (m *measurer) rolloutDeployment(ctx context.Context, start func(ctx context.Context) (time.Time, int64, error)) (Sample, error) {
	selector := labels.Set{"app": deploymentName}.String()
	return m.withFirstPod(ctx, selector, deploymentVersionLabel, func(mark func(time.Time)) (Sample, error) {
		return m.rolloutDeploymentOnly(ctx, func(ctx context.Context) (time.Time, int64, error) {
			t0, generation, err := start(ctx)
			mark(t0)
			return t0, generation, err
		})
	})
}

// rolloutDeploymentOnly is rolloutDeployment without the first new pod.
func (m *measurer) rolloutDeploymentOnly(ctx context.Context, start func(ctx context.Context) (time.Time, int64, error)) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	w, err := m.watchName(ctx, "deployments", deploymentName)
	if err != nil {
		return Sample{}, err
	}
	defer w.Stop()
	t0, generation, err := start(ctx)
	if err != nil {
		return Sample{}, err
	}
	s := Sample{System: SystemDeployment}
	for {
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("Deployment %s: not complete after %s", deploymentName, m.timeout)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return s, fmt.Errorf("Deployment %s: the watch ended", deploymentName)
			}
			d, isDeployment := ev.Object.(*appsv1.Deployment)
			if !isDeployment {
				continue
			}
			if deploymentComplete(d, generation) {
				s.Complete = time.Since(t0).Seconds()
				return s, nil
			}
			if why := deploymentFailed(d); why != "" && d.Status.ObservedGeneration >= generation {
				return s, fmt.Errorf("Deployment %s: %s", deploymentName, why)
			}
		}
	}
}

// watchName watches one object of the namespace by name, from now on.
func (m *measurer) watchName(ctx context.Context, resource, name string) (watch.Interface, error) {
	opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	var w watch.Interface
	var err error
	switch resource {
	case "pods":
		w, err = m.clientset.CoreV1().Pods(m.namespace).Watch(ctx, opts)
	case "replicationcontrollers":
		w, err = m.clientset.CoreV1().ReplicationControllers(m.namespace).Watch(ctx, opts)
	case "deployments":
		w, err = m.clientset.AppsV1().Deployments(m.namespace).Watch(ctx, opts)
	default:
		return nil, fmt.Errorf("cannot watch %s", resource)
	}
	if err != nil {
		return nil, fmt.Errorf("watching %s %s: %w", resource, name, err)
	}
	return w, nil
}

// changeDC is the trigger of a measured DC rollout: a new VERSION.
func (m *measurer) changeDC(version int) trigger {
	return func(ctx context.Context) (time.Time, error) {
		var t0 time.Time
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			dc := &dcv1.DeploymentConfig{}
			if err := m.client.Get(ctx, client.ObjectKey{Namespace: m.namespace, Name: dcName}, dc); err != nil {
				return err
			}
			setVersion(&dc.Spec.Template.Spec, version)
			t0 = time.Now()
			return m.client.Update(ctx, dc)
		})
		if err != nil {
			return t0, fmt.Errorf("changing DeploymentConfig %s: %w", dcName, err)
		}
		return t0, nil
	}
}

// changeDeployment is the trigger of a measured Deployment rollout.
func (m *measurer) changeDeployment(version int) func(ctx context.Context) (time.Time, int64, error) {
	return func(ctx context.Context) (time.Time, int64, error) {
		var t0 time.Time
		var generation int64
		deployments := m.clientset.AppsV1().Deployments(m.namespace)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			d, err := deployments.Get(ctx, deploymentName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			setVersion(&d.Spec.Template.Spec, version)
			t0 = time.Now()
			updated, err := deployments.Update(ctx, d, metav1.UpdateOptions{})
			if err == nil {
				generation = updated.Generation
			}
			return err
		})
		if err != nil {
			return t0, 0, fmt.Errorf("changing Deployment %s: %w", deploymentName, err)
		}
		return t0, generation, nil
	}
}

// latestVersion is the DC's status.latestVersion.
func (m *measurer) latestVersion(ctx context.Context) (int64, error) {
	dc := &dcv1.DeploymentConfig{}
	if err := m.client.Get(ctx, client.ObjectKey{Namespace: m.namespace, Name: dcName}, dc); err != nil {
		return 0, fmt.Errorf("reading DeploymentConfig %s: %w", dcName, err)
	}
	return dc.Status.LatestVersion, nil
}

// waitQuiet waits until the namespace has only running, ready pods and
// finished deployer pods, none of them terminating: the previous
// rollout's leftovers never overlap the next rollout.
func (m *measurer) waitQuiet(ctx context.Context, want int) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, m.timeout, true, func(ctx context.Context) (bool, error) {
		list, err := m.clientset.CoreV1().Pods(m.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		ready, busy := countPods(list.Items)
		last = fmt.Sprintf("%d ready pods of %d, %d starting or terminating", ready, want, busy)
		return ready == want && busy == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the namespace to settle (%s): %w", last, errors.Join(err, ctx.Err()))
	}
	return nil
}

// countPods counts ready application pods and pods still starting or
// terminating; finished pods (deployers) count as neither.
func countPods(pods []corev1.Pod) (ready, busy int) {
	for _, p := range pods {
		switch {
		case p.DeletionTimestamp != nil:
			busy++
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		case p.Status.Phase == corev1.PodRunning && podReady(p):
			ready++
		default:
			busy++
		}
	}
	return ready, busy
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
