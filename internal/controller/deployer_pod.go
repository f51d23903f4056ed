package controller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// DeployerServiceAccount is the service account deployer pods run as; the
// controller creates it, with its Role, in every namespace that has a
// DeploymentConfig.
const DeployerServiceAccount = "deployer"

// deployerContainer is the name of the deployer pod's only container.
const deployerContainer = "deployment"

// deployerCommand runs the deployer in the deployer image, which has it on
// its PATH.
var deployerCommand = []string{"dc-deploy"}

// deployerPod builds the deployer pod of a deployment. dc is the
// DeploymentConfig encoded in the deployment, with defaults applied.
func deployerPod(rc *corev1.ReplicationController, dc *dcv1.DeploymentConfig, image string) *corev1.Pod {
	strategy := dc.Spec.Strategy
	container := corev1.Container{
		Name:      deployerContainer,
		Image:     image,
		Command:   deployerCommand,
		Env:       deployment.Env(rc),
		Resources: strategy.Resources,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		ImagePullPolicy: corev1.PullIfNotPresent,
	}
	if p := strategy.CustomParams; p != nil {
		if p.Image != "" {
			container.Image = p.Image
			// A custom image has its own entrypoint unless a command is given.
			container.Command = nil
		}
		if len(p.Command) > 0 {
			container.Command = p.Command
		}
		container.Env = mergeEnv(container.Env, p.Environment)
	}

	labels := merge(strategy.Labels, map[string]string{dcv1.DeployerPodForDeploymentLabel: rc.Name})
	annotations := merge(strategy.Annotations, map[string]string{dcv1.DeploymentAnnotation: rc.Name})
	template := dc.Spec.Template.Spec
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        deployment.DeployerPodName(rc.Name),
			Namespace:   rc.Namespace,
			Labels:      labels,
			Annotations: annotations,
			// Not a controller reference: the RC manager would release a
			// controlled pod that does not match the RC's selector.
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ReplicationController", Name: rc.Name, UID: rc.UID,
			}},
		},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{container},
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         strategy.ActiveDeadlineSeconds,
			ServiceAccountName:            DeployerServiceAccount,
			NodeSelector:                  template.NodeSelector,
			Tolerations:                   template.Tolerations,
			ImagePullSecrets:              template.ImagePullSecrets,
			DNSPolicy:                     template.DNSPolicy,
			TerminationGracePeriodSeconds: ptr(int64(10)),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
		},
	}
}

// mergeEnv returns base with the variables of extra appended, except those
// that would replace one of base: the deployment's own variables win.
func mergeEnv(base, extra []corev1.EnvVar) []corev1.EnvVar {
	out := append([]corev1.EnvVar(nil), base...)
	seen := map[string]bool{}
	for _, e := range base {
		seen[e.Name] = true
	}
	for _, e := range extra {
		if !seen[e.Name] {
			out = append(out, e)
		}
	}
	return out
}

// merge returns the user's map with ours laid over it: the user's keys
// never override ours.
func merge(user, ours map[string]string) map[string]string {
	out := make(map[string]string, len(user)+len(ours))
	for k, v := range user {
		out[k] = v
	}
	for k, v := range ours {
		out[k] = v
	}
	return out
}

func ptr[T any](v T) *T { return &v }
