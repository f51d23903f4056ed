package strategy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
)

// asOldRelease rewrites web-2 as a rollout the release before the progress
// record left it: its progress in the keys of then, no record, and the
// promote request of then.
func (e *env) asOldRelease(t *testing.T, keys map[string]string) {
	t.Helper()
	annotations := map[string]any{dcv1.RolloutProgressAnnotation: nil}
	for k, v := range keys {
		annotations[k] = v
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		t.Fatal(err)
	}
	if e.to, err = e.cluster.Client.CoreV1().ReplicationControllers(ns).Patch(t.Context(), "web-2", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeWithRolloutsInFlight resumes, with this release's runner,
// rollouts that the release before the progress record started and left
// paused at a step, waiting after an Inconclusive analysis, and in a
// blue-green trial: each goes on from where it was, and its first write
// moves it to the record.
func TestUpgradeWithRolloutsInFlight(t *testing.T) {
	t.Run("canary paused at step 2", func(t *testing.T) {
		e := setup(t, fc.Options{}, 4, "")
		if _, err := e.rollout.scaler.Scale(t.Context(), "web-2", 1, 0); err != nil {
			t.Fatal(err)
		}
		e.asOldRelease(t, map[string]string{
			"deployconfig.io/deployment.step": "2", "deployconfig.io/deployment.steps": "3", "deployconfig.io/deployment.weight": "25",
			"deployconfig.io/deployment.paused-since": "2026-03-01T11:00:00Z", "deployconfig.io/deployment.pause-reason": "Pause",
			// The old release's promote of step 2, written before the upgrade.
			dcv1.PromoteRequestAnnotation: "2",
		})
		e.rollout.WithAnalysis(passingAnalysis{})
		if _, err := e.rollout.Rolling(t.Context(), steps("1", "0", weight(25), pauseUntilPromoted, weight(75)), e.from, e.to, 4); err != nil {
			t.Fatalf("rollout: %v\n%s", err, e.out.String())
		}
		checkUpgraded(t, e, "Step 1 of 3")
	})
	t.Run("canary waiting after an inconclusive analysis", func(t *testing.T) {
		e := setup(t, fc.Options{}, 4, "")
		e.asOldRelease(t, map[string]string{
			"deployconfig.io/deployment.step": "2", "deployconfig.io/deployment.steps": "3",
			"deployconfig.io/deployment.paused-since": "2026-03-01T11:00:00Z", "deployconfig.io/deployment.pause-reason": "Inconclusive",
		})
		e.rollout.WithAnalysis(passingAnalysis{})
		if _, err := e.rollout.Rolling(t.Context(), steps("1", "0", weight(25), analysisStep, weight(75)), e.from, e.to, 4); err != nil {
			t.Fatalf("rollout: %v\n%s", err, e.out.String())
		}
		checkUpgraded(t, e, "Step 1 of 3")
	})
	t.Run("blue-green on trial", func(t *testing.T) {
		e := setup(t, fc.Options{}, 2, "")
		e.withServices(t)
		if _, err := e.rollout.scaler.Scale(t.Context(), "web-2", 2, 0); err != nil {
			t.Fatal(err)
		}
		e.setSelector(t, "web", map[string]string{"app": "web", "deploymentconfig": "web", "deployment": "web-2"})
		e.asOldRelease(t, map[string]string{"deployconfig.io/deployment.switched": "trial"})
		a := &observingAnalysis{e: e, t: t}
		e.rollout.WithAnalysis(a)
		params := blueGreen.DeepCopy()
		params.PostPromotionAnalysis = &dcv1.Analysis{}
		if _, err := e.rollout.BlueGreen(t.Context(), params, e.from, e.to, 2); err != nil {
			t.Fatalf("rollout: %v\n%s", err, e.out.String())
		}
		if !selects(a.selector, "web-2") || fmt.Sprint(a.labels) != "[postPromotion]" {
			t.Errorf("during the resumed analysis the active Service selected %v (analyses %v); want web-2 and the postPromotion analysis", a.selector, a.labels)
		}
		checkUpgraded(t, e, "Waiting for 'kubectl dc rollout promote")
		if sel := e.selector(t, "web"); !selects(sel, "web-2") {
			t.Errorf("active selects %v, want web-2", sel)
		}
	})
}

// checkUpgraded checks an upgraded rollout's end: complete, in the record
// with the old keys gone, without redoing what the old release did.
func checkUpgraded(t *testing.T, e *env, redone string) {
	t.Helper()
	to, p := e.rcState(t, "web-2")
	if to == 0 {
		t.Errorf("web-2 ended at 0 replicas")
	}
	rc, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Get(t.Context(), "web-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rc.Annotations[dcv1.RolloutProgressAnnotation]; !ok || p.Wait != nil {
		t.Errorf("web-2's record after the upgrade: %s (present: %v)", p.Encode(), ok)
	}
	for _, old := range []string{"deployconfig.io/deployment.step", "deployconfig.io/deployment.paused-since", "deployconfig.io/deployment.switched"} {
		if v, ok := rc.Annotations[old]; ok {
			t.Errorf("web-2 keeps the old key %s=%q", old, v)
		}
	}
	if out := e.out.String(); strings.Contains(out, redone) {
		t.Errorf("the upgraded rollout redid %q:\n%s", redone, out)
	}
}
