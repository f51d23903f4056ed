package strategy

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// FuzzRollingArithmetic feeds arbitrary maxSurge and maxUnavailable values
// (numbers or strings, as a manifest may hold them) and replica counts to
// the rolling update's arithmetic. Whatever Fenceposts accepts must give
// counts a rollout can finish with: played out step by step, with new pods
// available at once, the new deployment reaches desired and the old one 0
// in a bounded number of steps, never running more than desired + maxSurge
// pods nor keeping fewer than desired - maxUnavailable available.
func FuzzRollingArithmetic(f *testing.F) {
	f.Add(int32(4), "25%", "25%", int32(0), int32(0), true, true)
	f.Add(int32(3), "", "", int32(1), int32(0), false, false)
	f.Add(int32(10), "0%", "100%", int32(0), int32(0), true, true)
	f.Add(int32(1), "150%", "", int32(0), int32(0), true, false)
	f.Add(int32(0), "25%", "25%", int32(0), int32(0), true, true)
	f.Add(int32(5), "", "", int32(2), int32(0), false, false)
	f.Add(int32(7), "x%", "-3%", int32(0), int32(0), true, true)
	// Percentages whose share of desired does not fit an int32.
	f.Add(int32(100), "3000000000%", "", int32(0), int32(0), true, false)
	f.Add(int32(100), "4294967296%", "", int32(0), int32(0), true, false)
	f.Fuzz(func(t *testing.T, desired int32, surgeStr, unavailStr string, surgeInt, unavailInt int32, surgeIsStr, unavailIsStr bool) {
		// Replica counts are bounded so that a play-out stays short; the
		// parameters are not.
		desired = int32(uint32(desired) % 2000)
		maxSurge := intOrString(surgeIsStr, surgeStr, surgeInt)
		maxUnavailable := intOrString(unavailIsStr, unavailStr, unavailInt)
		surge, unavailable, err := Fenceposts(maxSurge, maxUnavailable, desired)
		if err != nil {
			return
		}
		if surge < 0 || unavailable < 0 || int64(surge)+int64(unavailable) < 1 {
			t.Fatalf("Fenceposts(%v, %v, %d) = surge %d, unavailable %d: want both >= 0 and not both 0",
				maxSurge, maxUnavailable, desired, surge, unavailable)
		}
		checkExact(t, "maxSurge", maxSurge, desired, true, surge)
		checkExact(t, "maxUnavailable", maxUnavailable, desired, false, unavailable)
		playOut(t, desired, surge, minAvailable(desired, unavailable))
	})
}

// intOrString builds the IntOrString a manifest would decode to.
func intOrString(isStr bool, s string, n int32) *intstr.IntOrString {
	if isStr {
		if s == "" {
			return nil
		}
		v := intstr.FromString(s)
		return &v
	}
	v := intstr.FromInt32(n)
	return &v
}

// checkExact checks a resolved count against the exact value of its
// parameter, computed without overflow: the same when it fits an int32,
// and never a smaller one.
func checkExact(t *testing.T, name string, v *intstr.IntOrString, desired int32, roundUp bool, got int32) {
	t.Helper()
	if v == nil {
		return
	}
	exact, ok := exactScaled(v, desired, roundUp)
	if !ok {
		return
	}
	exact = max(exact, 0)
	if exact <= math.MaxInt32 && int64(got) != exact && !(name == "maxUnavailable" && exact == 0 && got == 1) {
		t.Fatalf("%s %v of %d resolved to %d, want %d", name, v, desired, got, exact)
	}
	if exact > math.MaxInt32 && got != math.MaxInt32 {
		t.Fatalf("%s %v of %d (%d) resolved to %d: a value beyond int32 must saturate, not wrap", name, v, desired, exact, got)
	}
}

// exactScaled is the value of an int or "N%" parameter for desired replicas
// in int64 arithmetic; ok is false for a string that is not a percentage
// or whose product with desired does not fit an int64.
func exactScaled(v *intstr.IntOrString, desired int32, roundUp bool) (int64, bool) {
	if v.Type == intstr.Int {
		return int64(v.IntVal), true
	}
	digits, isPercent := strings.CutSuffix(v.StrVal, "%")
	if !isPercent {
		return 0, false
	}
	p, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	d := int64(max(desired, 1))
	if p > math.MaxInt64/d || p < math.MinInt64/d {
		return 0, false
	}
	product := p * int64(desired)
	switch {
	case roundUp && product > 0:
		return product/100 + min(product%100, 1), true
	case !roundUp && product < 0:
		return product/100 - min(-product%100, 1), true
	}
	return product / 100, true
}

