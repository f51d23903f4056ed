package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DeploymentConfig describes a desired pod template and how to roll it out.
// Every rollout is a new, versioned ReplicationController driven by a
// deployer pod, which runs the strategy and its lifecycle hooks.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=dc,categories=all
// +kubebuilder:printcolumn:name="Revision",type=integer,JSONPath=`.status.latestVersion`
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Triggered By",type=string,JSONPath=`.spec.triggers[*].type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DeploymentConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the DeploymentConfig.
	Spec DeploymentConfigSpec `json:"spec"`

	// Status is the most recently observed state, written by the controller.
	// It defaults to an empty status whose observedGeneration is 0, so that a
	// DeploymentConfig the controller has not synced yet reads as not
	// observed (kstatus: InProgress) rather than as having no status at all.
	// +kubebuilder:default={observedGeneration: 0}
	// +optional
	Status DeploymentConfigStatus `json:"status,omitempty"`
}

// DeploymentConfigList is a list of DeploymentConfigs.
//
// +kubebuilder:object:root=true
type DeploymentConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the DeploymentConfigs.
	Items []DeploymentConfig `json:"items"`
}

// DeploymentConfigSpec is the desired state of a DeploymentConfig.
//
// The cross-field rules below live here because they relate the strategy,
// the triggers and the pod template to each other.
//
// +kubebuilder:validation:XValidation:rule="(has(self.selector) && size(self.selector) > 0) || (has(self.template.metadata) && has(self.template.metadata.labels) && size(self.template.metadata.labels) > 0)",message="must not be empty: set spec.selector or spec.template.metadata.labels",fieldPath=".selector"
// +kubebuilder:validation:XValidation:rule="!has(self.selector) || self.selector.all(k, has(self.template.metadata) && has(self.template.metadata.labels) && k in self.template.metadata.labels && self.template.metadata.labels[k] == self.selector[k])",message="must match spec.template.metadata.labels: every selector key must be a template label with the same value",fieldPath=".selector"
// +kubebuilder:validation:XValidation:rule="!has(self.minReadySeconds) || self.minReadySeconds < (self.strategy.type == 'Recreate' && has(self.strategy.recreateParams) && has(self.strategy.recreateParams.timeoutSeconds) ? self.strategy.recreateParams.timeoutSeconds : (self.strategy.type == 'Rolling' && has(self.strategy.rollingParams) && has(self.strategy.rollingParams.timeoutSeconds) ? self.strategy.rollingParams.timeoutSeconds : (self.strategy.type == 'BlueGreen' && has(self.strategy.blueGreenParams) && has(self.strategy.blueGreenParams.timeoutSeconds) ? self.strategy.blueGreenParams.timeoutSeconds : 600)))",message="must be less than the strategy's timeoutSeconds",fieldPath=".minReadySeconds"
// +kubebuilder:validation:XValidation:rule="!has(self.triggers) || self.triggers.all(t, t.type != 'ImageChange' || !has(t.imageChangeParams) || t.imageChangeParams.containerNames.all(n, self.template.spec.containers.exists(c, c.name == n) || (has(self.template.spec.initContainers) && self.template.spec.initContainers.exists(c, c.name == n))))",message="imageChangeParams.containerNames must name containers of spec.template",fieldPath=".triggers"
// +kubebuilder:validation:XValidation:rule="!has(self.strategy.rollingParams) || !has(self.strategy.rollingParams.pre) || !has(self.strategy.rollingParams.pre.execNewPod) || (has(self.strategy.rollingParams.pre.execNewPod.containerName) ? self.template.spec.containers.exists(c, c.name == self.strategy.rollingParams.pre.execNewPod.containerName) : size(self.template.spec.containers) == 1)",message="must name a container of spec.template (it may be omitted only when the template has one container)",fieldPath=".strategy.rollingParams.pre.execNewPod.containerName"
// +kubebuilder:validation:XValidation:rule="!has(self.strategy.rollingParams) || !has(self.strategy.rollingParams.post) || !has(self.strategy.rollingParams.post.execNewPod) || (has(self.strategy.rollingParams.post.execNewPod.containerName) ? self.template.spec.containers.exists(c, c.name == self.strategy.rollingParams.post.execNewPod.containerName) : size(self.template.spec.containers) == 1)",message="must name a container of spec.template (it may be omitted only when the template has one container)",fieldPath=".strategy.rollingParams.post.execNewPod.containerName"
// +kubebuilder:validation:XValidation:rule="!has(self.strategy.recreateParams) || !has(self.strategy.recreateParams.pre) || !has(self.strategy.recreateParams.pre.execNewPod) || (has(self.strategy.recreateParams.pre.execNewPod.containerName) ? self.template.spec.containers.exists(c, c.name == self.strategy.recreateParams.pre.execNewPod.containerName) : size(self.template.spec.containers) == 1)",message="must name a container of spec.template (it may be omitted only when the template has one container)",fieldPath=".strategy.recreateParams.pre.execNewPod.containerName"
// +kubebuilder:validation:XValidation:rule="!has(self.strategy.recreateParams) || !has(self.strategy.recreateParams.mid) || !has(self.strategy.recreateParams.mid.execNewPod) || (has(self.strategy.recreateParams.mid.execNewPod.containerName) ? self.template.spec.containers.exists(c, c.name == self.strategy.recreateParams.mid.execNewPod.containerName) : size(self.template.spec.containers) == 1)",message="must name a container of spec.template (it may be omitted only when the template has one container)",fieldPath=".strategy.recreateParams.mid.execNewPod.containerName"
// +kubebuilder:validation:XValidation:rule="!has(self.strategy.recreateParams) || !has(self.strategy.recreateParams.post) || !has(self.strategy.recreateParams.post.execNewPod) || (has(self.strategy.recreateParams.post.execNewPod.containerName) ? self.template.spec.containers.exists(c, c.name == self.strategy.recreateParams.post.execNewPod.containerName) : size(self.template.spec.containers) == 1)",message="must name a container of spec.template (it may be omitted only when the template has one container)",fieldPath=".strategy.recreateParams.post.execNewPod.containerName"
type DeploymentConfigSpec struct {
	// Strategy is how a new version replaces the old one.
	// An absent strategy is Rolling with default parameters.
	// +kubebuilder:default={type: Rolling, rollingParams: {maxSurge: "25%", maxUnavailable: "25%"}}
	// +optional
	Strategy DeploymentStrategy `json:"strategy"`

	// MinReadySeconds is how long a new pod must be ready, without any of
	// its containers crashing, to count as available.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// Triggers start a new rollout. Absent, a DeploymentConfig rolls out on
	// every change of its template (one ConfigChange trigger); an explicit
	// empty list means manual rollouts only.
	// +kubebuilder:default={{type: ConfigChange}}
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Triggers []DeploymentTriggerPolicy `json:"triggers"`

	// Replicas is the desired number of pods.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas"`

	// RevisionHistoryLimit is how many old, scaled-down deployments are kept
	// for rollback.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// Test runs each rollout and then scales it to zero: a DeploymentConfig
	// that validates a template rather than serving it.
	// +kubebuilder:default=false
	// +optional
	Test bool `json:"test"`

	// Paused stops new rollouts; status and history cleanup go on.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Selector selects the pods of this DeploymentConfig. Absent, it is the
	// template's labels; present, it must match them.
	// +optional
	Selector map[string]string `json:"selector,omitempty"`

	// Template is the pod template every deployment is made from.
	Template *corev1.PodTemplateSpec `json:"template"`

	// ConfigSnapshots, when set, gives each deployment immutable copies of
	// the ConfigMaps and Secrets its pods read (docs/config-snapshots.md).
	// +optional
	ConfigSnapshots *ConfigSnapshots `json:"configSnapshots,omitempty"`
}

