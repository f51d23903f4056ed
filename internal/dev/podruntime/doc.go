// Package podruntime is the playground's kubelet for deployer and hook
// pods. kwok plays the kubelet of ordinary pods on the playground's fake
// nodes, but only pretends to run them; the pods that deployconfig itself
// creates (labelled deployconfig.io/deployer-pod-for.name) must really run
// for a rollout to happen. The runtime watches those pods once they are
// bound to a fake node and:
//
//   - runs deployer pods whose container runs dc-deploy in-process (a
//     DeployFunc), each with its own client and rate limiter, under the
//     pod's service account;
//   - runs hook and custom-strategy pods' command as a local process in its
//     own process group, with the pod's environment, a PATH that finds
//     dc-deploy (also as openshift-deploy) and kubectl, and a KUBECONFIG
//     for the cluster;
//   - writes as each node's kubelet: every fake node has a client (and rate
//     limiter) of its own for its pods' status, events and Logs objects, at
//     a kubelet's client limits, as a real cluster has one kubelet per node;
//   - writes the pod status a kubelet would: phase, conditions, container
//     state with exit code, reason and times, restart count (restartPolicy
//     OnFailure restarts the container after a back-off), readiness;
//   - stops the work when the pod is deleted (and then removes the pod, as
//     a kubelet does once its containers have stopped) or when its
//     activeDeadlineSeconds pass (phase Failed, reason DeadlineExceeded);
//   - keeps every container's output in a CRI-format log file that kwok
//     serves through a Logs object, so that `kubectl logs` (also -p and -f)
//     works.
//
// When the runtime starts again, pods that are already terminal are left
// alone. A container that was running when the runtime stopped is lost, as
// a container is when its node's runtime loses it: its leftover process
// group is killed, and the container counts as terminated with exit code
// 137 and reason ContainerStatusUnknown, so that a restartPolicy Never pod
// (the deployer) fails and an OnFailure pod (a Retry hook) restarts it.
// Re-running a deployer or hook that may have done half its work would be
// a surprise no kubelet makes.
package podruntime
