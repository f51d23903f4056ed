package invariants

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// world is a fake cluster state the checker looks at.
type world struct {
	t    *testing.T
	c    *Checker
	pods cache.Indexer
	rcs  cache.Indexer
	dc   *dcv1.DeploymentConfig
}

func newWorld(t *testing.T) *world {
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	rcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	maxSurge := intstr.FromInt32(1)
	dc := &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "dc"},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: 2,
			Strategy: dcv1.DeploymentStrategy{RollingParams: &dcv1.RollingDeploymentStrategyParams{MaxSurge: &maxSurge}},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "img"}}},
			},
		},
	}
	dcv1.SetDefaults(dc)
	return &world{t: t, c: newChecker(pods, rcs), pods: pods, rcs: rcs, dc: dc}
}

func (w *world) rc(version int64, phase dcv1.DeploymentPhase) *corev1.ReplicationController {
	dc := w.dc.DeepCopy()
	dc.Status.LatestVersion = version
	rc, err := deployment.New(dc)
	if err != nil {
		w.t.Fatal(err)
	}
	rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(phase)
	rc.UID = types.UID(rc.Name)
	w.put(w.rcs, rc)
	return rc
}

func (w *world) deployer(rc *corev1.ReplicationController, phase corev1.PodPhase) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: deployment.DeployerPodName(rc.Name), UID: types.UID(rc.Name),
			Labels: map[string]string{dcv1.DeployerPodForDeploymentLabel: rc.Name}},
		Status: corev1.PodStatus{Phase: phase},
	}
	w.put(w.pods, pod)
	return pod
}

// appPod adds a running application pod of a deployment.
func (w *world) appPod(name string, rc *corev1.ReplicationController) {
	w.put(w.pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
		Labels: map[string]string{dcv1.DeploymentConfigSelectorLabel: "web", dcv1.DeploymentSelectorLabel: rc.Name}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}})
}

func (w *world) put(store cache.Indexer, obj any) {
	if err := store.Update(obj); err != nil {
		w.t.Fatal(err)
	}
	w.c.observe(obj)
}

func (w *world) wantRules(rules ...string) {
	w.t.Helper()
	got := w.c.Stop()
	if len(got) != len(rules) {
		w.t.Fatalf("violations = %v, want rules %v", got, rules)
	}
	for i, v := range got {
		if v.Rule != rules[i] || len(v.Objects) == 0 {
			w.t.Errorf("violation %d = %q with %d objects, want %q", i, v.Rule, len(v.Objects), rules[i])
		}
	}
}

func TestHealthyRolloutHasNoViolations(t *testing.T) {
	w := newWorld(t)
	first := w.rc(1, dcv1.DeploymentPhaseComplete)
	w.deployer(first, corev1.PodSucceeded)
	second := w.rc(2, dcv1.DeploymentPhaseRunning)
	w.deployer(second, corev1.PodRunning)
	w.appPod("a", first)
	w.appPod("b", first)
	w.appPod("c", second) // desired 2 + maxSurge 1
	w.wantRules()
}

func TestTwoDeployers(t *testing.T) {
	w := newWorld(t)
	w.deployer(w.rc(1, dcv1.DeploymentPhaseRunning), corev1.PodRunning)
	w.deployer(w.rc(2, dcv1.DeploymentPhaseNew), corev1.PodPending)
	w.wantRules("two deployers at once")
}

// A deployer whose container has exited, in a pod the kubelet has not yet
// marked Succeeded, runs no more: the next rollout's deployer may start.
func TestExitedDeployerIsNotASecond(t *testing.T) {
	w := newWorld(t)
	exited := w.deployer(w.rc(1, dcv1.DeploymentPhaseComplete), corev1.PodRunning)
	exited.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "deployment",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}
	w.put(w.pods, exited)
	w.deployer(w.rc(2, dcv1.DeploymentPhaseNew), corev1.PodPending)
	w.wantRules()
}

func TestOutOfOrder(t *testing.T) {
	w := newWorld(t)
	w.rc(1, dcv1.DeploymentPhaseRunning)
	w.rc(2, dcv1.DeploymentPhasePending)
	w.wantRules("deployments out of order")
}

func TestDeployerLeavesFinishedPhase(t *testing.T) {
	w := newWorld(t)
	rc := w.rc(1, dcv1.DeploymentPhaseComplete)
	w.deployer(rc, corev1.PodSucceeded)
	w.deployer(rc, corev1.PodRunning)
	w.wantRules("deployer pod left a finished phase")
}

