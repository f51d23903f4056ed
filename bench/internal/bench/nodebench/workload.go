package nodebench

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

const (
	// appPort is where the sample application listens.
	appPort = 8080
	// versionEnv is the sample application's variable each rollout bumps.
	versionEnv = "VERSION"
	// readinessPeriod is the readiness probe's periodSeconds.
	readinessPeriod = 1
	// rollingPeriod is the DC's updatePeriodSeconds and intervalSeconds.
	rollingPeriod = 1
	// maxSurge and maxUnavailable are Deployment's defaults, for both.
	maxSurge       = "25%"
	maxUnavailable = "25%"
	// strategyTimeout is the DC's timeoutSeconds; a rollout taking it
	// fails and is noted.
	strategyTimeout = 300
)

// Object names.
const (
	dcName         = "web-dc"
	deploymentName = "web-deploy"
)

// podSpec is the sample application under the restricted Pod Security
// Standard, ready when /readyz says so; version is its VERSION.
func podSpec(image, version string) corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To(int64(1)),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To(int64(1000)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:  "app",
			Image: image,
			Env:   []corev1.EnvVar{{Name: versionEnv, Value: version}},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: appPort}},
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(appPort)}},
				PeriodSeconds: readinessPeriod, FailureThreshold: 1,
			},
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}
}

// rollingParams are the DC's Rolling parameters.
func rollingParams() *dcv1.RollingDeploymentStrategyParams {
	surge, unavailable := intstr.FromString(maxSurge), intstr.FromString(maxUnavailable)
	return &dcv1.RollingDeploymentStrategyParams{
		UpdatePeriodSeconds: ptr.To(int64(rollingPeriod)),
		IntervalSeconds:     ptr.To(int64(rollingPeriod)),
		TimeoutSeconds:      ptr.To(int64(strategyTimeout)),
		MaxSurge:            &surge,
		MaxUnavailable:      &unavailable,
	}
}

// newDC is the benchmark's DeploymentConfig, triggered by config changes.
func newDC(ns, image string, replicas int32) *dcv1.DeploymentConfig {
	labels := map[string]string{"app": dcName}
	return &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: dcName, Labels: labels},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: replicas,
			Selector: labels,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(image, "0")},
			Strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: rollingParams()},
			Triggers: []dcv1.DeploymentTriggerPolicy{{Type: dcv1.DeploymentTriggerOnConfigChange}},
		},
	}
}

// newDeployment is newDC's peer.
func newDeployment(ns, image string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": deploymentName}
	surge, unavailable := intstr.FromString(maxSurge), intstr.FromString(maxUnavailable)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: deploymentName, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(image, "0")},
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable},
			},
		},
	}
}

// setVersion sets the application container's VERSION: the template
// change of every measured rollout.
func setVersion(spec *corev1.PodSpec, version int) {
	c := &spec.Containers[0]
	for i := range c.Env {
		if c.Env[i].Name == versionEnv {
			c.Env[i].Value = strconv.Itoa(version)
			return
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: versionEnv, Value: strconv.Itoa(version)})
}

// order is which system rolls out first in iteration i (counting from 1):
// they alternate, so that neither always follows the other's clean-up.
func order(i int) []string {
	if i%2 == 1 {
		return []string{SystemDC, SystemDeployment}
	}
	return []string{SystemDeployment, SystemDC}
}

// deploymentComplete is what `kubectl rollout status` calls complete: the
// controller saw generation, every replica is updated and available, and
// no old replica is left.
func deploymentComplete(d *appsv1.Deployment, generation int64) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= generation && s.UpdatedReplicas == want &&
		s.Replicas == s.UpdatedReplicas && s.AvailableReplicas == s.UpdatedReplicas
}

// deploymentFailed says why a Deployment's rollout stopped progressing,
// "" while it has not.
func deploymentFailed(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return "progress deadline exceeded: " + c.Message
		}
	}
	return ""
}