// DeploymentStrategyType names a rollout strategy.
// +kubebuilder:validation:Enum=Rolling;Recreate;Custom;BlueGreen
type DeploymentStrategyType string

const (
	// DeploymentStrategyTypeRolling replaces pods gradually, keeping the
	// application available.
	DeploymentStrategyTypeRolling DeploymentStrategyType = "Rolling"
	// DeploymentStrategyTypeRecreate stops every old pod before starting new ones.
	DeploymentStrategyTypeRecreate DeploymentStrategyType = "Recreate"
	// DeploymentStrategyTypeCustom runs the user's own deployer image or command.
	DeploymentStrategyTypeCustom DeploymentStrategyType = "Custom"
	// DeploymentStrategyTypeBlueGreen brings the new deployment up beside the
	// old one and switches Services to it.
	DeploymentStrategyTypeBlueGreen DeploymentStrategyType = "BlueGreen"
)

// DeploymentStrategy describes how a rollout is performed.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'Custom' || has(self.customParams)",message="customParams is required when strategy.type is Custom",fieldPath=".customParams"
// +kubebuilder:validation:XValidation:rule="self.type == 'Recreate' || !has(self.recreateParams) || !has(self.recreateParams.mid)",message="a mid hook is only run by the Recreate strategy",fieldPath=".recreateParams.mid"
// +kubebuilder:validation:XValidation:rule="!has(self.activeDeadlineSeconds) || self.type == 'Custom' || self.activeDeadlineSeconds > (self.type == 'Recreate' ? (has(self.recreateParams) && has(self.recreateParams.timeoutSeconds) ? self.recreateParams.timeoutSeconds : 600) : (self.type == 'BlueGreen' ? (has(self.blueGreenParams) && has(self.blueGreenParams.timeoutSeconds) ? self.blueGreenParams.timeoutSeconds : 600) : (has(self.rollingParams) && has(self.rollingParams.timeoutSeconds) ? self.rollingParams.timeoutSeconds : 600)))",message="must be greater than the strategy's timeoutSeconds",fieldPath=".activeDeadlineSeconds"
// +kubebuilder:validation:XValidation:rule="self.type != 'BlueGreen' || has(self.blueGreenParams)",message="blueGreenParams is required when strategy.type is BlueGreen",fieldPath=".blueGreenParams"
// +kubebuilder:validation:XValidation:rule="self.type == 'BlueGreen' || !has(self.blueGreenParams)",message="blueGreenParams is only allowed when strategy.type is BlueGreen",fieldPath=".blueGreenParams"
// +kubebuilder:validation:XValidation:rule="self.type == 'Rolling' || self.type == 'Custom' || !has(self.rollingParams) || !has(self.rollingParams.steps) || size(self.rollingParams.steps) == 0",message="steps are only run by the Rolling strategy (and a Custom one that runs it)",fieldPath=".rollingParams.steps"
// +kubebuilder:validation:XValidation:rule="self.type == 'Rolling' || !has(self.rollingParams) || !has(self.rollingParams.trafficRouting)",message="trafficRouting is only used by the Rolling strategy",fieldPath=".rollingParams.trafficRouting"
type DeploymentStrategy struct {
	// Type is Rolling, Recreate, Custom or BlueGreen.
	// +kubebuilder:default=Rolling
	// +optional
	Type DeploymentStrategyType `json:"type,omitempty"`

	// CustomParams runs a custom deployer. With type Custom it replaces the
	// deployer container; with Rolling or Recreate it only overrides the
	// deployer's image, command and environment.
	// +optional
	CustomParams *CustomDeploymentStrategyParams `json:"customParams,omitempty"`

	// RecreateParams are the parameters of the Recreate strategy.
	// +optional
	RecreateParams *RecreateDeploymentStrategyParams `json:"recreateParams,omitempty"`

	// RollingParams are the parameters of the Rolling strategy.
	// +optional
	RollingParams *RollingDeploymentStrategyParams `json:"rollingParams,omitempty"`

	// BlueGreenParams are the parameters of the BlueGreen strategy.
	// +optional
	BlueGreenParams *BlueGreenDeploymentStrategyParams `json:"blueGreenParams,omitempty"`

	// Resources are the compute resources of the deployer pod.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Labels are added to deployer and hook pods; they never override the
	// keys deployconfig sets itself.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations are added to deployer and hook pods; they never override
	// the keys deployconfig sets itself.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// ActiveDeadlineSeconds bounds the deployer pod's run time. It must be
	// greater than the strategy's timeoutSeconds.
	// +kubebuilder:default=21600
	// +kubebuilder:validation:Minimum=1
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
}

