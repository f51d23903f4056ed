package rolloutpolicy

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestGoverning(t *testing.T) {
	policy := func(name string, labels map[string]string) dcv1.RolloutPolicy {
		return dcv1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: dcv1.RolloutPolicySpec{Selector: metav1.LabelSelector{MatchLabels: labels}}}
	}
	dc := &dcv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "a", "tier": "web"}}}
	cases := []struct {
		name     string
		policies []dcv1.RolloutPolicy
		want     string
	}{
		{"none", nil, ""},
		{"no match", []dcv1.RolloutPolicy{policy("x", map[string]string{"team": "b"})}, ""},
		{"the first by name of those that match", []dcv1.RolloutPolicy{policy("zeta", map[string]string{"team": "a"}), policy("alpha", map[string]string{"tier": "web"}), policy("aaa", map[string]string{"team": "b"})}, "alpha"},
		{"an empty selector selects all", []dcv1.RolloutPolicy{policy("all", nil)}, "all"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if p := Governing(tc.policies, dc); p != nil {
				got = p.Name
			}
			if got != tc.want {
				t.Errorf("Governing = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWaveSize(t *testing.T) {
	spec := &dcv1.RolloutPolicySpec{Waves: []dcv1.RolloutWave{{Size: size("1")}, {Size: size("10%")}, {}}}
	for _, tc := range []struct {
		wave int32
		want int
	}{{1, 1}, {2, 5}, {3, 0}, {4, 0}, {0, 0}} {
		if got := WaveSize(spec, tc.wave, 50); got != tc.want {
			t.Errorf("WaveSize(wave %d of 50) = %d, want %d", tc.wave, got, tc.want)
		}
	}
}

func TestHolding(t *testing.T) {
	holding := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: dcv1.PolicyHolding, Status: status, Reason: reason}}
	}
	for _, tc := range []struct {
		name string
		p    dcv1.RolloutPolicy
		want string
	}{
		{"nothing", dcv1.RolloutPolicy{}, ""},
		{"admitting", dcv1.RolloutPolicy{Status: dcv1.RolloutPolicyStatus{Conditions: holding(metav1.ConditionFalse, "Admitting")}}, ""},
		{"a window", dcv1.RolloutPolicy{Status: dcv1.RolloutPolicyStatus{Conditions: holding(metav1.ConditionTrue, dcv1.AwaitingWindowReason)}}, dcv1.AwaitingWindowReason},
		{"suspended, whatever the status", dcv1.RolloutPolicy{Spec: dcv1.RolloutPolicySpec{Suspend: true},
			Status: dcv1.RolloutPolicyStatus{Conditions: holding(metav1.ConditionTrue, dcv1.CircuitOpenReason)}}, "Suspended"},
	} {
		if got := Holding(&tc.p); got != tc.want {
			t.Errorf("%s: Holding = %q, want %q", tc.name, got, tc.want)
		}
	}
}
