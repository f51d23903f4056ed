package cli

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// fleetPolicy is a policy over app=web in the middle of a change: wave 2
// of three, one failure seen, two rollouts in line.
func fleetPolicy(t *testing.T) []runtime.Object {
	one, tenPercent := intstr.FromInt32(1), intstr.FromString("10%")
	maxC := intstr.FromInt32(5)
	p := &dcv1.RolloutPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: dcv1.GroupVersion.String(), Kind: "RolloutPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "default", Generation: 1,
			CreationTimestamp: metav1.NewTime(now.Add(-48 * time.Hour))},
		Spec: dcv1.RolloutPolicySpec{
			Selector:      metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MaxConcurrent: &maxC,
			Waves:         []dcv1.RolloutWave{{Size: &one}, {Size: &tenPercent, Soak: &metav1.Duration{Duration: 10 * time.Minute}}, {}},
			TimeZone:      "Europe/Berlin",
			Windows: []dcv1.RolloutWindow{{Days: []dcv1.Weekday{"Monday", "Tuesday", "Wednesday", "Thursday"}, Start: "09:00", End: "17:00"},
				{Cron: "0 22 * * 5", Duration: &metav1.Duration{Duration: 4 * time.Hour}}},
			Freezes:        []dcv1.RolloutFreeze{{Name: "year-end", Start: metav1.NewTime(time.Date(2026, 12, 21, 0, 0, 0, 0, time.UTC)), End: metav1.NewTime(time.Date(2027, 1, 4, 0, 0, 0, 0, time.UTC))}},
			CircuitBreaker: &dcv1.RolloutCircuitBreaker{MaxFailures: intstr.FromInt32(3), Period: &metav1.Duration{Duration: 30 * time.Minute}},
		},
		Status: dcv1.RolloutPolicyStatus{
			Selected: 50, Running: 5, Waiting: 2,
			Line: []dcv1.RolloutPolicyWaiter{
				{Name: "web", Version: 3, Change: "ConfigData ConfigMap/shared", Since: metav1.NewTime(now.Add(-4 * time.Minute)), Reason: dcv1.AwaitingWaveReason},
				{Name: "api", Version: 8, Change: "ConfigData ConfigMap/shared", Since: metav1.NewTime(now.Add(-3 * time.Minute)), Reason: dcv1.AwaitingWaveReason},
			},
			Changes: []dcv1.RolloutPolicyChange{{Name: "ConfigData ConfigMap/shared", Wave: 2,
				Started: []dcv1.RolloutPolicyStarted{{Name: "db", Version: 4, Wave: 1}, {Name: "cache", Version: 2, Wave: 2}}}},
			Failures: []dcv1.RolloutPolicyFailure{{Name: "batch", Version: 6, At: metav1.NewTime(now.Add(-20 * time.Minute))}},
		},
	}
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: dcv1.PolicyHolding, Status: metav1.ConditionFalse, Reason: "Admitting", Message: "rollouts start as maxConcurrent and the waves allow"})
	frozen := p.DeepCopy()
	frozen.Name = "platform"
	frozen.Spec.Selector = metav1.LabelSelector{MatchLabels: map[string]string{"tier": "platform"}}
	frozen.Spec.MaxConcurrent, frozen.Spec.Waves, frozen.Spec.CircuitBreaker = nil, nil, nil
	frozen.Status = dcv1.RolloutPolicyStatus{Selected: 3, Waiting: 1, NextWindow: &metav1.Time{Time: now.Add(3 * time.Hour)}}
	meta.SetStatusCondition(&frozen.Status.Conditions, metav1.Condition{Type: dcv1.PolicyHolding, Status: metav1.ConditionTrue, Reason: dcv1.AwaitingWindowReason,
		Message: "outside its windows; it starts at 2026-03-01T15:00:00Z"})
	web := newDC("web", 3, func(dc *dcv1.DeploymentConfig) {
		dc.Status.Conditions = []dcv1.DeploymentCondition{{Type: dcv1.DeploymentProgressing, Status: corev1.ConditionUnknown, Reason: dcv1.AwaitingWaveReason,
			Message: `Rollout #3 waits for RolloutPolicy fleet: wave 2 of change "ConfigData ConfigMap/shared" is full; the next starts once it completes`}}
	})
	return []runtime.Object{p, frozen, web, newRC(t, web, 2, dcv1.DeploymentPhaseComplete, 30*time.Minute, scaled(3, 3, 3, 3))}
}

func TestPolicy(t *testing.T) {
	runCases(t, []commandCase{{
		name: "get",
		objs: fleetPolicy,
		args: []string{"policy", "get"},
	}, {
		name: "get none",
		args: []string{"policy", "get"},
	}, {
		name: "describe",
		objs: fleetPolicy,
		args: []string{"policy", "describe", "fleet"},
	}, {
		name: "describe unknown",
		args: []string{"policy", "describe", "nope"},
	}, {
		name: "describe without a name",
		args: []string{"policy", "describe"},
	}, {
		name: "resume",
		objs: fleetPolicy,
		args: []string{"policy", "resume", "fleet"},
		check: func(t *testing.T, f *fixture) {
			p := &dcv1.RolloutPolicy{}
			if err := f.dc.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "fleet"}, p); err != nil {
				t.Fatal(err)
			}
			if got := p.Annotations[dcv1.PolicyResumeAnnotation]; got != now.Format(time.RFC3339) {
				t.Errorf("resume annotation %q, want %s", got, now.Format(time.RFC3339))
			}
		},
	}, {
		name: "describe a DC the policy holds",
		objs: fleetPolicy,
		args: []string{"describe", "web"},
	}})
}
