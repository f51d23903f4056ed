package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// The sequence: a canary cancelled at its pause and retried starts
// its steps again. With the step left on the RC, the retried deployer went
// straight to the pause with the new deployment at the 0 replicas the
// fall-back had left it at.
func TestCanaryRetriedAtPauseStartsOver(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, newDC("web", 5, canary(setWeight(40), pauseStep(0))))
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	waitPausedAt(t, ns, "web-2", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 3, "web-2": 2})
	mustDC(t, ns, "rollout", "cancel", "web")
	requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	waitScaled(t, ns, map[string]int32{"web-1": 5, "web-2": 0})

	mustDC(t, ns, "rollout", "retry", "web")
	waitPausedAt(t, ns, "web-2", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 3, "web-2": 2})
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Step 1 of 2: setWeight 40%: scaling web-2 to 2 and web-1 to 3",
		"--> Step 2 of 2: paused until 'kubectl dc rollout promote web'")
	mustDC(t, ns, "rollout", "promote", "web")
	requireComplete(t, ns, "web", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 5})
}

// inconclusiveCanary is web with 4 pods and a canary whose analysis at
// step 2 passes at most 5% errors and fails above 50%: between the two it
// is Inconclusive.
func inconclusiveCanary() *dcv1.DeploymentConfig {
	a := errorRateAnalysis(2, time.Second)
	a.Metrics[0].FailureCondition = "result[0] > 0.5"
	return newDC("web", 4, canary(setWeight(25), dcv1.RollingStep{Analysis: a}, setWeight(75)))
}

// waitInconclusive waits until rollout #2 waits for a person after its
// step-2 analysis was Inconclusive, as the RC records it.
func waitInconclusive(t *testing.T, ns string) {
	t.Helper()
	waitPausedAt(t, ns, "web-2", 2)
	rc := getRC(t, ns, "web-2")
	if w := deployment.ProgressOf(rc).Wait; w == nil || w.Reason != dcv1.PauseReasonInconclusive {
		t.Errorf("wait %+v, want one for the reason %s", w, dcv1.PauseReasonInconclusive)
	}
	if got := rc.Annotations[dcv1.AnalysisAnnotationPrefix+"step-2"]; !strings.HasPrefix(got, "Inconclusive: ") {
		t.Errorf("step-2 analysis annotation %q, want Inconclusive", got)
	}
	if phase := requirePhaseNow(t, ns, "web-2"); phase != dcv1.DeploymentPhaseRunning {
		t.Errorf("rollout #2 is %s while waiting, want Running", phase)
	}
}

// requirePhaseNow is a deployment's phase as recorded now.
func requirePhaseNow(t *testing.T, ns, rc string) dcv1.DeploymentPhase {
	t.Helper()
	return dcv1.DeploymentPhase(getRC(t, ns, rc).Annotations[dcv1.DeploymentPhaseAnnotation])
}

// An Inconclusive analysis waits for a person, as in Argo Rollouts;
// promote goes on.
func TestCanaryInconclusiveThenPromoted(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	suite.exporter.SetTraffic(ns, "web-2", 10, 1)
	waitRated(t, suite.prometheus.URL(), ns, "web-2")
	createDC(t, ns, inconclusiveCanary())
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	waitInconclusive(t, ns)
	waitScaled(t, ns, map[string]int32{"web-1": 3, "web-2": 1})
	if out := mustDC(t, ns, "rollout", "promote", "web"); out != "deploymentconfig.apps.deployconfig.io/web promoting rollout #2 (going on after the inconclusive analysis of step 2 of 3)\n" {
		t.Errorf("rollout promote: %q", out)
	}
	requireComplete(t, ns, "web", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 4})
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Step 2 of 3: analysis",
		"--> step-2: analysis inconclusive: metric \"error-rate\"",
		"--> step-2: analysis inconclusive: waiting for 'kubectl dc rollout promote web' to go on, or cancel to abort",
		"    Promoted",
		"--> Step 3 of 3: setWeight 75%",
		"--> Success")
}

// A cancel while an Inconclusive analysis waits aborts the rollout: the
// previous version is back at full size.
func TestCanaryInconclusiveThenCancelled(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	suite.exporter.SetTraffic(ns, "web-2", 10, 1)
	waitRated(t, suite.prometheus.URL(), ns, "web-2")
	createDC(t, ns, inconclusiveCanary())
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	waitInconclusive(t, ns)
	mustDC(t, ns, "rollout", "cancel", "web")
	rc := requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	if !strings.Contains(rc.Annotations[dcv1.DeploymentStatusReasonAnnotation], "cancelled") {
		t.Errorf("status reason %q, want a cancel", rc.Annotations[dcv1.DeploymentStatusReasonAnnotation])
	}
	waitScaled(t, ns, map[string]int32{"web-1": 4, "web-2": 0})
}

// A DeploymentConfig scaled while its canary pauses is honoured at the next
// step, as Argo Rollouts recomputes its counts: dc-controller passes the new
// count on to the deployer through the RC's desired-replicas annotation.
func TestCanaryScaledMidwayIsHonouredAtTheNextStep(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, newDC("web", 4, canary(setWeight(25), pauseStep(0), setWeight(50), pauseStep(0))))
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	waitPausedAt(t, ns, "web-2", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 3, "web-2": 1})

	kubectl(t, "scale", "dc", "web", "-n", ns, "--replicas=8")
	waitFor(t, "web-2 to record 8 desired replicas", time.Minute, func(context.Context) (bool, error) {
		return getRC(t, ns, "web-2").Annotations[dcv1.DesiredReplicasAnnotation] == "8", nil
	})
	mustDC(t, ns, "rollout", "promote", "web")
	waitPausedAt(t, ns, "web-2", 4)
	waitScaled(t, ns, map[string]int32{"web-1": 4, "web-2": 4})
	mustDC(t, ns, "rollout", "promote", "web")
	requireComplete(t, ns, "web", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 8})
}
