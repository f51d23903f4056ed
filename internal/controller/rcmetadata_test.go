package controller

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/cachedconfig"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// TestRCMetadataOutcomes: each deployconfig.io/ value the controllers read
// from an RC, written by hand, has an outcome that keeps the
// DeploymentConfig moving.
func TestRCMetadataOutcomes(t *testing.T) {
	dc := testDC(nil)
	t.Run("unknown phase: failed by the deployer controller", func(t *testing.T) {
		for _, phase := range []string{"Bogus", "complete", "running", " New", "Complete\n"} {
			rc := rcOf(t, dc, 3, dcv1.DeploymentPhase(phase), 0)
			if got := deployerStepOf(rc); got != stepUnknownPhase {
				t.Errorf("phase %q: step %v, want stepUnknownPhase", phase, got)
			}
			if !deployment.CanTransition(dcv1.DeploymentPhase(phase), dcv1.DeploymentPhaseFailed) ||
				deployment.CanTransition(dcv1.DeploymentPhase(phase), dcv1.DeploymentPhaseComplete) {
				t.Errorf("phase %q: may move to Failed and only there", phase)
			}
		}
		if got := deployerStepOf(rcOf(t, dc, 3, "", 0)); got != stepNew {
			t.Errorf("empty phase: step %v, want stepNew (no phase is New)", got)
		}
	})
	t.Run("settled label: only true is settled, for the caches and the readers alike", func(t *testing.T) {
		settledSelector := labels.NewSelector().Add(requirement(dcv1.DeploymentSettledLabel, "=", settledValue))
		for _, value := range []string{"true", "false", "", "True", "yes"} {
			rc := rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 0)
			rc.Labels[dcv1.DeploymentSettledLabel] = value
			inMain := unsettledSelector().Matches(labels.Set(rc.Labels))
			inSettled := settledSelector.Matches(labels.Set(rc.Labels))
			isSettled := value == settledValue
			if inMain == isSettled || inSettled != isSettled {
				t.Errorf("settled=%q: in the main cache %v, in the settled cache %v; want exactly one, the settled one only for true", value, inMain, inSettled)
			}
		}
		// An RC whose label holds another value is labelled again once it
		// settles.
		old := rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 0)
		old.Labels[dcv1.DeploymentSettledLabel] = "no"
		active := rcOf(t, dc, 2, dcv1.DeploymentPhaseComplete, 4)
		if got := settleable([]*corev1.ReplicationController{old, active}); len(got) != 1 || got[0] != old {
			t.Errorf("settleable = %v, want the RC labelled %q", got, "no")
		}
	})
	t.Run("version: the name of an RC the controller made wins over its annotation", func(t *testing.T) {
		for _, tc := range []struct {
			name, annotation string
			want             int64
		}{
			{"web-3", "abc", 3},
			{"web-3", "999999999999", 3},
			{"web-3", "-1", 3},
			{"legacy", "7", 7},
			{"legacy", "abc", 0},
			{"web-03", "5", 5},
			{"web-x", "", 0},
		} {
			rc := rcOf(t, dc, 3, dcv1.DeploymentPhaseComplete, 0)
			rc.Name = tc.name
			rc.Annotations[dcv1.DeploymentVersionAnnotation] = tc.annotation
			if got := deployment.Version(rc); got != tc.want {
				t.Errorf("%s with version %q: %d, want %d", tc.name, tc.annotation, got, tc.want)
			}
		}
		latest := rcOf(t, dc, 3, dcv1.DeploymentPhaseRunning, 0)
		latest.Annotations[dcv1.DeploymentVersionAnnotation] = "abc"
		if findVersion([]*corev1.ReplicationController{latest}, 3) != latest {
			t.Error("the latest deployment with a malformed version annotation is not found")
		}
	})
	t.Run("cache-only annotations written by hand are dropped", func(t *testing.T) {
		rc := rcOf(t, dc, 3, dcv1.DeploymentPhaseNew, 0)
		forged, err := json.Marshal(deployment.ConfigSummary{TemplateHash: "forged", Test: true})
		if err != nil {
			t.Fatal(err)
		}
		rc.Annotations[cachedSummaryAnnotation] = string(forged)
		want := deployment.Summarize(rc)
		slim := cached(t, rc)
		if got := configSummary(slim); got.TemplateHash != want.TemplateHash || got.Test {
			t.Errorf("summary of the cached New RC = %+v, want that of its encoding %+v", got, want)
		}
		// The CRD requires a template, so the cache's encoding of it
		// always replaces one written by hand on a DeploymentConfig.
		forgedDC := dc.DeepCopy()
		forgedDC.Annotations = map[string]string{cachedconfig.TemplateAnnotation: `{"spec":{"containers":[{"name":"x","image":"evil"}]}}`}
		if err := cachedconfig.Compact(forgedDC); err != nil {
			t.Fatal(err)
		}
		if err := cachedconfig.Expand(forgedDC); err != nil || forgedDC.Spec.Template.Spec.Containers[0].Image != dc.Spec.Template.Spec.Containers[0].Image {
			t.Errorf("a DC got the template %v from a hand-written %s (err %v)", forgedDC.Spec.Template, cachedconfig.TemplateAnnotation, err)
		}
	})
}

