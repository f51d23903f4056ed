package bench

import (
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// The critical path of a rollout comes from two sources. The
// audit log gives the steps that are writes of their own: the trigger,
// the deployer pod's create, its binding, and its kubelet's status writes.
// Steps that are a field of a write shared with other work (an RC's phase
// annotation, a scale among the writes of an RC or RS) are not in a
// Metadata-level audit record, so dc-bench's watch of the RCs and RSs
// notes them, as it notes completion.

// podRunningWrite is which status write of a deployer pod's kubelet makes
// it Running: the first is ContainerCreating (Pending), the second Running
// (see podruntime), the third its end.
const podRunningWrite = 2

// nthTimes records, for every request a filter selects, the completion
// times of the first few requests of each key, in order; e.g. a pod's
// first status writes.
type nthTimes struct {
	match func(audit.Event) (key string, ok bool)
	keep  int
	times map[string][]time.Time
}

func newNthTimes(keep int, match func(audit.Event) (string, bool)) *nthTimes {
	return &nthTimes{match: match, keep: keep, times: map[string][]time.Time{}}
}

// Add records e if it is selected and among its key's first keep.
func (t *nthTimes) Add(e audit.Event) {
	key, ok := t.match(e)
	if !ok {
		return
	}
	ts := t.times[key]
	i, _ := slices.BinarySearchFunc(ts, e.Completed, func(a, b time.Time) int { return a.Compare(b) })
	if i >= t.keep {
		return
	}
	ts = slices.Insert(ts, i, e.Completed)
	if len(ts) > t.keep {
		ts = ts[:t.keep]
	}
	t.times[key] = ts
}

// Get returns the n-th (from 1) time of key.
func (t *nthTimes) Get(key string, n int) (time.Time, bool) {
	ts := t.times[key]
	if n < 1 || n > len(ts) {
		return time.Time{}, false
	}
	return ts[n-1], true
}

// deployerScheduled matches the scheduler's bindings of deployer pods,
// keyed namespace/pod.
func deployerScheduled(e audit.Event) (string, bool) {
	ok := audit.Actor(e) == audit.ActorScheduler && e.Verb == "create" && e.Succeeded() &&
		e.Resource() == "pods/binding" && audit.CategoryOf(e) == audit.CategoryDeployerPods
	return e.Namespace() + "/" + e.Name(), ok
}

// deployerStatusWrite matches the status writes of deployer pods by their
// kubelet (the pod runtime), keyed namespace/pod.
func deployerStatusWrite(e audit.Event) (string, bool) {
	ok := audit.Actor(e) == audit.ActorPodRuntime && e.Succeeded() && e.Resource() == "pods/status" &&
		(e.Verb == "update" || e.Verb == "patch") && audit.CategoryOf(e) == audit.CategoryDeployerPods
	return e.Namespace() + "/" + e.Name(), ok
}

// rolloutSteps are the steps of one rollout of a phase, in seconds from
// its trigger; a step not seen is absent.
func (l *ledger) rolloutSteps(p *phaseRecord, name string) map[string]float64 {
	trigger := l.triggerTime(p, name)
	if trigger.IsZero() {
		return nil
	}
	steps := map[string]float64{report.StepTrigger: 0}
	at := func(step string, t time.Time, ok bool) {
		if ok && !t.IsZero() {
			steps[step] = t.Sub(trigger).Seconds()
		}
	}
	if p.System == report.SystemDC {
		pod := p.Namespace + "/" + deployment.DeployerPodName(deployment.Name(name, p.Version))
		created, ok := l.deployerPods.Get(pod)
		at(report.StepPodCreated, created, ok)
		scheduled, ok := l.scheduled.Get(pod)
		at(report.StepScheduled, scheduled, ok)
		running, ok := l.statusWrites.Get(pod, podRunningWrite)
		at(report.StepPodRunning, running, ok)
	}
	for step, t := range p.Steps[name] {
		at(step, t, true)
	}
	done, ok := p.Done[name]
	at(report.StepComplete, done, ok)
	return steps
}

// criticalPaths summarizes the throughput phases' critical paths per size,
// phase, system and mode, over every repeat.
func (r *runner) criticalPaths(l *ledger) []report.CriticalPath {
	type key struct {
		n            int
		phase        string
		system, mode string
	}
	var keys []key
	rollouts := map[key][]map[string]float64{}
	for _, p := range r.records {
		if p.Probe || p.Repeat == 0 || (p.Phase != report.PhaseFirst && p.Phase != report.PhaseChange) {
			continue
		}
		k := key{p.N, p.Phase, p.System, p.Mode}
		if _, ok := rollouts[k]; !ok {
			keys = append(keys, k)
			rollouts[k] = nil
		}
		for _, name := range p.Names {
			if steps := l.rolloutSteps(p, name); steps != nil {
				rollouts[k] = append(rollouts[k], steps)
			}
		}
	}
	out := make([]report.CriticalPath, 0, len(keys))
	for _, k := range keys {
		segments, total := report.PathOf(report.PathSteps(k.system, k.mode), rollouts[k])
		out = append(out, report.CriticalPath{N: k.n, Phase: k.phase, System: k.system, Mode: k.mode,
			Rollouts: len(rollouts[k]), Segments: segments, Total: total})
	}
	return out
}

// scaleHandler notes, for the tracker, every change of spec.replicas of
// the RCs or RSs owner names the rollout of (a new one made with replicas
// counts as a scale); created names the step an object's creation is
// ("" for none).
func scaleHandler(t *tracker, owner func(obj any) (name string, replicas int32, ok bool), created string) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			name, replicas, ok := owner(obj)
			if !ok {
				return
			}
			if created != "" {
				t.step(name, created)
			}
			if replicas > 0 {
				t.scaled(name)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			name, before, ok := owner(oldObj)
			_, after, ok2 := owner(newObj)
			if ok && ok2 && before != after {
				t.scaled(name)
			}
		},
	}
}

// rcOwner is the DC an RC is a deployment of, and its replicas.
func rcOwner(obj any) (string, int32, bool) {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return "", 0, false
	}
	name := rc.Labels[dcv1.DeploymentConfigLabel]
	return name, replicasOf(rc.Spec.Replicas), name != ""
}

// rsOwner is the Deployment that controls an RS, and its replicas.
func rsOwner(obj any) (string, int32, bool) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return "", 0, false
	}
	ref := metav1.GetControllerOf(rs)
	if ref == nil || ref.Kind != "Deployment" {
		return "", 0, false
	}
	return ref.Name, replicasOf(rs.Spec.Replicas), true
}

// replicasOf is a spec.replicas, 1 when unset as the API defaults it.
func replicasOf(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}
