package strategy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
	"github.com/deployconfig/deployconfig/internal/deployment"
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

// setSelector sets a Service's selector as a person or a GitOps tool
// would.
func (e *env) setSelector(t *testing.T, name string, sel map[string]string) {
	t.Helper()
	svcs := e.cluster.Client.CoreV1().Services(ns)
	svc, err := svcs.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Selector = sel
	if _, err := svcs.Update(context.Background(), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
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
	if to, _ := e.rcState(t, "web-2"); to != 3 {
		t.Errorf("waiting for promotion, web-2 has %d replicas, want 3", to)
	}
	if from, _ := e.rcState(t, "web-1"); from != 3 {
		t.Errorf("waiting for promotion, web-1 has %d replicas, want 3", from)
	}
	if sel := e.selector(t, "web-preview"); !selects(sel, "web-2") {
		t.Errorf("preview selects %v before promote, want web-2", sel)
	}
	if sel := e.selector(t, "web"); sel["deployment"] != "web-1" {
		t.Errorf("active selects %v before promote, want web-1", sel)
	}
	e.promoteAt(t, deployment.GatePromotion)
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if sel := e.selector(t, "web"); !selects(sel, "web-2") {
		t.Errorf("active selects %v after promote, want exactly app=web,deploymentconfig=web,deployment=web-2", sel)
	}
	if from, _ := e.rcState(t, "web-1"); from != 0 {
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
	if to, _ := e.rcState(t, "web-2"); to != 0 {
		t.Errorf("web-2 has %d replicas, want 0", to)
	}
	if from, _ := e.rcState(t, "web-1"); from != 2 {
		t.Errorf("web-1 has %d replicas, want 2", from)
	}
}

// TestBlueGreenCancelAfterSwitchKeepsTheNewVersion checks that a deployer
// stopped during the scale-down delay (a newer version arrived) leaves
// the active Service on the new deployment, which it marked switched for
// good: the switch is the point of no return, and traffic never flips
// back to the version it replaced.
func TestBlueGreenCancelAfterSwitchKeepsTheNewVersion(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	e.withServices(t)
	params := blueGreen.DeepCopy()
	params.ScaleDownDelaySeconds = ptr.To[int32](30)
	e.rollout.pause = func(context.Context, time.Duration) error { return context.Canceled }
	e.promoteAt(t, deployment.GatePromotion)
	_, err := e.rollout.BlueGreen(t.Context(), params, e.from, e.to, 2)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if sel := e.selector(t, "web"); !selects(sel, "web-2") {
		t.Errorf("active selects %v after a cancel past the switch, want web-2", sel)
	}
	if _, pr := e.rcState(t, "web-2"); pr.Switch != deployment.SwitchFinal {
		mark := pr.Switch
		t.Errorf("web-2 is marked switched=%q, want %q", mark, dcv1.SwitchedFinal)
	}
	if from, _ := e.rcState(t, "web-1"); from != 2 {
		t.Errorf("web-1 has %d replicas, want 2 (the delay was not over)", from)
	}
}

// TestBlueGreenPinsActiveBeforeScaleUp checks that an active Service
// selecting every version's pods is pointed at the live deployment before
// the new one gets any pod.
func TestBlueGreenPinsActiveBeforeScaleUp(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	e.withServices(t)
	e.setSelector(t, "web", map[string]string{"app": "web"})
	var atScaleUp map[string]string
	scalesUp := func(a k8stesting.Action) bool {
		switch a := a.(type) {
		case k8stesting.UpdateAction:
			s, ok := a.GetObject().(*autoscalingv1.Scale)
			return ok && a.GetSubresource() == "scale" && s.Name == "web-2" && s.Spec.Replicas > 0
		case k8stesting.PatchAction:
			return a.GetName() == "web-2" && strings.Contains(string(a.GetPatch()), `"replicas"`)
		}
		return false
	}
	record := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if atScaleUp != nil || !scalesUp(a) {
			return false, nil, nil
		}
		// The fake clientset holds its lock while reactors run: read the
		// Service from its tracker.
		obj, err := e.cluster.Client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("services"), ns, "web")
		if err != nil {
			t.Error(err)
			return false, nil, nil
		}
		atScaleUp = obj.(*corev1.Service).Spec.Selector
		return false, nil, nil
	}
	e.cluster.Client.PrependReactor("update", "replicationcontrollers", record)
	e.cluster.Client.PrependReactor("patch", "replicationcontrollers", record)
	params := blueGreen.DeepCopy()
	params.AutoPromotionSeconds = ptr.To[int32](0)
	if _, err := e.rollout.BlueGreen(t.Context(), params, e.from, e.to, 2); err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if !selects(atScaleUp, "web-1") {
		t.Errorf("when web-2 was scaled up the active Service selected %v, want exactly web-1\n%s", atScaleUp, e.out.String())
	}
}

