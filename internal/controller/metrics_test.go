package controller

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestCountFinished(t *testing.T) {
	dc := testDC(nil)
	cancelled := rcOf(t, dc, 1, dcv1.DeploymentPhaseFailed, 0)
	cancelled.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
	cases := []struct {
		name   string
		before dcv1.DeploymentPhase
		after  func() any
		want   map[string]float64
	}{
		{"running to complete", dcv1.DeploymentPhaseRunning, func() any { return rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 0) },
			map[string]float64{"available": 1, "failed": 0, "cancelled": 0}},
		{"pending to failed", dcv1.DeploymentPhasePending, func() any { return rcOf(t, dc, 1, dcv1.DeploymentPhaseFailed, 0) },
			map[string]float64{"available": 0, "failed": 1, "cancelled": 0}},
		{"new to cancelled", dcv1.DeploymentPhaseNew, func() any { return cancelled },
			map[string]float64{"available": 0, "failed": 0, "cancelled": 1}},
		{"still running", dcv1.DeploymentPhasePending, func() any { return rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 0) },
			map[string]float64{"available": 0, "failed": 0, "cancelled": 0}},
		{"complete already: another update of a finished deployment", dcv1.DeploymentPhaseComplete,
			func() any { return rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 3) },
			map[string]float64{"available": 0, "failed": 0, "cancelled": 0}},
		{"not an RC", dcv1.DeploymentPhaseRunning, func() any { return "tombstone" },
			map[string]float64{"available": 0, "failed": 0, "cancelled": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &metricsCollector{finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "finished"}, []string{"phase"})}
			c.countFinished(rcOf(t, dc, 1, tc.before, 0), tc.after())
			for outcome, want := range tc.want {
				m := &dto.Metric{}
				if err := c.finished.WithLabelValues(outcome).Write(m); err != nil {
					t.Fatal(err)
				}
				if got := m.GetCounter().GetValue(); got != want {
					t.Errorf("%s = %v, want %v", outcome, got, want)
				}
			}
		})
	}
}
