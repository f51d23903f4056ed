// Package scaler scales a deployment's ReplicationController (through its
// scale subresource, or with a patch that also records the count) and waits, by watching, for the result: the pods to
// exist, to be available, or to be gone.
package scaler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployer/observe"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// ErrTimeout is wrapped by the errors of waits that ran out of time.
var ErrTimeout = errors.New("timed out")

// Scaler scales ReplicationControllers of one namespace and waits for them.
type Scaler struct {
	client    kubernetes.Interface
	namespace string
	// afterFunc starts the timers of waits; a field so that tests control
	// time.
	afterFunc func(d time.Duration, f func()) stopResetter
}

// stopResetter is the part of a *time.Timer that waits use.
type stopResetter interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// New returns a Scaler for the ReplicationControllers of namespace.
func New(client kubernetes.Interface, namespace string) *Scaler {
	return &Scaler{client: client, namespace: namespace, afterFunc: func(d time.Duration, f func()) stopResetter {
		return time.AfterFunc(d, f)
	}}
}

// Get reads a ReplicationController.
func (s *Scaler) Get(ctx context.Context, name string) (*corev1.ReplicationController, error) {
	rc, err := s.client.CoreV1().ReplicationControllers(s.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get replicationcontroller %s/%s: %w", s.namespace, name, err)
	}
	return rc, nil
}

// Scale sets the RC's replicas to n and records n as the deployer's last
// replica count, in one write, then waits for the RC manager to have made
// (or removed) the pods, failing only when the RC's counts stand still for
// timeout. It returns the RC as last seen.
func (s *Scaler) Scale(ctx context.Context, name string, n int32, timeout time.Duration) (*corev1.ReplicationController, error) {
	if err := s.setAndRecord(ctx, name, n); err != nil {
		return nil, err
	}
	return s.WaitReplicas(ctx, name, n, timeout)
}

// Step is Scale for a count the deployer passes through on the way to
// another, such as a rolling update's intermediate steps: it does not
// record n, because nothing reads a count the deployer is about to leave
// and the record would be one more write per step.
func (s *Scaler) Step(ctx context.Context, name string, n int32, timeout time.Duration) (*corev1.ReplicationController, error) {
	if err := s.setScale(ctx, name, n); err != nil {
		return nil, err
	}
	return s.WaitReplicas(ctx, name, n, timeout)
}

// setScale writes n into the RC's scale subresource, the interface through
// which anything scales a workload (and which RBAC and admission can tell
// apart from other RC writes). The update carries no resourceVersion, so it
// needs no read first and never conflicts: the deployer is the only writer
// of a running deployment's replicas, and setting a count is safe to repeat.
func (s *Scaler) setScale(ctx context.Context, name string, n int32) error {
	scale := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace},
		Spec:       autoscalingv1.ScaleSpec{Replicas: n},
	}
	if _, err := s.client.CoreV1().ReplicationControllers(s.namespace).UpdateScale(ctx, name, scale, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("scale replicationcontroller %s/%s to %d: %w", s.namespace, name, n, err)
	}
	return nil
}