// CustomDeploymentStrategyParams are the parameters of a custom deployer.
type CustomDeploymentStrategyParams struct {
	// Image is the deployer image.
	// +optional
	Image string `json:"image,omitempty"`

	// Environment is added to the deployer container's environment.
	// +optional
	Environment []corev1.EnvVar `json:"environment,omitempty"`

	// Command is the deployer container's command.
	// +optional
	Command []string `json:"command,omitempty"`
}

// RecreateDeploymentStrategyParams are the parameters of the Recreate strategy.
type RecreateDeploymentStrategyParams struct {
	// TimeoutSeconds is how long to wait for pods to scale before giving up.
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	// +optional
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`

	// Pre runs before the old deployment is scaled down.
	// +optional
	Pre *LifecycleHook `json:"pre,omitempty"`

	// Mid runs after the old deployment is down and before the new one is
	// scaled up.
	// +optional
	Mid *LifecycleHook `json:"mid,omitempty"`

	// Post runs after the new deployment is available.
	// +optional
	Post *LifecycleHook `json:"post,omitempty"`
}

// RollingDeploymentStrategyParams are the parameters of the Rolling strategy.
//
// +kubebuilder:validation:XValidation:rule="!has(self.maxSurge) || !has(self.maxUnavailable) || !((type(self.maxSurge) == int ? self.maxSurge == 0 : self.maxSurge == '0%') && (type(self.maxUnavailable) == int ? self.maxUnavailable == 0 : self.maxUnavailable == '0%'))",message="maxSurge and maxUnavailable must not both be zero",fieldPath=".maxUnavailable"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || (has(self.steps) && size(self.steps) > 0)",message="a background analysis needs steps: without them the rollout has nothing to run it beside",fieldPath=".analysis"
// +kubebuilder:validation:XValidation:rule="has(self.trafficRouting) || !has(self.steps) || self.steps.all(s, !has(s.setCanaryScale) && !has(s.setHeaderRoute))",message="setCanaryScale and setHeaderRoute steps need trafficRouting",fieldPath=".steps"
// +kubebuilder:validation:XValidation:rule="!has(self.trafficRouting) || !has(self.steps) || self.steps.all(s, !has(s.setHeaderRoute) || (has(self.trafficRouting.managedRoutes) && self.trafficRouting.managedRoutes.exists(m, m.name == s.setHeaderRoute.name)))",message="a setHeaderRoute must name one of trafficRouting.managedRoutes",fieldPath=".steps"
type RollingDeploymentStrategyParams struct {
	// UpdatePeriodSeconds is the pause between a scale-up and the next check.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	UpdatePeriodSeconds *int64 `json:"updatePeriodSeconds,omitempty"`

	// IntervalSeconds is the pause between polls of the deployment's status.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	IntervalSeconds *int64 `json:"intervalSeconds,omitempty"`

	// TimeoutSeconds is how long to wait for progress before giving up.
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	// +optional
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`

	// MaxUnavailable is how many pods, as a number or a percentage of the
	// desired count, may be unavailable during the rollout. Both it and
	// MaxSurge are 25% when neither is set.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^[0-9]+%$') && int(self.replace('%', '')) <= 100",message="must be a non-negative integer or a percentage of at most 100%"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MaxSurge is how many pods, as a number or a percentage of the desired
	// count, may be created above the desired count during the rollout.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^[0-9]+%$')",message="must be a non-negative integer or a percentage"
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// Pre runs before the rollout starts.
	// +optional
	Pre *LifecycleHook `json:"pre,omitempty"`

	// Post runs after the rollout has finished.
	// +optional
	Post *LifecycleHook `json:"post,omitempty"`

	// Steps make the rollout a canary: each step sets the new deployment's
	// share of the pods (by replica counts), pauses or runs an analysis;
	// after the last step the rollout goes on to 100%. Without steps the
	// rollout goes straight to 100%. The first rollout of a
	// DeploymentConfig (nothing to replace) skips them.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Steps []RollingStep `json:"steps,omitempty"`

	// Analysis is a background analysis, as Argo Rollouts' strategy-level
	// canary analysis: it measures the new deployment from the first step
	// of a canary until the rollout reaches 100%, beside the steps, and a
	// failure ends the rollout at once. Without count it measures every
	// interval until the rollout is done. It needs steps.
	// +optional
	Analysis *Analysis `json:"analysis,omitempty"`

	// TrafficRouting makes the steps' weights shares of the requests,
	// set in Gateway API routes (docs/traffic-routing.md).
	// +optional
	TrafficRouting *TrafficRouting `json:"trafficRouting,omitempty"`
}

