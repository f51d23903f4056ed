package strategy

import (
	"time"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// PrescribedPause is how long a Rolling rollout from desired old pods to
// desired new ones sleeps by its own settings (updatePeriodSeconds after
// each scale-up; intervalSeconds, OpenShift's polling period, costs
// nothing where a watch reports each scale) when every new pod is
// available the moment it is asked for: the part of the rollout's time its
// parameters prescribe rather than its pods' readiness. It follows roll's
// steps with the same fenceposts; the benchmark reports it beside the
// measured time.
func PrescribedPause(p *dcv1.RollingDeploymentStrategyParams, desired int32) (time.Duration, error) {
	plan, err := planRolling(p, desired)
	if err != nil {
		return 0, err
	}
	from, to := desired, int32(0)
	var total time.Duration
	for from != 0 || to != desired {
		moved := false
		if next := scaleUpTarget(plan.desired, plan.surge, from, to); next != to {
			to, moved = next, true
			total += plan.updatePeriod
		}
		if next := scaleDownTarget(plan.desired, plan.minAvailable, from, to, to); next != from {
			from, moved = next, true
		}
		if !moved {
			break
		}
	}
	return total, nil
}
