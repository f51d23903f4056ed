package nodebench

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// The objective's "trigger → first new pod": when the watch first saw a
// pod of the rollout's new version (a DC's pod of the new RC, a
// Deployment's pod of the new ReplicaSet). A pod is new when its version
// label (the DC pod's deployment label, the Deployment pod's
// pod-template-hash) is none of the pods' that were there before the
// trigger: the namespace has settled, so only the rollout makes pods.

// deploymentVersionLabel is the Deployment controller's label on a
// ReplicaSet's pods: it tells one ReplicaSet's pods from another's.
const deploymentVersionLabel = "pod-template-hash"

// dcPodSelector selects the application pods of one RC of the DC (its
// deployer and hook pods carry the deployer-pod label instead).
func dcPodSelector(rcName string) string {
	return labels.Set{dcv1.DeploymentSelectorLabel: rcName}.String() + ",!" + dcv1.DeployerPodForDeploymentLabel
}

// firstPodWatch waits for the first new pod of a rollout.
type firstPodWatch struct {
	w    watch.Interface
	done chan struct{}
	mu   sync.Mutex
	seen time.Time
}

// watchFirstNewPod lists the pods selector selects, then watches from
// that list on for a pod whose versionLabel value none of them had.
func (m *measurer) watchFirstNewPod(ctx context.Context, selector, versionLabel string) (*firstPodWatch, error) {
	pods := m.clientset.CoreV1().Pods(m.namespace)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing pods %s: %w", selector, err)
	}
	old := map[string]bool{}
	for _, p := range list.Items {
		old[p.Labels[versionLabel]] = true
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.ResourceVersion})
	if err != nil {
		return nil, fmt.Errorf("watching pods %s: %w", selector, err)
	}
	f := &firstPodWatch{w: w, done: make(chan struct{})}
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if ok && isNewPod(ev.Type, pod, old, versionLabel) {
				f.mu.Lock()
				f.seen = time.Now()
				f.mu.Unlock()
				close(f.done)
				return
			}
		}
	}()
	return f, nil
}

// isNewPod reports whether a watch event shows a pod of a version none of
// the old pods had.
func isNewPod(t watch.EventType, pod *corev1.Pod, old map[string]bool, versionLabel string) bool {
	return (t == watch.Added || t == watch.Modified) && !old[pod.Labels[versionLabel]]
}

// since waits for the first new pod (it exists once the rollout is
// complete; the watch may deliver it a moment later than the rollout's
// own watch) and returns its seconds from t0; 0 when ctx ends first.
func (f *firstPodWatch) since(ctx context.Context, t0 time.Time) float64 {
	select {
	case <-f.done:
	case <-ctx.Done():
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen.Sub(t0).Seconds()
}

// stop ends the watch.
func (f *firstPodWatch) stop() {
	f.w.Stop()
}

// withFirstPod runs a measured rollout, triggered by start, and adds its
// trigger → first new pod to the sample.
func (m *measurer) withFirstPod(ctx context.Context, selector, versionLabel string, roll func(mark func(t0 time.Time)) (Sample, error)) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	first, err := m.watchFirstNewPod(ctx, selector, versionLabel)
	if err != nil {
		return Sample{}, err
	}
	defer first.stop()
	var t0 time.Time
	s, err := roll(func(t time.Time) { t0 = t })
	if err != nil || t0.IsZero() {
		return s, err
	}
	s.FirstPod = first.since(ctx, t0)
	return s, nil
}