// TestBlueGreenFirstRolloutSetsBothServices checks that the first rollout
// points the preview Service too, as the docs say, and marks the switch
// final.
func TestBlueGreenFirstRolloutSetsBothServices(t *testing.T) {
	e := setup(t, fc.Options{}, -1, "")
	e.withServices(t)
	if _, err := e.rollout.BlueGreen(t.Context(), blueGreen, nil, e.to, 2); err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	for _, svc := range []string{"web", "web-preview"} {
		if sel := e.selector(t, svc); !selects(sel, "web-2") {
			t.Errorf("%s selects %v, want web-2", svc, sel)
		}
	}
	if _, pr := e.rcState(t, "web-2"); pr.Switch != deployment.SwitchFinal {
		mark := pr.Switch
		t.Errorf("web-2 is marked switched=%q, want %q", mark, dcv1.SwitchedFinal)
	}
}

// observingAnalysis records, when it runs, the switch mark of the
// deployment and the active Service's selector, and returns err.
type observingAnalysis struct {
	e        *env
	t        *testing.T
	err      error
	mark     string
	selector map[string]string
	labels   []string
}

func (o *observingAnalysis) Run(_ context.Context, _ *dcv1.Analysis, rc *corev1.ReplicationController, label string) error {
	_, p := o.e.rcState(o.t, rc.Name)
	o.mark = string(p.Switch)
	o.selector = o.e.selector(o.t, "web")
	o.labels = append(o.labels, label)
	return o.err
}

func TestBlueGreenPostPromotionAnalysis(t *testing.T) {
	failed := errors.New(`analysis Failed: metric "errors" failed 2 times`)
	for _, tc := range []struct {
		name       string
		err        error
		wantErr    string
		wantActive string
		wantMark   string
		wantTo     int32
		wantFrom   int32
	}{
		{"passes", nil, "", "web-2", dcv1.SwitchedFinal, 2, 0},
		{"fails", failed, "postPromotionAnalysis: " + failed.Error(), "web-1", "", 0, 2},
		// A cancel (a newer version) during the trial switches back too;
		// the fall-back scales web-2 away.
		{"cancelled", context.Canceled, "postPromotionAnalysis: context canceled", "web-1", "", 2, 2},
		// A runner that stops with no cancel recorded (a new leader takes
		// the rollout over) leaves the trial for the next one to resume.
		{"handed over", errHandedOver, "postPromotionAnalysis: context canceled", "web-2", dcv1.SwitchedTrial, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, fc.Options{}, 2, "")
			e.withServices(t)
			a := &observingAnalysis{e: e, t: t, err: tc.err}
			e.rollout.WithAnalysis(a)
			params := blueGreen.DeepCopy()
			params.PostPromotionAnalysis = &dcv1.Analysis{}
			e.promoteAt(t, deployment.GatePromotion)
			ctx := t.Context()
			if tc.err == context.Canceled || tc.err == errHandedOver {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				a.err = nil
				e.rollout.WithAnalysis(cancelling{a: a, cancel: cancel, e: e, t: t, byUser: tc.err == context.Canceled})
			}
			_, err := e.rollout.BlueGreen(ctx, params, e.from, e.to, 2)
			if got := fmt.Sprint(err); (tc.wantErr == "" && err != nil) || (tc.wantErr != "" && got != tc.wantErr) {
				t.Fatalf("err = %v, want %q\n%s", err, tc.wantErr, e.out.String())
			}
			if a.mark != dcv1.SwitchedTrial || !selects(a.selector, "web-2") {
				t.Errorf("during the analysis web-2 was marked %q and the active Service selected %v; want trial and web-2", a.mark, a.selector)
			}
			if len(a.labels) != 1 || a.labels[0] != "postPromotion" {
				t.Errorf("analyses run: %v, want [postPromotion]", a.labels)
			}
			if sel := e.selector(t, "web"); !selects(sel, tc.wantActive) {
				t.Errorf("active selects %v, want %s", sel, tc.wantActive)
			}
			if _, pr := e.rcState(t, "web-2"); string(pr.Switch) != tc.wantMark {
				mark := pr.Switch
				t.Errorf("web-2 is marked switched=%q, want %q", mark, tc.wantMark)
			}
			if to, _ := e.rcState(t, "web-2"); to != tc.wantTo {
				t.Errorf("web-2 has %d replicas, want %d", to, tc.wantTo)
			}
			if from, _ := e.rcState(t, "web-1"); from != tc.wantFrom {
				t.Errorf("web-1 has %d replicas, want %d", from, tc.wantFrom)
			}
		})
	}
}

