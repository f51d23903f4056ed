package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// canary is a Rolling strategy (maxSurge and maxUnavailable 25%) with steps.
func canary(steps ...dcv1.RollingStep) dcv1.DeploymentStrategy {
	s := rolling(intstr.FromString("25%"), intstr.FromString("25%"))
	s.RollingParams.Steps = steps
	return s
}

func setWeight(w int32) dcv1.RollingStep { return dcv1.RollingStep{SetWeight: &w} }

func pauseStep(d time.Duration) dcv1.RollingStep {
	if d == 0 {
		return dcv1.RollingStep{Pause: &dcv1.RolloutPause{}}
	}
	return dcv1.RollingStep{Pause: &dcv1.RolloutPause{Duration: &metav1.Duration{Duration: d}}}
}

// rollNext changes web's template, which starts rollout #version.
func rollNext(t *testing.T, ns string, version int64) {
	t.Helper()
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { setEnv(dc, "VERSION", fmt.Sprint(version)) })
}

// waitPausedAt waits until rollout rc records that it waits in a pause: at
// step k (1-based), or with k 0 for a blue-green rollout waiting for
// promote.
func waitPausedAt(t *testing.T, ns, rc string, k int) {
	t.Helper()
	var last deployment.Progress
	err := poll(t, rolloutTimeout, func(ctx context.Context) (bool, error) {
		got, err := clientset().CoreV1().ReplicationControllers(ns).Get(ctx, rc, metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		last = deployment.ProgressOf(got)
		return rollout.PausedAt(got, k), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s to pause at step %d: %v; progress %+v; deployer log:\n%s", rc, k, err, last, deployerLog(t, ns, "web"))
	}
}

func TestCanaryPausedAtTwentyPercentThenPromoted(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, newDC("web", 5, canary(setWeight(20), pauseStep(0), setWeight(60), pauseStep(0))))
	requireComplete(t, ns, "web", 1)
	waitScaled(t, ns, map[string]int32{"web-1": 5})

	rollNext(t, ns, 2)
	waitPausedAt(t, ns, "web-2", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 4, "web-2": 1})
	want := "Waiting for rollout #2 at step 2 of 4, weight 20%: paused, waiting for promote (use 'kubectl dc rollout promote web')\n"
	if out := mustDC(t, ns, "rollout", "status", "web", "--watch=false"); out != want {
		t.Errorf("rollout status at the first pause:\n%q\nwant\n%q", out, want)
	}
	if out := mustDC(t, ns, "rollout", "promote", "web"); out != "deploymentconfig.apps.deployconfig.io/web promoting rollout #2 (ending the pause of step 2 of 4)\n" {
		t.Errorf("rollout promote: %q", out)
	}
	waitPausedAt(t, ns, "web-2", 4)
	waitScaled(t, ns, map[string]int32{"web-1": 2, "web-2": 3})
	if r := kubectlDC(t, ns, "rollout", "promote", "web", "--full"); r.code != 0 {
		t.Errorf("rollout promote --full: %s", r)
	}
	requireComplete(t, ns, "web", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 5})
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Step 1 of 4: setWeight 20%: scaling web-2 to 1 and web-1 to 4",
		"--> Step 2 of 4: paused until 'kubectl dc rollout promote web'",
		"    Promoted",
		"--> Step 3 of 4: setWeight 60%: scaling web-2 to 3 and web-1 to 2",
		"--> Step 4 of 4: paused until 'kubectl dc rollout promote web'",
		"    Promoted",
		"--> Success")
}

func TestCanaryTimedPauseProceedsByItself(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, newDC("web", 2, canary(setWeight(50), pauseStep(2*time.Second))))
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	requireComplete(t, ns, "web", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 2})
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Step 1 of 2: setWeight 50%: scaling web-2 to 1 and web-1 to 1",
		"--> Step 2 of 2: pausing for 2s (or until 'kubectl dc rollout promote web')",
		"    Pause of 2s ended",
		"--> Success")
}