func TestSurgeExceeded(t *testing.T) {
	w := newWorld(t)
	first := w.rc(1, dcv1.DeploymentPhaseComplete)
	second := w.scaled(w.rc(2, dcv1.DeploymentPhaseRunning), 2)
	w.appPod("a", first)
	w.appPod("b", first)
	w.appPod("c", second)
	w.appPod("d", second)
	w.wantRules("surge exceeded")
}

// A DeploymentConfig scaled down (from 4 to 2) during one rollout starts
// the next with the last complete deployment over the limit: no violation
// until the new deployment adds a pod before the old one is scaled down.
func TestSurgeLeftOverFromBefore(t *testing.T) {
	w := newWorld(t)
	first := w.rc(1, dcv1.DeploymentPhaseComplete)
	second := w.rc(2, dcv1.DeploymentPhaseRunning)
	for _, name := range []string{"a", "b", "c", "d"} {
		w.appPod(name, first)
	}
	if got := w.c.violations; len(got) != 0 {
		t.Fatalf("violations before the rollout added a pod: %v", got)
	}
	w.appPod("e", w.scaled(second, 1))
	w.wantRules("surge exceeded")
}

// A retried deployment starts at 0 replicas while pods of its cancelled
// attempt are still going and the fall-back has brought the old deployment
// back: those pods are not the retry's. Its first scale-up over the limit is.
func TestSurgeLeftOverFromACancelledAttempt(t *testing.T) {
	w := newWorld(t)
	first := w.rc(1, dcv1.DeploymentPhaseComplete)
	second := w.rc(2, dcv1.DeploymentPhaseRunning)
	w.appPod("a", first)
	w.appPod("b", first)
	w.appPod("c", second)
	w.appPod("d", second)
	if got := w.c.violations; len(got) != 0 {
		t.Fatalf("violations before the retry scaled its deployment up: %v", got)
	}
	w.scaled(second, 1)
	w.appPod("e", second)
	w.wantRules("surge exceeded")
}

// scaled sets a deployment's replicas, as its deployer does.
func (w *world) scaled(rc *corev1.ReplicationController, n int32) *corev1.ReplicationController {
	rc.Spec.Replicas = &n
	w.put(w.rcs, rc)
	return rc
}

func TestEmptyImageAndOwners(t *testing.T) {
	w := newWorld(t)
	w.dc.Spec.Template.Spec.Containers[0].Image = " "
	rc := w.rc(1, dcv1.DeploymentPhaseNew)
	orphan := rc.DeepCopy()
	orphan.Name, orphan.OwnerReferences = "web-9", nil
	w.put(w.rcs, orphan)
	got := w.c.Stop()
	var rules []string
	for _, v := range got {
		rules = append(rules, v.Rule)
	}
	if joined := strings.Join(rules, ","); !strings.Contains(joined, "empty image") || !strings.Contains(joined, "rc without its controller") {
		t.Errorf("rules = %v", rules)
	}
	if err := Err(got); err == nil || !strings.Contains(err.Error(), "web-9") {
		t.Errorf("Err() = %v, want it to name web-9", err)
	}
}

// readyPod adds an application pod of a deployment, Ready or not.
func (w *world) readyPod(name string, rc *corev1.ReplicationController, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name),
		Labels: map[string]string{dcv1.DeploymentConfigSelectorLabel: "web", dcv1.DeploymentSelectorLabel: rc.Name}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}}}
	w.put(w.pods, pod)
	return pod
}

// deleting marks a pod deleted, as an RC scaled down does.
func (w *world) deleting(pod *corev1.Pod) {
	pod = pod.DeepCopy()
	now := metav1.Now()
	pod.DeletionTimestamp = &now
	w.put(w.pods, pod)
}

