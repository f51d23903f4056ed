package integration

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// TestInControllerAnalysisQueriesGoThroughTheDialPolicy: an analysis that
// dc-controller runs itself queries the Prometheus address its author
// wrote from the controller's place in the network, so the connection
// goes through the controller's dial policy. A loopback address, which no
// flag of this suite's controller allows for analyses, is refused before
// any byte is sent: the server sees no request, and the rollout fails
// with an error that names the flag that would allow it.
func TestInControllerAnalysisQueriesGoThroughTheDialPolicy(t *testing.T) {
	var queries atomic.Int32
	prometheus := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"0"]}]}}`)
	}))
	defer prometheus.Close()

	m := newModeRollouts(t, dcv1.DeployerModeControllerWhenPossible)
	mustCreate(t, m.dc("web", func(dc *dcv1.DeploymentConfig) {
		a := analysisWith(func(metric *dcv1.AnalysisMetric) { metric.Prometheus.Address = prometheus.URL })
		a.Count = ptr(int32(1))
		a.Interval = metav1.Duration{Duration: time.Second}
		a.ConsecutiveErrorLimit = ptr(int32(0))
		dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Steps: []dcv1.RollingStep{{SetWeight: ptr(int32(50))}, {Analysis: a}},
		}}
	}))
	waitPhase(t, m.ns, "web-1", dcv1.DeploymentPhaseComplete)
	changeImage(t, m.ns, "web", "registry.example.com/web:2")
	rc := waitPhase(t, m.ns, "web-2", dcv1.DeploymentPhaseFailed)
	if n := queries.Load(); n != 0 {
		t.Errorf("the controller sent %d queries to a loopback address", n)
	}
	var said []string
	for _, v := range rc.Annotations {
		said = append(said, v)
	}
	if all := strings.Join(said, "\n"); !strings.Contains(all, "--allow-analysis-networks") {
		t.Errorf("web-2 does not say which flag allows the address; its annotations:\n%s", all)
	}
	waitCondition(t, m.ns, "web", dcv1.DeploymentStalled, corev1.ConditionTrue, dcv1.RolloutFailedReason)
}
