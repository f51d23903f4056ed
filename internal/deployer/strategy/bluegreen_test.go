package strategy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
)

// withServices creates the Services web (selecting web-1, or nothing on a
// first rollout) and web-preview, and lets the rollout switch them.
func (e *env) withServices(t *testing.T) {
	t.Helper()
	svcs := e.cluster.Client.CoreV1().Services(ns)
	for name, sel := range map[string]map[string]string{
		"web":         {"app": "web", "deployment": "web-1", "stale": "x"},
		"web-preview": {"app": "web"},
	} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.ServiceSpec{Selector: sel}}
		if _, err := svcs.Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.rollout.WithServices(svcs)
}

func (e *env) selector(t *testing.T, name string) map[string]string {
	t.Helper()
	svc, err := e.cluster.Client.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc.Spec.Selector
}

// selects reports whether sel is exactly the selector of rc: the DC's
// selector plus the deployment label, and nothing the Service had before.
func selects(sel map[string]string, rc string) bool {
	return len(sel) == 3 && sel["app"] == "web" && sel["deploymentconfig"] == "web" && sel["deployment"] == rc
}

var blueGreen = &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: "web", PreviewService: "web-preview", TimeoutSeconds: ptr.To[int64](10)}

func TestBlueGreenPromotedByHand(t *testing.T) {
	e := setup(t, fc.Options{}, 3, "")
	e.withServices(t)
	params := blueGreen.DeepCopy()
	params.ScaleDownDelaySeconds = ptr.To[int32](30)
	done := make(chan error, 1)
	go func() {
		_, err := e.rollout.BlueGreen(t.Context(), params, e.from, e.to, 3)
		done <- err
	}()
	e.waitPaused(t, "")
	if to, _ := e.rcState(t, "web-2", ""); to != 3 {
		t.Errorf("waiting for promotion, web-2 has %d replicas, want 3", to)
	}
	if from, _ := e.rcState(t, "web-1", ""); from != 3 {
		t.Errorf("waiting for promotion, web-1 has %d replicas, want 3", from)
	}
	if sel := e.selector(t, "web-preview"); !selects(sel, "web-2") {
		t.Errorf("preview selects %v before promote, want web-2", sel)
	}
	if sel := e.selector(t, "web"); sel["deployment"] != "web-1" {
		t.Errorf("active selects %v before promote, want web-1", sel)
	}
	e.promote(t, dcv1.PromoteFull)
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if sel := e.selector(t, "web"); !selects(sel, "web-2") {
		t.Errorf("active selects %v after promote, want exactly app=web,deploymentconfig=web,deployment=web-2", sel)
	}
	if from, _ := e.rcState(t, "web-1", ""); from != 0 {
		t.Errorf("web-1 has %d replicas after the rollout, want 0", from)
	}
	for _, want := range []string{
		"--> Scaling web-2 to 3",
		"--> Service web-preview now selects web-2",
		"--> Waiting for 'kubectl dc rollout promote web' to switch service web to web-2",
		"    Promoted",
		"--> Service web now selects web-2",
		"--> Keeping web-1 for 30s (scaleDownDelaySeconds)",
		"--> Scaling web-1 down to zero",
	} {
		if !strings.Contains(e.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, e.out.String())
		}
	}
}

func TestBlueGreenAutoPromotion(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	e.withServices(t)
	params := blueGreen.DeepCopy()
	params.AutoPromotionSeconds = ptr.To[int32](0)
	if _, err := e.rollout.BlueGreen(t.Context(), params, e.from, e.to, 2); err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if sel := e.selector(t, "web"); !selects(sel, "web-2") {
		t.Errorf("active selects %v, want web-2", sel)
	}
	if !strings.Contains(e.out.String(), "    Promoted automatically after 0s") {
		t.Errorf("output:\n%s", e.out.String())
	}
}

func TestBlueGreenFirstRollout(t *testing.T) {
	e := setup(t, fc.Options{}, -1, "")
	e.withServices(t)
	if _, err := e.rollout.BlueGreen(t.Context(), blueGreen, nil, e.to, 2); err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if sel := e.selector(t, "web"); !selects(sel, "web-2") {
		t.Errorf("active selects %v, want web-2", sel)
	}
}

func TestBlueGreenFailedAnalysisSwitchesNothing(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	e.withServices(t)
	e.rollout.WithAnalysis(failingAnalysis{})
	params := blueGreen.DeepCopy()
	params.PrePromotionAnalysis = &dcv1.Analysis{}
	_, err := e.rollout.BlueGreen(t.Context(), params, e.from, e.to, 2)
	if err == nil || err.Error() != `prePromotionAnalysis: analysis Failed: metric "errors" failed 2 times` {
		t.Fatalf("err = %v", err)
	}
	if sel := e.selector(t, "web"); sel["deployment"] != "web-1" {
		t.Errorf("active selects %v, want web-1", sel)
	}
	if to, _ := e.rcState(t, "web-2", ""); to != 0 {
		t.Errorf("web-2 has %d replicas, want 0", to)
	}
	if from, _ := e.rcState(t, "web-1", ""); from != 2 {
		t.Errorf("web-1 has %d replicas, want 2", from)
	}
}

// TestBlueGreenCancelAfterSwitchRestoresActive checks that a deployer
// stopped during the scale-down delay points the active Service back at
// the old deployment, which the fall-back brings back.
func TestBlueGreenCancelAfterSwitchRestoresActive(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	e.withServices(t)
	params := blueGreen.DeepCopy()
	params.ScaleDownDelaySeconds = ptr.To[int32](30)
	e.rollout.pause = func(context.Context, time.Duration) error { return context.Canceled }
	e.promote(t, dcv1.PromoteFull)
	_, err := e.rollout.BlueGreen(t.Context(), params, e.from, e.to, 2)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if sel := e.selector(t, "web"); !selects(sel, "web-1") {
		t.Errorf("active selects %v, want web-1 again", sel)
	}
}

func TestBlueGreenMissingService(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	e.withServices(t)
	params := blueGreen.DeepCopy()
	params.PreviewService = "nope"
	_, err := e.rollout.BlueGreen(t.Context(), params, e.from, e.to, 2)
	if err == nil || err.Error() != `strategy.blueGreenParams.previewService: service "nope" does not exist` {
		t.Fatalf("err = %v", err)
	}
	if len(e.cluster.Scales()) != 1 {
		t.Errorf("scaled: %v", e.cluster.Scales())
	}
}