// LifecycleHookFailurePolicy says what a failed hook does to the rollout.
// +kubebuilder:validation:Enum=Abort;Retry;Ignore
type LifecycleHookFailurePolicy string

const (
	// LifecycleHookFailurePolicyRetry reruns the hook until it succeeds or
	// the strategy times out.
	LifecycleHookFailurePolicyRetry LifecycleHookFailurePolicy = "Retry"
	// LifecycleHookFailurePolicyAbort fails the rollout.
	LifecycleHookFailurePolicyAbort LifecycleHookFailurePolicy = "Abort"
	// LifecycleHookFailurePolicyIgnore logs the failure and goes on.
	LifecycleHookFailurePolicyIgnore LifecycleHookFailurePolicy = "Ignore"
)

// LifecycleHook is an action run at a point of the rollout.
//
// +kubebuilder:validation:XValidation:rule="(has(self.execNewPod) ? 1 : 0) + (has(self.tagImages) && size(self.tagImages) > 0 ? 1 : 0) + (has(self.analysis) ? 1 : 0) == 1",message="exactly one of execNewPod, tagImages or analysis is required"
type LifecycleHook struct {
	// FailurePolicy is what a failure of the hook does: Abort, Retry or Ignore.
	FailurePolicy LifecycleHookFailurePolicy `json:"failurePolicy"`

	// ExecNewPod runs a command in a new pod built from a template container.
	// +optional
	ExecNewPod *ExecNewPodHook `json:"execNewPod,omitempty"`

	// TagImages copies the deployed images to other tags.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	TagImages []TagImageHook `json:"tagImages,omitempty"`

	// Analysis measures the new deployment with metric queries, in the
	// deployer (no pod); a failed analysis is a failed hook.
	// +optional
	Analysis *Analysis `json:"analysis,omitempty"`
}

