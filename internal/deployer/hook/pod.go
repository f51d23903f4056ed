// Package hook runs a deployment's lifecycle hooks: an execNewPod hook is a
// pod made from one of the template's containers, whose log is streamed into
// the deployer's output and whose outcome is judged by the hook's failure
// policy.
package hook

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// The points of a rollout where hooks run.
const (
	Pre  = "pre"
	Mid  = "mid"
	Post = "post"
)

// ContainerName is the name of a hook pod's only container.
const ContainerName = "lifecycle"

// terminationGracePeriod is short because a hook pod is only deleted when
// its rollout is cancelled, and a cancel should take effect promptly.
const terminationGracePeriod int64 = 10

// ActiveDeadline returns what is left, in whole seconds, of the rollout's
// time budget that ends at deadline, for a hook pod's activeDeadlineSeconds.
// It fails when less than a second is left (the API refuses 0).
func ActiveDeadline(deadline, now time.Time) (int64, error) {
	left := int64(deadline.Sub(now) / time.Second)
	if left < 1 {
		return 0, fmt.Errorf("the rollout's active deadline (%s) has passed", deadline.UTC().Format(time.RFC3339))
	}
	return left, nil
}

// BuildPod returns the pod that runs an execNewPod hook of type hookType
// (pre, mid or post) for the deployment rc: one container "lifecycle" made
// from the template container the hook names, with the hook's command.
func BuildPod(hook *dcv1.LifecycleHook, rc *corev1.ReplicationController, strategy *dcv1.DeploymentStrategy,
	hookType string, activeDeadlineSeconds int64) (*corev1.Pod, error) {
	exec := hook.ExecNewPod
	if exec == nil {
		return nil, fmt.Errorf("the %s hook has no execNewPod", hookType)
	}
	if rc.Spec.Template == nil {
		return nil, fmt.Errorf("replicationcontroller %s/%s has no pod template", rc.Namespace, rc.Name)
	}
	tmpl := &rc.Spec.Template.Spec
	base, err := baseContainer(tmpl, exec.ContainerName)
	if err != nil {
		return nil, fmt.Errorf("replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	volumes := hookVolumes(tmpl.Volumes, exec.Volumes)
	container := corev1.Container{
		Name:            ContainerName,
		Image:           base.Image,
		ImagePullPolicy: base.ImagePullPolicy,
		Command:         append([]string(nil), exec.Command...),
		WorkingDir:      base.WorkingDir,
		Env:             mergeEnv(base.Env, exec.Env, rc),
		EnvFrom:         copyEnvFrom(base.EnvFrom),
		Resources:       *base.Resources.DeepCopy(),
		VolumeMounts:    hookMounts(base.VolumeMounts, volumes),
		SecurityContext: base.SecurityContext.DeepCopy(),
	}
	pod := &corev1.Pod{
		ObjectMeta: hookObjectMeta(rc, strategy, hookType),
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{container},
			Volumes:                       volumes,
			RestartPolicy:                 restartPolicy(hook.FailurePolicy),
			ActiveDeadlineSeconds:         &activeDeadlineSeconds,
			TerminationGracePeriodSeconds: ptr.To(terminationGracePeriod),
			// Scheduling, identity and access as the application's pods
			// have them, so the hook runs where and as they would, with no
			// more than the template grants: a template that turns off its
			// token, runs in a sandboxed runtime class or a user namespace
			// gets hook pods that do too. Host namespaces and ports are not
			// copied: a hook gets none.
			NodeSelector:                 copyMap(tmpl.NodeSelector),
			Tolerations:                  copyTolerations(tmpl.Tolerations),
			Affinity:                     tmpl.Affinity.DeepCopy(),
			PriorityClassName:            tmpl.PriorityClassName,
			RuntimeClassName:             copyPtr(tmpl.RuntimeClassName),
			ImagePullSecrets:             append([]corev1.LocalObjectReference(nil), tmpl.ImagePullSecrets...),
			ServiceAccountName:           tmpl.ServiceAccountName,
			AutomountServiceAccountToken: copyPtr(tmpl.AutomountServiceAccountToken),
			SecurityContext:              tmpl.SecurityContext.DeepCopy(),
			HostUsers:                    copyPtr(tmpl.HostUsers),
			DNSPolicy:                    tmpl.DNSPolicy,
		},
	}
	return pod, nil
}

// baseContainer finds the template container a hook is made from. An empty
// name is allowed when the template has a single container, as the API
// defaults it.
func baseContainer(spec *corev1.PodSpec, name string) (*corev1.Container, error) {
	if name == "" && len(spec.Containers) == 1 {
		return &spec.Containers[0], nil
	}
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i], nil
		}
	}
	return nil, fmt.Errorf("no container named %q in the pod template", name)
}