// playOut runs a rolling update from an old deployment at desired to a new
// one at 0, with every new pod available as soon as it exists, and checks
// its bounds at each step.
func playOut(t *testing.T, desired, surge, minAvail int32) {
	t.Helper()
	oldReplicas, newReplicas := desired, int32(0)
	limit := int64(desired) + int64(surge)
	steps := 2*int(desired) + 4
	for step := 0; step < steps; step++ {
		if newReplicas == desired && oldReplicas == 0 {
			return
		}
		up := scaleUpTarget(desired, surge, oldReplicas, newReplicas)
		if up < 0 || up > desired {
			t.Fatalf("desired %d surge %d: scaleUpTarget(old %d, new %d) = %d, outside [0, desired]", desired, surge, oldReplicas, newReplicas, up)
		}
		if up > newReplicas && oldReplicas > 0 && int64(oldReplicas)+int64(up) > limit {
			t.Fatalf("desired %d surge %d: scaling up to %d with %d old pods runs %d pods, above %d",
				desired, surge, up, oldReplicas, oldReplicas+up, limit)
		}
		newReplicas = up
		down := scaleDownTarget(desired, minAvail, oldReplicas, newReplicas, newReplicas)
		if down < 0 || down > oldReplicas {
			t.Fatalf("desired %d minAvailable %d: scaleDownTarget(old %d, new %d) = %d, outside [0, old]", desired, minAvail, oldReplicas, newReplicas, down)
		}
		if down < oldReplicas && down+newReplicas < min(minAvail, desired) {
			t.Fatalf("desired %d minAvailable %d: scaling old down to %d with %d new pods keeps %d available",
				desired, minAvail, down, newReplicas, down+newReplicas)
		}
		oldReplicas = down
	}
	t.Fatalf("desired %d surge %d minAvailable %d: no end after %d steps (old %d, new %d)",
		desired, surge, minAvail, steps, oldReplicas, newReplicas)
}

// FuzzScaleTargets checks the two steps of a rolling update on any state a
// rollout can meet (replica counts, availability and a surge of any size):
// the new deployment's next size is within [0, desired] and, while old pods
// remain, keeps the pods within desired + surge; the old deployment's next
// size is within [0, old] and keeps minAvailable pods available.
func FuzzScaleTargets(f *testing.F) {
	f.Add(int32(4), int32(1), int32(3), int32(4), int32(0), int32(0))
	f.Add(int32(4), int32(1), int32(3), int32(3), int32(3), int32(2))
	f.Add(int32(3), int32(0), int32(2), int32(2), int32(3), int32(3))
	f.Add(int32(2), int32(1), int32(0), int32(5), int32(0), int32(0))
	// A surge near the int32 limit (maxSurge: 2147483647).
	f.Add(int32(5), int32(math.MaxInt32), int32(4), int32(4), int32(1), int32(1))
	f.Fuzz(func(t *testing.T, desired, surge, minAvail, oldReplicas, newReplicas, newAvailable int32) {
		desired, surge = nonNegative(desired), nonNegative(surge)
		oldReplicas, newReplicas, newAvailable = nonNegative(oldReplicas), nonNegative(newReplicas), nonNegative(newAvailable)
		minAvail = min(nonNegative(minAvail), desired)

		up := scaleUpTarget(desired, surge, oldReplicas, newReplicas)
		if up < 0 || up > desired {
			t.Fatalf("scaleUpTarget(desired %d, surge %d, old %d, new %d) = %d, outside [0, desired]", desired, surge, oldReplicas, newReplicas, up)
		}
		if up > newReplicas && oldReplicas > 0 && int64(oldReplicas)+int64(up) > int64(desired)+int64(surge) {
			t.Fatalf("scaleUpTarget(desired %d, surge %d, old %d, new %d) = %d: %d pods, above desired + surge",
				desired, surge, oldReplicas, newReplicas, up, int64(oldReplicas)+int64(up))
		}
		down := scaleDownTarget(desired, minAvail, oldReplicas, newReplicas, newAvailable)
		if down < 0 || down > oldReplicas {
			t.Fatalf("scaleDownTarget(desired %d, minAvailable %d, old %d, new %d, available %d) = %d, outside [0, old]",
				desired, minAvail, oldReplicas, newReplicas, newAvailable, down)
		}
		complete := newReplicas == desired && newAvailable >= desired
		if down < oldReplicas && !complete && int64(down)+int64(min(newAvailable, newReplicas)) < int64(minAvail) {
			t.Fatalf("scaleDownTarget(desired %d, minAvailable %d, old %d, new %d, available %d) = %d: fewer than minAvailable left",
				desired, minAvail, oldReplicas, newReplicas, newAvailable, down)
		}
	})
}

// nonNegative folds an arbitrary int32 onto [0, MaxInt32].
func nonNegative(n int32) int32 {
	if n < 0 {
		return -(n + 1)
	}
	return n
}