// TestAvailability walks a Rolling rollout of 2 replicas with maxSurge 1
// and maxUnavailable 0 (the world's DC): 2 pods must stay available.
func TestAvailability(t *testing.T) {
	tests := []struct {
		name  string
		steps func(w *world, first, second *corev1.ReplicationController)
		want  []string
	}{{
		name: "old pods deleted only once new ones are ready",
		steps: func(w *world, first, second *corev1.ReplicationController) {
			a, b := w.readyPod("a", first, true), w.readyPod("b", first, true)
			w.readyPod("c", second, false)
			w.readyPod("c", second, true)
			w.deleting(a)
			w.readyPod("d", second, true)
			w.deleting(b)
		},
	}, {
		name: "an old pod deleted before its replacement is ready",
		steps: func(w *world, first, second *corev1.ReplicationController) {
			a := w.readyPod("a", first, true)
			w.readyPod("b", first, true)
			w.readyPod("c", second, false)
			w.deleting(a)
		},
		want: []string{"availability dropped"},
	}, {
		name: "a pod that went unready on its own is allowed for",
		steps: func(w *world, first, second *corev1.ReplicationController) {
			a := w.readyPod("a", first, true)
			w.readyPod("b", first, true)
			w.readyPod("b", first, false)
			w.readyPod("c", second, true)
			w.deleting(a)
		},
	}, {
		name: "a rollout that starts below the minimum is held to it once reached",
		steps: func(w *world, first, second *corev1.ReplicationController) {
			a := w.readyPod("a", first, true)
			w.readyPod("c", second, false)
			w.deleting(a) // none available, but 2 never were: no violation
			w.readyPod("c", second, true)
			w.readyPod("d", second, true)
		},
	}, {
		name: "a retried rollout starts afresh",
		steps: func(w *world, first, second *corev1.ReplicationController) {
			c, d := w.readyPod("c", second, true), w.readyPod("d", second, true)
			failed := second.DeepCopy()
			failed.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseFailed)
			w.put(w.rcs, failed)
			w.deleting(c) // the fall-back scales the failed deployment down
			w.deleting(d)
			w.put(w.rcs, second) // rollout retry: Running again, from 0
			w.readyPod("e", second, false)
		},
	}, {
		name: "a DeploymentConfig scaled up mid-rollout is not held to the new minimum before it is reached",
		steps: func(w *world, first, second *corev1.ReplicationController) {
			w.readyPod("a", first, true)
			w.readyPod("b", first, true)
			scaled := second.DeepCopy()
			scaled.Annotations[dcv1.DesiredReplicasAnnotation] = "4"
			w.put(w.rcs, scaled)
			w.readyPod("c", second, true) // 3 of the new minimum of 4: not reached yet, no violation
		},
	}, {
		name: "the new minimum of a DeploymentConfig scaled up mid-rollout holds once reached",
		steps: func(w *world, first, second *corev1.ReplicationController) {
			w.readyPod("a", first, true)
			w.readyPod("b", first, true)
			scaled := second.DeepCopy()
			scaled.Annotations[dcv1.DesiredReplicasAnnotation] = "4"
			w.put(w.rcs, scaled)
			c := w.readyPod("c", second, true)
			w.readyPod("d", second, true)
			w.deleting(c) // 3 again, after 4 were reached
		},
		want: []string{"availability dropped"},
	}, {
		name: "a pod of a newer deployment: the stores are between rollouts",
		steps: func(w *world, first, second *corev1.ReplicationController) {
			a, b := w.readyPod("a", first, true), w.readyPod("b", first, true)
			third := w.rc(3, dcv1.DeploymentPhaseNew)
			w.readyPod("x", third, false)
			w.deleting(a)
			w.deleting(b)
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			maxUnavailable := intstr.FromInt32(0)
			w.dc.Spec.Strategy.RollingParams.MaxUnavailable = &maxUnavailable
			first := w.rc(1, dcv1.DeploymentPhaseComplete)
			second := w.rc(2, dcv1.DeploymentPhaseRunning)
			tt.steps(w, first, second)
			w.wantRules(tt.want...)
		})
	}
}

// A canary's DeploymentConfig scaled down (4 to 2) mid-rollout runs the old
// count until the deployer's next step takes up the new one: the surge
// limit stays that of 4 replicas (4 + 1), and a pod over it is still caught.
func TestSurgeAfterAScaleDownMidRollout(t *testing.T) {
	w := newWorld(t)
	w.dc.Spec.Replicas = 4
	first := w.rc(1, dcv1.DeploymentPhaseComplete)
	second := w.scaled(w.rc(2, dcv1.DeploymentPhaseRunning), 2)
	for _, name := range []string{"a", "b", "c"} {
		w.appPod(name, first)
	}
	w.appPod("d", second)
	w.appPod("e", second)
	scaled := second.DeepCopy()
	scaled.Annotations[dcv1.DesiredReplicasAnnotation] = "2"
	w.put(w.rcs, scaled)
	w.appPod("e", second) // an update of a pod: the limit is checked again
	if got := w.c.violations; len(got) != 0 {
		t.Fatalf("violations at 5 pods after the scale down: %v", got)
	}
	w.appPod("f", second)
	w.wantRules("surge exceeded")
}