// FuzzRCMetadata feeds random deployconfig.io/ metadata to the decisions
// the controllers make from an RC: none panics, and each outcome is one of
// the defined ones.
func FuzzRCMetadata(f *testing.F) {
	f.Add("Complete", "true", "3", "true", "", "web-3")
	f.Add("Bogus", "false", "abc", "TRUE", `{"templateHash":"x","test":true}`, "web-3")
	f.Add("", "", "99999999999999999999", "", "{", "legacy")
	f.Add("New", "yes", "-5", "false", `null`, "web-0")
	f.Fuzz(func(t *testing.T, phase, settledLabel, version, cancelled, summary, name string) {
		dc := testDC(nil)
		active := rcOf(t, dc, 2, dcv1.DeploymentPhaseComplete, 4)
		rc := rcOf(t, dc, 3, dcv1.DeploymentPhaseNew, 0)
		rc.Name = name
		rc.Labels[dcv1.DeploymentSettledLabel] = settledLabel
		rc.Annotations[dcv1.DeploymentPhaseAnnotation] = phase
		rc.Annotations[dcv1.DeploymentVersionAnnotation] = version
		rc.Annotations[dcv1.DeploymentCancelledAnnotation] = cancelled
		rc.Annotations[cachedSummaryAnnotation] = summary

		p := deployment.Phase(rc)
		switch step := deployerStepOf(rc); {
		case step == stepUnknownPhase && (deployment.IsKnown(p) || !deployment.CanTransition(p, dcv1.DeploymentPhaseFailed)):
			t.Fatalf("phase %q: unknown, yet known or not allowed to fail", p)
		case step != stepUnknownPhase && !deployment.IsKnown(p):
			t.Fatalf("phase %q: step %v", p, step)
		}
		if v := deployment.Version(rc); v < 0 {
			t.Fatalf("version %d", v)
		}
		inMain := unsettledSelector().Matches(labels.Set(rc.Labels))
		if inMain != (rc.Labels[dcv1.DeploymentSettledLabel] != settledValue) {
			t.Fatalf("settled=%q: in the main cache %v", settledLabel, inMain)
		}

		slim, err := transformRC(rc.DeepCopy())
		if err != nil {
			t.Fatalf("transformRC: %v", err)
		}
		cachedRC := slim.(*corev1.ReplicationController)
		if got, want := configSummary(cachedRC), deployment.Summarize(rc); got.TemplateHash != want.TemplateHash || got.Test != want.Test {
			t.Fatalf("cached summary %+v, want that of the encoding %+v", got, want)
		}
		rcs := []*corev1.ReplicationController{active, cachedRC}
		deployment.SortByVersion(rcs)
		_ = triggeredRollout(dc, cachedRC)
		_ = prunable(dc, rcs)
		_ = settleable(rcs)
		_, _ = leftoverDeployments(rcs)
		if c := deployment.Live(rcs, nil); c != nil && !deployment.IsLive(c) {
			t.Fatalf("live deployment %s is %s and not switched for good", c.Name, deployment.Phase(c))
		}
		_ = computeStatus(dc, rcs, nil, active.CreationTimestamp)
	})
}

// TestCachedTransformsAreIdempotent: client-go may pass an object the cache has
// already slimmed through the transform again (on a relist); it must come
// out as it went in. (Dropping a summary that stood in for the encoding
// made every deployment look made from another template after a
// kube-apiserver restart: make chaos caught the extra rollouts.)
func TestCachedTransformsAreIdempotent(t *testing.T) {
	for _, phase := range []dcv1.DeploymentPhase{dcv1.DeploymentPhaseNew, dcv1.DeploymentPhaseRunning, dcv1.DeploymentPhaseComplete} {
		once := cached(t, rcOf(t, testDC(nil), 2, phase, 1))
		twice := cached(t, once.DeepCopy())
		if !reflect.DeepEqual(once.Annotations, twice.Annotations) {
			t.Errorf("%s: transformed again, annotations %v; want %v", phase, twice.Annotations, once.Annotations)
		}
		if s := configSummary(twice); s.Error != "" || !templateMatches(testDC(nil), twice) {
			t.Errorf("%s: transformed again, summary %+v no longer matches the template", phase, s)
		}
	}
	dc := testDC(nil)
	if _, err := transformDC(dc); err != nil {
		t.Fatal(err)
	}
	if _, err := transformDC(dc); err != nil {
		t.Fatal(err)
	}
	if err := cachedconfig.Expand(dc); err != nil || dc.Spec.Template == nil || dc.Spec.Template.Spec.Containers[0].Image != "img:1" {
		t.Errorf("a DC transformed twice expands to %v (err %v)", dc.Spec.Template, err)
	}
}
