package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/localprom"
)

// errorRateAnalysis measures the deployment's error rate (the share of
// code 500 among its requests, from the suite's exporter, on the suite's
// Prometheus) count times, every interval, and fails the first time it is
// above 5%.
func errorRateAnalysis(count int32, interval time.Duration) *dcv1.Analysis {
	return &dcv1.Analysis{
		Interval: metav1.Duration{Duration: interval},
		Count:    &count,
		Metrics: []dcv1.AnalysisMetric{{
			Name:             "error-rate",
			Prometheus:       &dcv1.PrometheusMetric{Address: suite.prometheus.URL(), Query: localprom.ErrorRateQuery},
			SuccessCondition: "result[0] <= 0.05",
		}},
	}
}

// waitAnalysing waits until rc's record says its analysis label runs.
func waitAnalysing(t *testing.T, ns, rc, label string) {
	t.Helper()
	waitProgress(t, ns, rc, "to run its "+label+" analysis", func(p deployment.Progress) bool {
		return p.Analysis != nil && p.Analysis.Label == label
	})
}

// A plain `rollout promote` during a blue-green's prePromotionAnalysis is
// refused, naming the analysis and --full: the analysis goes on, and when
// the new version's error rate goes up it fails the rollout before the
// active Service ever selects it.
func TestBlueGreenPlainPromoteDoesNotSkipItsAnalysis(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	suite.exporter.SetTraffic(ns, "web-1", 10, 0)
	suite.exporter.SetTraffic(ns, "web-2", 10, 0)
	waitRated(t, suite.prometheus.URL(), ns, "web-2")
	blueGreenServices(t, ns)
	createDC(t, ns, blueGreenDC(2, dcv1.BlueGreenDeploymentStrategyParams{PrePromotionAnalysis: errorRateAnalysis(30, time.Second)}))
	requireComplete(t, ns, "web", 1)
	active := watchSelector(t, ns, "web")

	rollNext(t, ns, 2)
	waitAnalysing(t, ns, "web-2", deployment.GatePrePromotion)
	r := kubectlDC(t, ns, "rollout", "promote", "web")
	if r.code == 0 || !strings.Contains(r.stderr, "prePromotion analysis, which promote does not skip; use --full") {
		t.Fatalf("a plain promote during the analysis: %s", r)
	}
	suite.exporter.SetTraffic(ns, "web-2", 10, 5)

	rc := requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	if reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; !strings.Contains(reason, "error-rate") {
		t.Errorf("status reason %q does not name the metric", reason)
	}
	if seen := active.since("web-2"); len(seen) > 0 {
		t.Errorf("the active Service selected web-2 (then %v); it never passed its analysis", seen)
	}
}

// dc-controller killed while a blue-green rollout it runs itself serves
// the new version on trial, in its postPromotionAnalysis: the new leader
// keeps the active Service on the new version, runs the analysis again
// and completes, with no second promote; the log keeps what was written
// before the kill.
func TestInControllerBlueGreenRestartedOnTrial(t *testing.T) {
	ns := dcNamespace(t)
	suite.exporter.SetTraffic(ns, "web-1", 10, 0)
	suite.exporter.SetTraffic(ns, "web-2", 10, 0)
	waitRated(t, suite.prometheus.URL(), ns, "web-2")
	blueGreenServices(t, ns)
	createDC(t, ns, inController(blueGreenDC(2, dcv1.BlueGreenDeploymentStrategyParams{PostPromotionAnalysis: errorRateAnalysis(12, 2*time.Second)})))
	requireComplete(t, ns, "web", 1)
	active := watchSelector(t, ns, "web")

	rollNext(t, ns, 2)
	waitFor(t, "web-2 to wait for its promotion", rolloutTimeout, func(ctx context.Context) (bool, error) {
		rc, err := clientset().CoreV1().ReplicationControllers(ns).Get(ctx, "web-2", metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		_, waits := deployment.AwaitingPerson(rc)
		return waits, nil
	})
	mustDC(t, ns, "rollout", "promote", "web")
	waitAnalysing(t, ns, "web-2", deployment.GatePostPromotion)
	if rc := getRC(t, ns, "web-2"); deployment.ProgressOf(rc).Switch != deployment.SwitchTrial {
		t.Fatalf("web-2 is in its postPromotionAnalysis but not switched on trial: %s", deployment.ProgressOf(rc).Encode())
	}

	killServer(t)

	requireComplete(t, ns, "web", 2)
	requireRanInController(t, ns, "web-2")
	checkNeverBack(t, active, "web-1", "web-2")
	rc := getRC(t, ns, "web-2")
	if p := deployment.ProgressOf(rc); len(p.Consumed) != 1 || p.Switch != deployment.SwitchFinal {
		t.Errorf("web-2 ended consuming %d promote requests, switched %q; want 1 and final: %s", len(p.Consumed), p.Switch, p.Encode())
	}
	assertInOrder(t, deployerLog(t, ns, "web"),
		"    Promoted",
		"--> Resumed by a new dc-controller leader",
		"serves on trial: resuming its postPromotionAnalysis",
		"--> Success")
}