// hookObjectMeta names and labels a hook pod. Its owner reference to the RC
// is not a controller reference: the RC manager would otherwise claim the
// pod, find it does not match the RC's selector, and release it again.
func hookObjectMeta(rc *corev1.ReplicationController, strategy *dcv1.DeploymentStrategy, hookType string) metav1.ObjectMeta {
	meta := metav1.ObjectMeta{
		Name:      deployment.HookPodName(rc.Name, hookType),
		Namespace: rc.Namespace,
		Labels: map[string]string{
			dcv1.DeployerPodForDeploymentLabel: rc.Name,
			dcv1.DeployerPodTypeLabel:          "hook-" + hookType,
		},
		Annotations: map[string]string{dcv1.DeploymentAnnotation: rc.Name},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1",
			Kind:       "ReplicationController",
			Name:       rc.Name,
			UID:        rc.UID,
		}},
	}
	if strategy != nil {
		addMissing(meta.Labels, strategy.Labels)
		addMissing(meta.Annotations, strategy.Annotations)
	}
	return meta
}

// restartPolicy lets the kubelet rerun a Retry hook until it succeeds or the
// pod's active deadline ends it.
func restartPolicy(policy dcv1.LifecycleHookFailurePolicy) corev1.RestartPolicy {
	if policy == dcv1.LifecycleHookFailurePolicyRetry {
		return corev1.RestartPolicyOnFailure
	}
	return corev1.RestartPolicyNever
}

// mergeEnv returns the base container's environment with the hook's on top
// (a hook variable replaces the base one of the same name, in place, so
// $(VAR) references keep their order), then the deployment variables, which
// nothing overrides.
func mergeEnv(base, hook []corev1.EnvVar, rc *corev1.ReplicationController) []corev1.EnvVar {
	deploymentEnv := deployment.Env(rc)
	reserved := map[string]bool{}
	for _, v := range deploymentEnv {
		reserved[v.Name] = true
	}
	hookByName := map[string]corev1.EnvVar{}
	for _, v := range hook {
		hookByName[v.Name] = v
	}
	var merged []corev1.EnvVar
	placed := map[string]bool{}
	add := func(v corev1.EnvVar) {
		if reserved[v.Name] || placed[v.Name] {
			return
		}
		if h, ok := hookByName[v.Name]; ok {
			v = h
		}
		placed[v.Name] = true
		merged = append(merged, *v.DeepCopy())
	}
	for _, v := range base {
		add(v)
	}
	for _, v := range hook {
		add(v)
	}
	return append(merged, deploymentEnv...)
}

// hookVolumes returns the template volumes the hook lists, in template
// order. A listed name the template lacks is ignored, as OpenShift does.
func hookVolumes(template []corev1.Volume, names []string) []corev1.Volume {
	wanted := map[string]bool{}
	for _, n := range names {
		wanted[n] = true
	}
	var out []corev1.Volume
	for _, v := range template {
		if wanted[v.Name] {
			out = append(out, *v.DeepCopy())
		}
	}
	return out
}

// hookMounts returns the base container's mounts of the hook's volumes.
func hookMounts(mounts []corev1.VolumeMount, volumes []corev1.Volume) []corev1.VolumeMount {
	have := map[string]bool{}
	for _, v := range volumes {
		have[v.Name] = true
	}
	var out []corev1.VolumeMount
	for _, m := range mounts {
		if have[m.Name] {
			out = append(out, *m.DeepCopy())
		}
	}
	return out
}

func copyEnvFrom(in []corev1.EnvFromSource) []corev1.EnvFromSource {
	var out []corev1.EnvFromSource
	for _, e := range in {
		out = append(out, *e.DeepCopy())
	}
	return out
}

func copyTolerations(in []corev1.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range in {
		out = append(out, *t.DeepCopy())
	}
	return out
}

// copyPtr returns a pointer to a copy of *p, or nil.
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copyMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	addMissing(out, in)
	return out
}

// addMissing copies the entries of src whose keys dst lacks: the keys
// deployconfig sets itself are never overridden.
func addMissing(dst, src map[string]string) {
	for k, v := range src {
		if _, ok := dst[k]; !ok {
			dst[k] = v
		}
	}
}