// ExecNewPodHook runs a command in a pod made from one of the template's
// containers.
type ExecNewPodHook struct {
	// Command is the hook's command; it must not be empty.
	// +kubebuilder:validation:MinItems=1
	Command []string `json:"command"`

	// Env is added to the container's environment, overriding variables of
	// the same name.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// ContainerName is the template container the hook pod is built from.
	// It may be omitted when the template has exactly one container.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ContainerName string `json:"containerName,omitempty"`

	// Volumes are names of template volumes the hook pod mounts. A name the
	// template lacks is ignored.
	// +optional
	Volumes []string `json:"volumes,omitempty"`
}

// TagImageHook copies the image of a deployed container to another tag.
//
// The pattern is registry.TaggedReferencePattern; a test keeps them equal.
//
// +kubebuilder:validation:XValidation:rule="has(self.to.kind) && self.to.kind == 'DockerImage'",message="must be DockerImage: tagImages copies the image to a tag of a registry",fieldPath=".to.kind"
// +kubebuilder:validation:XValidation:rule="has(self.to.name) && self.to.name.matches('^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:[.][a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)+(?::[0-9]+)?|[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?:[0-9]+|localhost)/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}$')",message="must be a tagged image reference, e.g. registry.example.com/team/app:prod",fieldPath=".to.name"
type TagImageHook struct {
	// ContainerName is the template container whose image is copied.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	ContainerName string `json:"containerName"`

	// To is the destination of the copy.
	To corev1.ObjectReference `json:"to"`
}

