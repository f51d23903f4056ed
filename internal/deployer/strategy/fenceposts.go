package strategy

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Fenceposts resolves maxSurge and maxUnavailable (numbers or percentages of
// desired) into pod counts. Surge rounds up and unavailable rounds down, so
// that a percentage never makes the rollout less available than asked; when
// both come out 0 unavailable becomes 1, or the rollout could never move.
// A nil value counts as 0.
func Fenceposts(maxSurge, maxUnavailable *intstr.IntOrString, desired int32) (surge, unavailable int32, err error) {
	surge, err = scaled(maxSurge, desired, true)
	if err != nil {
		return 0, 0, fmt.Errorf("maxSurge: %w", err)
	}
	unavailable, err = scaled(maxUnavailable, desired, false)
	if err != nil {
		return 0, 0, fmt.Errorf("maxUnavailable: %w", err)
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable, nil
}

func scaled(v *intstr.IntOrString, desired int32, roundUp bool) (int32, error) {
	if v == nil {
		return 0, nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, int(desired), roundUp)
	if err != nil {
		return 0, err
	}
	// A huge percentage saturates rather than wrapping around.
	return int32(min(max(n, 0), math.MaxInt32)), nil
}

// minAvailable is how many pods must stay available during a rolling update.
func minAvailable(desired, unavailable int32) int32 {
	return max(desired-unavailable, 0)
}

// scaleUpTarget is the new RC's next replica count: as far towards desired
// as the surge allows, counting the old RC's pods. Once the old RC is down
// there is nothing to surge over, so it goes all the way.
func scaleUpTarget(desired, surge, oldReplicas, newReplicas int32) int32 {
	if newReplicas >= desired {
		return desired
	}
	// int64, so that a saturated surge cannot overflow.
	increment := int64(desired) + int64(surge) - int64(oldReplicas) - int64(newReplicas)
	if oldReplicas == 0 {
		increment = int64(desired - newReplicas)
	}
	if increment <= 0 {
		return newReplicas
	}
	return int32(min(int64(newReplicas)+increment, int64(desired)))
}

// scaleDownTarget is the old RC's next replica count: as low as possible
// while minAvailable pods stay available. Old pods count as available (the
// RC manager removes unavailable ones first), new ones only when the new
// RC reports them available. Once the new RC is complete and fully
// available the old one goes to 0 at once.
func scaleDownTarget(desired, minAvail, oldReplicas, newReplicas, newAvailable int32) int32 {
	if oldReplicas == 0 {
		return 0
	}
	newAvailable = min(newAvailable, newReplicas)
	if newReplicas == desired && newAvailable >= desired {
		return 0
	}
	decrement := oldReplicas + newAvailable - minAvail
	if decrement <= 0 {
		return oldReplicas
	}
	return max(oldReplicas-decrement, 0)
}

// percentOf is how far the new RC is towards desired, in percent.
func percentOf(replicas, desired int32) int {
	if desired <= 0 {
		return 100
	}
	return int(int64(replicas) * 100 / int64(desired))
}