// setAndRecord sets the RC's replicas and keeps n in its replicas
// annotation with one merge patch. A scale update and an annotation patch
// would be two writes for one count (the write budget counts every write of a
// rollout). Like setScale the patch carries no resourceVersion, so it
// needs no read first and never conflicts: the deployer is the only writer
// of a running deployment's replicas, and setting a count is safe to repeat.
func (s *Scaler) setAndRecord(ctx context.Context, name string, n int32) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}},"spec":{"replicas":%d}}`, dcv1.DeploymentReplicasAnnotation, strconv.Itoa(int(n)), n)
	_, err := s.client.CoreV1().ReplicationControllers(s.namespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("scale replicationcontroller %s/%s to %d: %w", s.namespace, name, n, err)
	}
	return nil
}

// WaitReplicas waits until the RC manager has seen the RC's current spec
// and its status counts n pods. It fails when the RC's counts stand still
// for timeout: a busy RC manager that is still working through the pods is
// progress, not a timeout.
func (s *Scaler) WaitReplicas(ctx context.Context, name string, n int32, timeout time.Duration) (*corev1.ReplicationController, error) {
	rc, err := s.untilProgressing(ctx, name, timeout, func(rc *corev1.ReplicationController) bool {
		return observed(rc) && rc.Status.Replicas == n
	})
	if errors.Is(err, ErrTimeout) {
		return rc, fmt.Errorf("replicationcontroller %s/%s did not reach %d replicas: no progress within %s: %w", s.namespace, name, n, timeout, err)
	}
	return rc, err
}

// Settle returns rc when the RC manager has acted on its spec, or waits
// until it has, as WaitReplicas does. A rollout resumed after its runner
// died can find a scale written but its pods not yet made or removed;
// planning the next scale from the spec alone would then count pods that
// still run as gone. A deployment never scaled since its creation at zero
// has no pods to wait for.
func (s *Scaler) Settle(ctx context.Context, rc *corev1.ReplicationController, timeout time.Duration) (*corev1.ReplicationController, error) {
	spec := deployment.Replicas(rc)
	if rc.Status.Replicas == spec && (observed(rc) || spec == 0 && rc.Generation <= 1) {
		return rc, nil
	}
	return s.WaitReplicas(ctx, rc.Name, spec, timeout)
}

// WaitAvailable waits until every replica of the RC is available: ready for
// the RC's minReadySeconds, as the RC manager counts them in
// status.availableReplicas. Like WaitReplicas it fails when the RC's counts
// stand still for timeout.
func (s *Scaler) WaitAvailable(ctx context.Context, name string, timeout time.Duration) (*corev1.ReplicationController, error) {
	rc, err := s.untilProgressing(ctx, name, timeout, func(rc *corev1.ReplicationController) bool {
		return observed(rc) && rc.Status.AvailableReplicas >= deployment.Replicas(rc)
	})
	if errors.Is(err, ErrTimeout) {
		// The wording is OpenShift's: users and their tooling grep for it.
		return rc, fmt.Errorf("pods for rc '%s/%s' took longer than %.f seconds to become available", s.namespace, name, timeout.Seconds())
	}
	return rc, err
}

// WaitAvailableChange waits until the RC's availableReplicas differs from
// available, or until deadline. Reaching the deadline is not an error: the
// caller decides what no change means. It returns the RC as last seen.
func (s *Scaler) WaitAvailableChange(ctx context.Context, name string, available int32, deadline time.Time) (*corev1.ReplicationController, error) {
	rc, err := s.until(ctx, name, time.Until(deadline), func(rc *corev1.ReplicationController) bool {
		return rc.Status.AvailableReplicas != available
	})
	if errors.Is(err, ErrTimeout) {
		return s.Get(ctx, name)
	}
	return rc, err
}

// WaitPodsGone waits up to timeout until no pod matches the RC's selector:
// the pods of a scaled-down RC have terminated and are deleted.
func (s *Scaler) WaitPodsGone(ctx context.Context, rc *corev1.ReplicationController, timeout time.Duration) error {
	if len(rc.Spec.Selector) == 0 {
		return fmt.Errorf("replicationcontroller %s/%s has no selector", rc.Namespace, rc.Name)
	}
	pods := s.client.CoreV1().Pods(s.namespace)
	list := func(ctx context.Context, opts metav1.ListOptions) ([]*corev1.Pod, string, error) {
		l, err := pods.List(ctx, opts)
		if err != nil {
			return nil, "", fmt.Errorf("list the pods of replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
		}
		items := make([]*corev1.Pod, len(l.Items))
		for i := range l.Items {
			items[i] = &l.Items[i]
		}
		return items, l.ResourceVersion, nil
	}
	tctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrTimeout)
	defer cancel()
	err := observe.Collection(tctx, labels.SelectorFromSet(rc.Spec.Selector), list, pods.Watch,
		func(set map[string]*corev1.Pod) (bool, error) { return len(set) == 0, nil })
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(tctx), ErrTimeout) {
		return fmt.Errorf("pods of replicationcontroller %s/%s still exist after %s: %w", rc.Namespace, rc.Name, timeout, ErrTimeout)
	}
	return err
}

// until watches the RC until cond holds, for at most timeout. When the time
// runs out the error wraps ErrTimeout and the RC is the last one seen.
func (s *Scaler) until(ctx context.Context, name string, timeout time.Duration, cond func(*corev1.ReplicationController) bool) (*corev1.ReplicationController, error) {
	return s.watch(ctx, name, timeout, false, cond)
}

// untilProgressing watches the RC until cond holds, for as long as the RC's
// counts keep moving: every change of them (see counts) starts timeout
// afresh. When they stand still for timeout the error wraps ErrTimeout and
// the RC is the last one seen.
func (s *Scaler) untilProgressing(ctx context.Context, name string, timeout time.Duration, cond func(*corev1.ReplicationController) bool) (*corev1.ReplicationController, error) {
	return s.watch(ctx, name, timeout, true, cond)
}

// watch is until and untilProgressing: with progress, a change of the RC's
// counts restarts the timeout.
func (s *Scaler) watch(ctx context.Context, name string, timeout time.Duration, progress bool, cond func(*corev1.ReplicationController) bool) (*corev1.ReplicationController, error) {
	rcs := s.client.CoreV1().ReplicationControllers(s.namespace)
	get := func(ctx context.Context) (*corev1.ReplicationController, error) {
		rc, err := rcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get replicationcontroller %s/%s: %w", s.namespace, name, err)
		}
		return rc, nil
	}
	watchFn := func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return rcs.Watch(ctx, opts)
	}
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := s.afterFunc(timeout, func() { cancel(ErrTimeout) })
	defer timer.Stop()
	var last *corev1.ReplicationController
	check := func(rc *corev1.ReplicationController) (bool, error) {
		if progress && last != nil && counts(rc) != counts(last) {
			timer.Reset(timeout)
		}
		last = rc
		return cond(rc), nil
	}
	rc, err := observe.Object(tctx, name, get, watchFn, check)
	if err == nil {
		return rc, nil
	}
	if ctx.Err() == nil && errors.Is(context.Cause(tctx), ErrTimeout) {
		return last, fmt.Errorf("replicationcontroller %s/%s: %w", s.namespace, name, ErrTimeout)
	}
	return last, err
}

// rcCounts are the parts of an RC that move while the RC manager works
// towards its spec.
type rcCounts struct {
	observedGeneration                                     int64
	replicas, fullyLabeled, ready, available, specReplicas int32
}

// counts returns what progress of the RC is measured by.
func counts(rc *corev1.ReplicationController) rcCounts {
	return rcCounts{
		observedGeneration: rc.Status.ObservedGeneration,
		replicas:           rc.Status.Replicas,
		fullyLabeled:       rc.Status.FullyLabeledReplicas,
		ready:              rc.Status.ReadyReplicas,
		available:          rc.Status.AvailableReplicas,
		specReplicas:       deployment.Replicas(rc),
	}
}

// observed reports whether the RC manager has acted on the RC's current
// spec, so that its status counts are about that spec and not an older one.
func observed(rc *corev1.ReplicationController) bool {
	return rc.Status.ObservedGeneration >= rc.Generation
}

// ReplicationControllers returns the client of the namespace's RCs, for
// writers of a deployment's progress record (deployment.Update).
func (s *Scaler) ReplicationControllers() corev1client.ReplicationControllerInterface {
	return s.client.CoreV1().ReplicationControllers(s.namespace)
}

// Annotate sets the RC's annotations to the given values with a merge
// patch; a nil value removes the annotation. It returns the patched RC.
func (s *Scaler) Annotate(ctx context.Context, name string, values map[string]*string) (*corev1.ReplicationController, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": values}})
	if err != nil {
		return nil, fmt.Errorf("annotate replicationcontroller %s/%s: %w", s.namespace, name, err)
	}
	rc, err := s.client.CoreV1().ReplicationControllers(s.namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("annotate replicationcontroller %s/%s: %w", s.namespace, name, err)
	}
	return rc, nil
}

// WaitFor watches the RC until cond holds, bounded only by ctx (a pause
// that waits for a user has no timeout of its own). It returns the RC cond
// accepted.
func (s *Scaler) WaitFor(ctx context.Context, name string, cond func(*corev1.ReplicationController) bool) (*corev1.ReplicationController, error) {
	rcs := s.client.CoreV1().ReplicationControllers(s.namespace)
	get := func(ctx context.Context) (*corev1.ReplicationController, error) {
		rc, err := rcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get replicationcontroller %s/%s: %w", s.namespace, name, err)
		}
		return rc, nil
	}
	watchFn := func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return rcs.Watch(ctx, opts)
	}
	return observe.Object(ctx, name, get, watchFn, func(rc *corev1.ReplicationController) (bool, error) { return cond(rc), nil })
}
