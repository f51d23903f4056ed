package strategy

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestPrescribedPause(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int) *intstr.IntOrString { v := intstr.FromInt(n); return &v }
	tests := []struct {
		name    string
		params  dcv1.RollingDeploymentStrategyParams
		desired int32
		want    time.Duration
	}{
		// Surge 1, unavailable 0: three steps of one pod, each followed by
		// updatePeriod; the interval is a polling period, never slept.
		{"3 replicas, 25%/25%", dcv1.RollingDeploymentStrategyParams{MaxSurge: pct("25%"), MaxUnavailable: pct("25%"),
			UpdatePeriodSeconds: ptr.To(int64(1)), IntervalSeconds: ptr.To(int64(1))}, 3, 3 * time.Second},
		{"3 replicas, longer periods", dcv1.RollingDeploymentStrategyParams{MaxSurge: pct("25%"), MaxUnavailable: pct("25%"),
			UpdatePeriodSeconds: ptr.To(int64(2)), IntervalSeconds: ptr.To(int64(3))}, 3, 3 * 2 * time.Second},
		// A surge of all pods: one scale-up, then the old RC goes at once.
		{"surge 100%", dcv1.RollingDeploymentStrategyParams{MaxSurge: pct("100%"), MaxUnavailable: num(0),
			UpdatePeriodSeconds: ptr.To(int64(1)), IntervalSeconds: ptr.To(int64(1))}, 3, time.Second},
		{"1 replica", dcv1.RollingDeploymentStrategyParams{MaxSurge: pct("25%"), MaxUnavailable: pct("25%"),
			UpdatePeriodSeconds: ptr.To(int64(1)), IntervalSeconds: ptr.To(int64(1))}, 1, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PrescribedPause(&tt.params, tt.desired)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("PrescribedPause = %s, want %s", got, tt.want)
			}
		})
	}
}
