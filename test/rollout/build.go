package rollout

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

const (
	// PauseImage is the application image; kwok never pulls it.
	PauseImage = "registry.k8s.io/pause:3.10"
	// RevisionEnv is the template variable ChangeConfig bumps.
	RevisionEnv = "REVISION"
	// AppContainer is the template's container.
	AppContainer = "web"
	// StrategyTimeout is the strategies' timeoutSeconds: rollouts take
	// seconds, but a busy machine may stall them for a while.
	StrategyTimeout = 300
)

// Options describe a DeploymentConfig.
type Options struct {
	// Replicas is spec.replicas.
	Replicas int32
	// Strategy is the strategy type; Rolling when empty.
	Strategy dcv1.DeploymentStrategyType
	// MaxSurge and MaxUnavailable of a Rolling strategy (a number or a
	// percentage); the API's defaults when empty.
	MaxSurge, MaxUnavailable string
	// Hooks by point: pre, mid (Recreate only), post.
	Hooks map[string]*dcv1.LifecycleHook
	// HistoryLimit is revisionHistoryLimit; the API's default when nil.
	HistoryLimit *int32
	// Unrestricted leaves the template without a security context, so
	// that its pods do not pass the restricted Pod Security Standard.
	Unrestricted bool
}

// NewDC builds a DeploymentConfig with one container of PauseImage and a
// REVISION variable, whose pods pass the restricted Pod Security Standard
// unless o says otherwise.
func NewDC(ns, name string, o Options) *dcv1.DeploymentConfig {
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To(int64(1)),
		Containers: []corev1.Container{{
			Name:  AppContainer,
			Image: PauseImage,
			Env:   []corev1.EnvVar{{Name: RevisionEnv, Value: "0"}},
		}},
	}
	if !o.Unrestricted {
		spec.SecurityContext = RestrictedPodSecurityContext()
		spec.Containers[0].SecurityContext = RestrictedSecurityContext()
	}
	return &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas:             o.Replicas,
			RevisionHistoryLimit: o.HistoryLimit,
			Strategy:             Strategy(o),
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       spec,
			},
		},
	}
}

// RestrictedPodSecurityContext is a pod security context that the
// restricted Pod Security Standard accepts.
func RestrictedPodSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To(int64(1000)),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// RestrictedSecurityContext is a container security context that the
// restricted Pod Security Standard accepts.
func RestrictedSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// Strategy builds the strategy o describes, with short periods.
func Strategy(o Options) dcv1.DeploymentStrategy {
	if o.Strategy == dcv1.DeploymentStrategyTypeRecreate {
		return dcv1.DeploymentStrategy{
			Type: o.Strategy,
			RecreateParams: &dcv1.RecreateDeploymentStrategyParams{
				TimeoutSeconds: ptr.To(int64(StrategyTimeout)),
				Pre:            o.Hooks["pre"], Mid: o.Hooks["mid"], Post: o.Hooks["post"],
			},
		}
	}
	p := &dcv1.RollingDeploymentStrategyParams{
		UpdatePeriodSeconds: ptr.To(int64(1)),
		IntervalSeconds:     ptr.To(int64(1)),
		TimeoutSeconds:      ptr.To(int64(StrategyTimeout)),
		Pre:                 o.Hooks["pre"], Post: o.Hooks["post"],
	}
	if o.MaxSurge != "" {
		p.MaxSurge = ptr.To(intstr.Parse(o.MaxSurge))
	}
	if o.MaxUnavailable != "" {
		p.MaxUnavailable = ptr.To(intstr.Parse(o.MaxUnavailable))
	}
	return dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: p}
}

// ExecHook is an execNewPod hook of the template's container that runs a
// shell script.
func ExecHook(policy dcv1.LifecycleHookFailurePolicy, script string) *dcv1.LifecycleHook {
	return &dcv1.LifecycleHook{
		FailurePolicy: policy,
		ExecNewPod: &dcv1.ExecNewPodHook{
			ContainerName: AppContainer,
			Command:       []string{"/bin/sh", "-c", script},
		},
	}
}