func TestCanaryCancelledInPauseFallsBack(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, newDC("web", 4, canary(setWeight(50), pauseStep(0))))
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	waitPausedAt(t, ns, "web-2", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 2, "web-2": 2})
	mustDC(t, ns, "rollout", "cancel", "web")
	requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	waitScaled(t, ns, map[string]int32{"web-1": 4, "web-2": 0})
}

// A canary whose new version keeps its error rate low passes its analysis
// step and completes.
func TestCanaryStepAnalysisPasses(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	suite.exporter.SetTraffic(ns, "web-2", 10, 0)
	waitRated(t, suite.prometheus.URL(), ns, "web-2")
	createDC(t, ns, newDC("web", 4, canary(setWeight(25), dcv1.RollingStep{Analysis: errorRateAnalysis(2, time.Second)}, setWeight(75))))
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	rc := requireComplete(t, ns, "web", 2)
	if got := rc.Annotations[dcv1.AnalysisAnnotationPrefix+"step-2"]; !strings.HasPrefix(got, "Successful: ") {
		t.Errorf("web-2's step-2 analysis annotation %q, want Successful", got)
	}
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Step 2 of 3: analysis",
		"--> step-2: analysis Successful",
		"--> Step 3 of 3: setWeight 75%",
		"--> Success")
}

// A canary whose new version fails half its requests fails its analysis
// step: the rollout fails naming the step and the metric, and the previous
// version is back at full size.
func TestCanaryFailedStepAnalysisFailsTheRollout(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	suite.exporter.SetTraffic(ns, "web-2", 10, 5)
	waitRated(t, suite.prometheus.URL(), ns, "web-2")
	createDC(t, ns, newDC("web", 4, canary(setWeight(25), dcv1.RollingStep{Analysis: errorRateAnalysis(2, time.Second)}, setWeight(75))))
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	rc := requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	if reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; !strings.Contains(reason, "step 2 of 3: analysis Failed") || !strings.Contains(reason, "error-rate") {
		t.Errorf("status reason %q does not name the step and the metric", reason)
	}
	waitScaled(t, ns, map[string]int32{"web-1": 4, "web-2": 0})
}

// blueGreenServices creates the Services web (active) and web-preview,
// both selecting app=web until the deployer points them at a deployment.
func blueGreenServices(t *testing.T, ns string) {
	t.Helper()
	for _, name := range []string{"web", "web-preview"} {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
			},
		}
		if _, err := clientset().CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating service %s: %v", name, err)
		}
	}
}

// blueGreenDC is web with replicas pods, rolled out BlueGreen.
func blueGreenDC(replicas int32, params dcv1.BlueGreenDeploymentStrategyParams) *dcv1.DeploymentConfig {
	params.ActiveService, params.PreviewService = "web", "web-preview"
	return newDC("web", replicas, dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen, BlueGreenParams: &params})
}

// waitEndpoints waits until the EndpointSlices of a Service hold exactly
// the ready pods of deployment rc, n of them.
func waitEndpoints(t *testing.T, ns, service, rc string, n int) {
	t.Helper()
	var seen []string
	err := poll(t, rolloutTimeout, func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, ns, rc)
		if err != nil {
			return false, err
		}
		var want []string
		for i := range pods {
			if pods[i].DeletionTimestamp == nil && podReady(&pods[i]) {
				want = append(want, pods[i].Name)
			}
		}
		slices.Sort(want)
		if seen, err = endpointPods(ctx, ns, service); err != nil {
			return false, err
		}
		return len(want) == n && slices.Equal(seen, want), nil
	})
	if err != nil {
		t.Fatalf("waiting for service %s to have the %d ready pods of %s as endpoints: %v; last seen %v", service, n, rc, err, seen)
	}
}

