package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Default values of the API. The CRD schema applies the ones it can express;
// SetDefaults applies all of them, including those that depend on other
// fields, so every reader sees the same effective DeploymentConfig whether or
// not the API server had a chance to default it.
const (
	DefaultRevisionHistoryLimit  int32 = 10
	DefaultTimeoutSeconds        int64 = 600
	DefaultIntervalSeconds       int64 = 1
	DefaultUpdatePeriodSeconds   int64 = 1
	DefaultActiveDeadlineSeconds int64 = 21600
	DefaultMaxSurge                    = "25%"
	DefaultMaxUnavailable              = "25%"
)

// SetDefaults fills in every default of the API on dc, in place. It is
// idempotent and never overrides a value the user set.
func SetDefaults(dc *DeploymentConfig) {
	spec := &dc.Spec
	spec.Triggers = TriggersOrDefault(spec.Triggers)
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr(DefaultRevisionHistoryLimit)
	}
	if len(spec.Selector) == 0 && spec.Template != nil && len(spec.Template.Labels) > 0 {
		spec.Selector = make(map[string]string, len(spec.Template.Labels))
		for k, v := range spec.Template.Labels {
			spec.Selector[k] = v
		}
	}
	setStrategyDefaults(&spec.Strategy)
	if spec.Template != nil {
		setPortDefaults(&spec.Template.Spec)
	}
	if spec.Template != nil && len(spec.Template.Spec.Containers) == 1 {
		only := spec.Template.Spec.Containers[0].Name
		for _, hook := range spec.Strategy.Hooks() {
			if hook.ExecNewPod != nil && hook.ExecNewPod.ContainerName == "" {
				hook.ExecNewPod.ContainerName = only
			}
		}
	}
}

// setPortDefaults sets the protocol of every container port left without
// one to TCP, as the CRD's schema (Kubernetes' own pod schema) does.
func setPortDefaults(pod *corev1.PodSpec) {
	defaultPorts := func(ports []corev1.ContainerPort) {
		for i := range ports {
			if ports[i].Protocol == "" {
				ports[i].Protocol = corev1.ProtocolTCP
			}
		}
	}
	for i := range pod.InitContainers {
		defaultPorts(pod.InitContainers[i].Ports)
	}
	for i := range pod.Containers {
		defaultPorts(pod.Containers[i].Ports)
	}
	for i := range pod.EphemeralContainers {
		defaultPorts(pod.EphemeralContainers[i].Ports)
	}
}

// TriggersOrDefault returns triggers, or the default when they are unset
// (nil): one ConfigChange trigger. An empty list means no triggers.
func TriggersOrDefault(triggers []DeploymentTriggerPolicy) []DeploymentTriggerPolicy {
	if triggers == nil {
		return []DeploymentTriggerPolicy{{Type: DeploymentTriggerOnConfigChange}}
	}
	return triggers
}

func setStrategyDefaults(s *DeploymentStrategy) {
	if s.Type == "" {
		s.Type = DeploymentStrategyTypeRolling
	}
	if s.ActiveDeadlineSeconds == nil {
		s.ActiveDeadlineSeconds = ptr(DefaultActiveDeadlineSeconds)
	}
	if s.Type == DeploymentStrategyTypeRolling && s.RollingParams == nil {
		s.RollingParams = &RollingDeploymentStrategyParams{}
	}
	if s.Type == DeploymentStrategyTypeRecreate && s.RecreateParams == nil {
		s.RecreateParams = &RecreateDeploymentStrategyParams{}
	}
	if p := s.RecreateParams; p != nil && p.TimeoutSeconds == nil {
		p.TimeoutSeconds = ptr(DefaultTimeoutSeconds)
	}
	if p := s.RollingParams; p != nil {
		setRollingDefaults(p)
	}
	if p := s.BlueGreenParams; p != nil && p.TimeoutSeconds == nil {
		p.TimeoutSeconds = ptr(DefaultTimeoutSeconds)
	}
}

func setRollingDefaults(p *RollingDeploymentStrategyParams) {
	if p.IntervalSeconds == nil {
		p.IntervalSeconds = ptr(DefaultIntervalSeconds)
	}
	if p.UpdatePeriodSeconds == nil {
		p.UpdatePeriodSeconds = ptr(DefaultUpdatePeriodSeconds)
	}
	if p.TimeoutSeconds == nil {
		p.TimeoutSeconds = ptr(DefaultTimeoutSeconds)
	}
	// Only one of the two set: the other is 0, unless that would make both
	// zero, in which case it takes the default (as OpenShift does).
	switch {
	case p.MaxSurge == nil && p.MaxUnavailable == nil:
		p.MaxSurge = ptr(intstr.FromString(DefaultMaxSurge))
		p.MaxUnavailable = ptr(intstr.FromString(DefaultMaxUnavailable))
	case p.MaxSurge == nil && isZero(*p.MaxUnavailable):
		p.MaxSurge = ptr(intstr.FromString(DefaultMaxSurge))
	case p.MaxUnavailable == nil && isZero(*p.MaxSurge):
		p.MaxUnavailable = ptr(intstr.FromString(DefaultMaxUnavailable))
	case p.MaxSurge == nil:
		p.MaxSurge = ptr(intstr.FromInt32(0))
	case p.MaxUnavailable == nil:
		p.MaxUnavailable = ptr(intstr.FromInt32(0))
	}
}

// Hooks returns the strategy's lifecycle hooks that are set, pre before mid
// before post.
func (s *DeploymentStrategy) Hooks() []*LifecycleHook {
	var hooks []*LifecycleHook
	add := func(h *LifecycleHook) {
		if h != nil {
			hooks = append(hooks, h)
		}
	}
	if p := s.RecreateParams; p != nil {
		add(p.Pre)
		add(p.Mid)
		add(p.Post)
	}
	if p := s.RollingParams; p != nil {
		add(p.Pre)
		add(p.Post)
	}
	return hooks
}

func isZero(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	return v.StrVal == "0" || v.StrVal == "0%"
}

func ptr[T any](v T) *T { return &v }