// DeploymentTriggerType names a trigger, or the cause of a deployment.
type DeploymentTriggerType string

const (
	// DeploymentTriggerOnConfigChange rolls out every change of the template.
	DeploymentTriggerOnConfigChange DeploymentTriggerType = "ConfigChange"
	// DeploymentTriggerOnImageChange rolls out a new image of a registry tag.
	DeploymentTriggerOnImageChange DeploymentTriggerType = "ImageChange"
	// DeploymentTriggerManual is the cause of a rollout a user asked for.
	DeploymentTriggerManual DeploymentTriggerType = "Manual"
)

// DeploymentTriggerPolicy is one reason to start a rollout.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'ImageChange' || has(self.imageChangeParams)",message="imageChangeParams is required for an ImageChange trigger",fieldPath=".imageChangeParams"
type DeploymentTriggerPolicy struct {
	// Type is ConfigChange or ImageChange.
	// +kubebuilder:validation:Enum=ConfigChange;ImageChange
	Type DeploymentTriggerType `json:"type"`

	// ImageChangeParams are the parameters of an ImageChange trigger.
	// +optional
	ImageChangeParams *DeploymentTriggerImageChangeParams `json:"imageChangeParams,omitempty"`
}

// DeploymentTriggerImageChangeParams describes an ImageChange trigger.
type DeploymentTriggerImageChangeParams struct {
	// Automatic rolls out a new image as soon as it is seen. When false the
	// image is resolved only on a manual rollout.
	// +optional
	Automatic bool `json:"automatic,omitempty"`

	// ContainerNames are the template containers that get the image.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	ContainerNames []string `json:"containerNames"`

	// From is the image to watch: kind DockerImage with a tagged registry
	// reference. ImageStreamTag is kept from converted manifests but never
	// resolved.
	From ImageTriggerSource `json:"from"`

	// LastTriggeredImage is the last image, by digest, the trigger rolled out.
	// +optional
	LastTriggeredImage string `json:"lastTriggeredImage,omitempty"`
}

// ImageTriggerSource names the image an ImageChange trigger watches.
//
// +kubebuilder:validation:XValidation:rule="self.kind != 'DockerImage' || self.name.matches('^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:[.][a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)+(?::[0-9]+)?|[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?:[0-9]+|localhost)/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}$')",message="must be a tagged image reference, e.g. registry.example.com/team/app:1",fieldPath=".name"
type ImageTriggerSource struct {
	// Kind is DockerImage, or ImageStreamTag in a manifest converted from
	// OpenShift.
	// +kubebuilder:validation:Enum=DockerImage;ImageStreamTag;ImageStreamImage
	Kind string `json:"kind"`

	// Namespace is the ImageStreamTag's namespace; unused for DockerImage.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the image reference, e.g. registry.example.com/app:1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Name string `json:"name"`
}