// endpointPods lists the pods of a Service's ready endpoints, sorted.
func endpointPods(ctx context.Context, ns, service string) ([]string, error) {
	list, err := clientset().DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	if err != nil {
		return nil, err
	}
	var pods []string
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.TargetRef != nil && e.TargetRef.Kind == "Pod" && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
				pods = append(pods, e.TargetRef.Name)
			}
		}
	}
	slices.Sort(pods)
	return pods, nil
}

func TestBlueGreenPromotedByHand(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	blueGreenServices(t, ns)
	delay := int32(10)
	createDC(t, ns, blueGreenDC(2, dcv1.BlueGreenDeploymentStrategyParams{ScaleDownDelaySeconds: &delay}))
	requireComplete(t, ns, "web", 1)
	waitEndpoints(t, ns, "web", "web-1", 2)

	rollNext(t, ns, 2)
	waitPausedAt(t, ns, "web-2", 0)
	waitScaled(t, ns, map[string]int32{"web-1": 2, "web-2": 2})
	waitEndpoints(t, ns, "web-preview", "web-2", 2)
	waitEndpoints(t, ns, "web", "web-1", 2)
	want := "Waiting for rollout #2: paused, waiting for promote to switch service web (use 'kubectl dc rollout promote web')\n"
	if out := mustDC(t, ns, "rollout", "status", "web", "--watch=false"); out != want {
		t.Errorf("rollout status waiting for promote:\n%q\nwant\n%q", out, want)
	}

	mustDC(t, ns, "rollout", "promote", "web")
	waitEndpoints(t, ns, "web", "web-2", 2)
	// The old deployment keeps its pods for scaleDownDelaySeconds after the
	// switch.
	if old := getRC(t, ns, "web-1"); old.Spec.Replicas == nil || *old.Spec.Replicas != 2 {
		t.Errorf("web-1 was scaled down at the switch, before its scaleDownDelaySeconds")
	}
	requireComplete(t, ns, "web", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 2})
	waitEndpoints(t, ns, "web", "web-2", 2)
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Scaling web-2 to 2",
		"--> Service web-preview now selects web-2",
		"--> Waiting for 'kubectl dc rollout promote web' to switch service web to web-2",
		"    Promoted",
		"--> Service web now selects web-2",
		"--> Keeping web-1 for 10s (scaleDownDelaySeconds)",
		"--> Scaling web-1 down to zero",
		"--> Success")
}

func TestBlueGreenAborted(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	blueGreenServices(t, ns)
	createDC(t, ns, blueGreenDC(2, dcv1.BlueGreenDeploymentStrategyParams{}))
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	waitPausedAt(t, ns, "web-2", 0)
	waitEndpoints(t, ns, "web-preview", "web-2", 2)
	mustDC(t, ns, "rollout", "cancel", "web")
	requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	waitScaled(t, ns, map[string]int32{"web-1": 2, "web-2": 0})
	waitEndpoints(t, ns, "web", "web-1", 2)
	svc, err := clientset().CoreV1().Services(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.Spec.Selector[dcv1.DeploymentSelectorLabel]; got != "web-1" {
		t.Errorf("active service selects deployment %q, want web-1", got)
	}
}

func TestBlueGreenFailedPrePromotionAnalysis(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	blueGreenServices(t, ns)
	suite.exporter.SetTraffic(ns, "web-2", 10, 5)
	waitRated(t, suite.prometheus.URL(), ns, "web-2")
	createDC(t, ns, blueGreenDC(2, dcv1.BlueGreenDeploymentStrategyParams{PrePromotionAnalysis: errorRateAnalysis(2, time.Second)}))
	requireComplete(t, ns, "web", 1)
	waitEndpoints(t, ns, "web", "web-1", 2)
	rollNext(t, ns, 2)
	rc := requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	if reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; !strings.Contains(reason, "prePromotionAnalysis") || !strings.Contains(reason, "error-rate") {
		t.Errorf("status reason %q does not name the analysis and the metric", reason)
	}
	waitScaled(t, ns, map[string]int32{"web-1": 2, "web-2": 0})
	waitEndpoints(t, ns, "web", "web-1", 2)
}