// errHandedOver names the case of a runner stopped with no cancel.
var errHandedOver = errors.New("handed over")

// cancelling runs an analysis and then stops the rollout: as a newer
// version does during it (byUser: the deployment is marked cancelled
// first), or as a runner going away does.
type cancelling struct {
	a      AnalysisRunner
	cancel context.CancelFunc
	e      *env
	t      *testing.T
	byUser bool
}

func (c cancelling) Run(ctx context.Context, a *dcv1.Analysis, rc *corev1.ReplicationController, label string) error {
	_ = c.a.Run(ctx, a, rc, label)
	if c.byUser {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, dcv1.DeploymentCancelledAnnotation)
		if _, err := c.e.cluster.Client.CoreV1().ReplicationControllers(ns).Patch(context.Background(), rc.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			c.t.Error(err)
		}
	}
	c.cancel()
	return ctx.Err()
}

// TestBlueGreenAutoPromotionCountsFromPausedSince checks that a restarted
// deployer counts autoPromotionSeconds from the recorded start of the
// wait rather than starting the countdown again.
func TestBlueGreenAutoPromotionCountsFromPausedSince(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	e.withServices(t)
	since := metav1.NewTime(time.Now().Add(-time.Hour).UTC().Truncate(time.Second))
	to := e.recordProgress(t, deployment.Progress{Stage: deployment.StageBeforeSwitch,
		Wait: &deployment.Wait{Gate: deployment.GatePromotion, Reason: dcv1.PauseReasonPromotion, Since: since}})
	params := blueGreen.DeepCopy()
	params.AutoPromotionSeconds = ptr.To[int32](600)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := e.rollout.BlueGreen(ctx, params, e.from, to, 2); err != nil {
		t.Fatalf("rollout: %v (the countdown started again)\n%s", err, e.out.String())
	}
	if sel := e.selector(t, "web"); !selects(sel, "web-2") {
		t.Errorf("active selects %v, want web-2", sel)
	}
	if _, pr := e.rcState(t, "web-2"); pr.Wait != nil {
		t.Errorf("web-2 still records a wait after the promotion: %s", pr.Encode())
	}
}

// TestBlueGreenRecordsThePauseReason checks that a rollout waiting for
// promotion says why beside paused-since, and clears both once promoted.
func TestBlueGreenRecordsThePauseReason(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	e.withServices(t)
	done := make(chan error, 1)
	go func() {
		_, err := e.rollout.BlueGreen(t.Context(), blueGreen, e.from, e.to, 2)
		done <- err
	}()
	e.waitPaused(t, "")
	if _, pr := e.rcState(t, "web-2"); pr.Wait == nil || pr.Wait.Reason != dcv1.PauseReasonPromotion {
		t.Errorf("waiting for promotion, web-2 records %s, want a wait for %s", pr.Encode(), dcv1.PauseReasonPromotion)
	}
	e.promoteAt(t, deployment.GatePromotion)
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if _, pr := e.rcState(t, "web-2"); pr.Wait != nil || len(pr.Consumed) != 1 {
		t.Errorf("after the promotion web-2 records %s, want no wait and the request consumed", pr.Encode())
	}
}

// TestBlueGreenRetryOfASwitchedDeployment checks that a deployment the
// active Service was switched to for good never points it back at the
// older one when it rolls out again (a retry).
func TestBlueGreenRetryOfASwitchedDeployment(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	e.withServices(t)
	e.setSelector(t, "web", map[string]string{"app": "web", "deploymentconfig": "web", "deployment": "web-2"})
	to := e.recordProgress(t, deployment.Progress{Stage: deployment.StageSwitched, Switch: deployment.SwitchFinal})
	var selected []string
	e.cluster.Client.PrependReactor("patch", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		selected = append(selected, string(a.(k8stesting.PatchAction).GetPatch()))
		return false, nil, nil
	})
	// Nothing waits for a promotion that happened before.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := e.rollout.BlueGreen(ctx, blueGreen, e.from, to, 2); err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	for _, p := range selected {
		if strings.Contains(p, `"web-1"`) {
			t.Errorf("a Service was pointed at web-1: %s", p)
		}
	}
	if sel := e.selector(t, "web"); !selects(sel, "web-2") {
		t.Errorf("active selects %v, want web-2", sel)
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