// DeploymentConfigStatus is the observed state of a DeploymentConfig.
type DeploymentConfigStatus struct {
	// LatestVersion is the version of the newest deployment. It never decreases.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="must not decrease"
	// +optional
	LatestVersion int64 `json:"latestVersion"`

	// ObservedGeneration is the spec generation the controller last acted on:
	// it fired the triggers of that spec, and the write that raises it carries
	// the latestVersion and conditions that follow from it. It never decreases.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=0
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="must not decrease"
	// +optional
	ObservedGeneration int64 `json:"observedGeneration"`

	// Replicas is the number of pods of every deployment of this DeploymentConfig.
	// +optional
	Replicas int32 `json:"replicas"`

	// UpdatedReplicas is the number of pods of the latest deployment.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// AvailableReplicas is the number of pods available for minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`

	// UnavailableReplicas is the number of pods still needed for the
	// deployment to be fully available.
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas"`

	// ReadyReplicas is the number of ready pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// Selector is the scale selector as a string, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

	// Details say why the latest deployment was made.
	// +optional
	Details *DeploymentDetails `json:"details,omitempty"`

	// Conditions are the latest observations of the DeploymentConfig's state.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []DeploymentCondition `json:"conditions,omitempty"`
}

// DeploymentDetails say why a deployment was made.
type DeploymentDetails struct {
	// Message is a user-facing reason, e.g. "config change".
	// +optional
	Message string `json:"message,omitempty"`

	// Causes are the triggers that made the deployment.
	// +optional
	Causes []DeploymentCause `json:"causes,omitempty"`
}

// DeploymentCause is one trigger that made a deployment.
type DeploymentCause struct {
	// Type is ConfigChange, ImageChange, ConfigData (a followed ConfigMap
	// or Secret changed), or Manual for a rollout a user asked for.
	// +kubebuilder:validation:Enum=ConfigChange;ImageChange;ConfigData;Manual
	Type DeploymentTriggerType `json:"type"`

	// ImageTrigger names the image of an ImageChange cause.
	// +optional
	ImageTrigger *DeploymentCauseImageTrigger `json:"imageTrigger,omitempty"`

	// ConfigData names the sources of a ConfigData cause.
	// +optional
	ConfigData *DeploymentCauseConfigData `json:"configData,omitempty"`
}

// DeploymentCauseImageTrigger names the image that made a deployment.
type DeploymentCauseImageTrigger struct {
	// From is the image reference.
	From corev1.ObjectReference `json:"from"`
}

// DeploymentConditionType names a condition of a DeploymentConfig.
type DeploymentConditionType string

const (
	// DeploymentAvailable is True when enough pods are available.
	DeploymentAvailable DeploymentConditionType = "Available"
	// DeploymentProgressing follows the latest deployment's progress.
	DeploymentProgressing DeploymentConditionType = "Progressing"
	// DeploymentReplicaFailure is True when pods cannot be created.
	DeploymentReplicaFailure DeploymentConditionType = "ReplicaFailure"

	// DeploymentReady is True when the spec's rollout is Complete and its
	// pods are available (kstatus: Current); see docs/gitops.md.
	DeploymentReady DeploymentConditionType = "Ready"
	// DeploymentReconciling is True while the DeploymentConfig is on its way
	// to Ready (kstatus: InProgress).
	DeploymentReconciling DeploymentConditionType = "Reconciling"
	// DeploymentStalled is True when the latest rollout failed or was
	// cancelled and nothing retries it (kstatus: Failed).
	DeploymentStalled DeploymentConditionType = "Stalled"
)

// DeploymentCondition is one observation of a DeploymentConfig's state.
type DeploymentCondition struct {
	// Type is the condition's type.
	Type DeploymentConditionType `json:"type"`

	// Status is True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`

	// LastUpdateTime is when the condition was last written.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`

	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`

	// Reason is a CamelCase reason for the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Message is a human-readable explanation.
	// +optional
	Message string `json:"message,omitempty"`
}

func init() {
	SchemeBuilder.Register(&DeploymentConfig{}, &DeploymentConfigList{})
}
