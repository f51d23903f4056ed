package rolloutpolicy

import (
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Governing returns the policy of policies (those of the DeploymentConfig's
// namespace) that governs dc: of those that select it and are not being
// deleted, the first by name; nil when none does. It sorts policies by
// name. dc-controller, `kubectl dc describe` and the dashboard all ask it,
// so that they name the same policy.
func Governing(policies []dcv1.RolloutPolicy, dc *dcv1.DeploymentConfig) *dcv1.RolloutPolicy {
	sort.Slice(policies, func(i, j int) bool { return policies[i].Name < policies[j].Name })
	for i := range policies {
		p := &policies[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.Selector)
		if err == nil && sel.Matches(labels.Set(dc.Labels)) {
			return p
		}
	}
	return nil
}

// WaveSize is how many rollouts wave (from 1) of a change holds when the
// policy selects selected DeploymentConfigs; 0 for a wave of the rest.
func WaveSize(spec *dcv1.RolloutPolicySpec, wave int32, selected int) int {
	i := int(wave) - 1
	if i < 0 || i >= len(spec.Waves) || spec.Waves[i].Size == nil {
		return 0
	}
	return scaled(*spec.Waves[i].Size, selected)
}

// Holding says what holds every rollout of the policy: "Suspended" (it
// holds nothing, and nothing else does), the reason of its Holding
// condition while True (AwaitingWindow, CircuitOpen), or "".
func Holding(p *dcv1.RolloutPolicy) string {
	if p.Spec.Suspend {
		return "Suspended"
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, dcv1.PolicyHolding); c != nil && c.Status == metav1.ConditionTrue {
		return c.Reason
	}
	return ""
}
