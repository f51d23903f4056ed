package audit

import "strings"

// Actors the benchmark reports on. Their order is the order of the report's
// tables.
const (
	ActorBench            = "dc-bench"
	ActorDCController     = "dc-controller"
	ActorDeployer         = "deployers"
	ActorPodRuntime       = "pod runtime (kubelet of deployer pods)"
	ActorRCManager        = "RC manager (kcm)"
	ActorRSManager        = "RS manager (kcm)"
	ActorDeploymentCtrl   = "Deployment controller (kcm)"
	ActorGarbageCollector = "garbage collector (kcm)"
	ActorNamespaceCtrl    = "namespace controller (kcm)"
	ActorScheduler        = "scheduler"
	ActorKwok             = "kwok (kubelet of app pods)"
)

// ActorOrder lists the known actors in report order; others follow sorted.
func ActorOrder() []string {
	return []string{
		ActorBench, ActorDCController, ActorDeployer, ActorPodRuntime,
		ActorRCManager, ActorRSManager, ActorDeploymentCtrl, ActorGarbageCollector,
		ActorNamespaceCtrl, ActorScheduler, ActorKwok,
	}
}

// Actor names the component that made a request, from its user agent and
// user name:
//
//   - dc-controller, dc-bench and the playground's pod runtime set their
//     own user agents;
//   - a deployer acts as its pod's service account ("deployer") and has the
//     user agent "dc-deploy (namespace/pod)";
//   - kube-controller-manager's controllers each have a client of their own
//     whose user agent ends in the controller's name;
//   - kube-scheduler and kwok are known by their user agents.
func Actor(e Event) string {
	ua := e.UserAgent
	user := e.Username()
	switch {
	case strings.HasPrefix(ua, "dc-bench"):
		return ActorBench
	case strings.HasPrefix(ua, "dc-controller"):
		return ActorDCController
	case strings.HasPrefix(ua, "dc-deploy"), strings.HasSuffix(user, ":deployer") && strings.HasPrefix(user, "system:serviceaccount:"):
		return ActorDeployer
	case strings.HasPrefix(ua, "dc-local-runtime"):
		return ActorPodRuntime
	case strings.HasPrefix(ua, "kube-scheduler"), user == "system:kube-scheduler":
		return ActorScheduler
	case strings.HasPrefix(ua, "kwok"):
		return ActorKwok
	}
	if name, ok := strings.CutPrefix(user, "system:serviceaccount:kube-system:"); ok {
		return kcmActor(name)
	}
	if strings.HasPrefix(ua, "kube-controller-manager") {
		return kcmActor(ua[strings.LastIndexByte(ua, '/')+1:])
	}
	return otherActor(ua, user)
}

// kcmActor is the actor of one of kube-controller-manager's controllers,
// given its client name: the suffix of its user agent, or its service
// account's name when it runs with --use-service-account-credentials.
func kcmActor(name string) string {
	switch name {
	case "replication-controller":
		return ActorRCManager
	case "replicaset-controller":
		return ActorRSManager
	case "deployment-controller":
		return ActorDeploymentCtrl
	case "generic-garbage-collector":
		return ActorGarbageCollector
	case "namespace-controller":
		return ActorNamespaceCtrl
	}
	return "kcm: " + name
}

// otherActor names an unknown client by the first word of its user agent,
// or its user name when it sends none.
func otherActor(ua, user string) string {
	if ua == "" {
		return "other: " + user
	}
	first, _, _ := strings.Cut(ua, " ")
	first, _, _ = strings.Cut(first, "/")
	return "other: " + first
}

// Category is the kind of object a write is about, as the report splits
// them: application pods (their creation, binding and status), the
// deployers' own pods, events, and everything else (the workload objects).
type Category int

const (
	CategoryObjects Category = iota
	CategoryAppPods
	CategoryDeployerPods
	CategoryEvents
)

// deployerPodSuffix ends the names of deployer pods ("<rc>-deploy"); hook
// pods end in "-hook-pre|mid|post".
const deployerPodSuffix = "-deploy"

// CategoryOf sorts a request into a Category.
func CategoryOf(e Event) Category {
	if e.ObjectRef == nil {
		return CategoryObjects
	}
	switch e.ObjectRef.Resource {
	case "logs":
		// kwok's Logs objects, which the playground's pod runtime writes
		// so that `kubectl logs` of deployer and hook pods works: the
		// kubelet's side of those pods, with no cost on a real cluster.
		if e.ObjectRef.APIGroup == "kwok.x-k8s.io" {
			return CategoryDeployerPods
		}
	case "pods":
		if isDeployerPodName(e.ObjectRef.Name) {
			return CategoryDeployerPods
		}
		return CategoryAppPods
	case "events":
		return CategoryEvents
	}
	return CategoryObjects
}

// isDeployerPodName reports whether a pod's name is a deployer's
// ("<rc>-deploy") or a hook's ("<rc>-hook-pre|mid|post").
func isDeployerPodName(name string) bool {
	return strings.HasSuffix(name, deployerPodSuffix) || strings.Contains(name, "-hook-")
}

// aboutDeployerPod reports whether a request is about a deployer or hook
// pod: a write of the pod (or its kwok Logs object), or an event whose
// involved object it is. Events are named "<involved object>.<suffix>"
// by client-go's recorders, and the audit log keeps a create's name.
func aboutDeployerPod(e Event) bool {
	if e.ObjectRef == nil {
		return false
	}
	switch e.ObjectRef.Resource {
	case "pods", "logs":
		return CategoryOf(e) == CategoryDeployerPods
	case "events":
		name := e.ObjectRef.Name
		if i := strings.LastIndexByte(name, '.'); i > 0 {
			return isDeployerPodName(name[:i])
		}
	}
	return false
}
