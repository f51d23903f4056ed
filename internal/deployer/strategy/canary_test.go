package strategy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
)

func TestWeightCounts(t *testing.T) {
	tests := []struct {
		desired, weight int32
		want            canaryCounts
	}{
		{5, 20, canaryCounts{to: 1, from: 4}},
		{5, 0, canaryCounts{to: 0, from: 5}},
		{5, 100, canaryCounts{to: 5, from: 0}},
		{4, 30, canaryCounts{to: 2, from: 3, extra: 1}},
		{10, 5, canaryCounts{to: 1, from: 10, extra: 1}},
		{1, 50, canaryCounts{to: 1, from: 1, extra: 1}},
		{1, 95, canaryCounts{to: 1, from: 1, extra: 1}},
		{0, 50, canaryCounts{}},
		{3, 50, canaryCounts{to: 2, from: 2, extra: 1}},
	}
	for _, tt := range tests {
		if got := weightCounts(tt.desired, tt.weight); got != tt.want {
			t.Errorf("weightCounts(%d, %d) = %+v, want %+v", tt.desired, tt.weight, got, tt.want)
		}
	}
}

// steps is a Rolling strategy with the given steps.
func steps(surge, unavailable string, s ...dcv1.RollingStep) *dcv1.RollingDeploymentStrategyParams {
	p := rolling(surge, unavailable, 10)
	p.Steps = s
	return p
}

func weight(w int32) dcv1.RollingStep { return dcv1.RollingStep{SetWeight: ptr.To(w)} }

func pauseFor(d time.Duration) dcv1.RollingStep {
	return dcv1.RollingStep{Pause: &dcv1.RolloutPause{Duration: &metav1.Duration{Duration: d}}}
}

var pauseUntilPromoted = dcv1.RollingStep{Pause: &dcv1.RolloutPause{}}

// rcState reads an RC's spec replicas and one annotation.
func (e *env) rcState(t *testing.T, name, key string) (int32, string) {
	t.Helper()
	rc, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ptr.Deref(rc.Spec.Replicas, 0), rc.Annotations[key]
}

// promote writes a promote request on web-2, as `kubectl dc rollout promote` does.
func (e *env) promote(t *testing.T, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, dcv1.PromoteRequestAnnotation, value)
	if _, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Patch(context.Background(), "web-2", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// runAsync runs the rolling strategy in the background.
func (e *env) runAsync(ctx context.Context, params *dcv1.RollingDeploymentStrategyParams, desired int32) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := e.rollout.Rolling(ctx, params, e.from, e.to, desired)
		done <- err
	}()
	return done
}

// waitPaused waits until web-2 records a pause at step k.
func (e *env) waitPaused(t *testing.T, k string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		rc, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Get(context.Background(), "web-2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rc.Annotations[dcv1.DeploymentStepAnnotation] == k && rc.Annotations[dcv1.DeploymentPausedSinceAnnotation] != "" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("web-2 never paused at step %s; output:\n%s", k, e.out.String())
}

func TestCanaryPausesAtWeightUntilPromoted(t *testing.T) {
	e := setup(t, fc.Options{}, 5, "")
	done := e.runAsync(t.Context(), steps("25%", "25%", weight(20), pauseUntilPromoted, weight(60), pauseUntilPromoted), 5)
	e.waitPaused(t, "2")
	if to, w := e.rcState(t, "web-2", dcv1.DeploymentWeightAnnotation); to != 1 || w != "20" {
		t.Errorf("at the first pause web-2 has %d replicas, weight %q; want 1 and 20", to, w)
	}
	if from, _ := e.rcState(t, "web-1", ""); from != 4 {
		t.Errorf("at the first pause web-1 has %d replicas, want 4", from)
	}
	// A promote of another step does not end this pause.
	e.promote(t, "4")
	e.promote(t, "2")
	e.waitPaused(t, "4")
	if to, _ := e.rcState(t, "web-2", ""); to != 3 {
		t.Errorf("at the second pause web-2 has %d replicas, want 3", to)
	}
	if from, _ := e.rcState(t, "web-1", ""); from != 2 {
		t.Errorf("at the second pause web-1 has %d replicas, want 2", from)
	}
	e.promote(t, "4")
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	to, step := e.rcState(t, "web-2", dcv1.DeploymentStepAnnotation)
	from, _ := e.rcState(t, "web-1", "")
	if to != 5 || from != 0 || step != "" {
		t.Errorf("ended with web-2=%d web-1=%d step %q; want 5, 0 and no step", to, from, step)
	}
	for _, want := range []string{
		"--> Step 1 of 4: setWeight 20%: scaling web-2 to 1 and web-1 to 4 (keep 4 pods available, don't exceed 7 pods)",
		"--> Step 2 of 4: paused until 'kubectl dc rollout promote web'",
		"    Promoted",
		"--> Step 3 of 4: setWeight 60%",
		"--> Scaling up web-2 from 3 to 5, scaling down web-1 from 2 to 0",
		"[post hook of web-2]",
	} {
		if !strings.Contains(e.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, e.out.String())
		}
	}
}

func TestCanaryTimedPauseEndsByItself(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	start := time.Now()
	done := e.runAsync(t.Context(), steps("1", "0", weight(50), pauseFor(200*time.Millisecond)), 4)
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if elapsed := time.Since(start); elapsed < 200*time.Millisecond {
		t.Errorf("rollout took %s, less than its pause", elapsed)
	}
	if !strings.Contains(e.out.String(), "    Pause of 200ms ended") {
		t.Errorf("output lacks the end of the pause:\n%s", e.out.String())
	}
	if to, since := e.rcState(t, "web-2", dcv1.DeploymentPausedSinceAnnotation); to != 4 || since != "" {
		t.Errorf("ended with web-2=%d paused-since %q", to, since)
	}
}

func TestCanaryPromoteFullSkipsTheRest(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	analysis := dcv1.RollingStep{Analysis: &dcv1.Analysis{}}
	done := e.runAsync(t.Context(), steps("1", "0", weight(25), pauseUntilPromoted, analysis, weight(75), pauseUntilPromoted), 4)
	e.waitPaused(t, "2")
	e.promote(t, dcv1.PromoteFull)
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if !strings.Contains(e.out.String(), "--> Promoted in full: skipping steps 3 to 5") || strings.Contains(e.out.String(), "Step 4") {
		t.Errorf("output:\n%s", e.out.String())
	}
	if to, _ := e.rcState(t, "web-2", ""); to != 4 {
		t.Errorf("web-2 has %d replicas, want 4", to)
	}
}

// TestCanaryIndefinitePauseOutlivesTheTimeout checks that a pause waiting
// for promote is not cut by the strategy's timeoutSeconds (here 1s).
func TestCanaryIndefinitePauseOutlivesTheTimeout(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	p := steps("1", "0", weight(50), pauseUntilPromoted)
	p.TimeoutSeconds = ptr.To[int64](1)
	done := e.runAsync(t.Context(), p, 2)
	e.waitPaused(t, "2")
	select {
	case err := <-done:
		t.Fatalf("the rollout ended during the pause: %v", err)
	case <-time.After(1500 * time.Millisecond):
	}
	e.promote(t, "2")
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
}

// TestCanaryCancelledInPause checks that the deployer stops at once when its
// context ends during a pause (the deployer pod deleted by a cancel).
func TestCanaryCancelledInPause(t *testing.T) {
	e := setup(t, fc.Options{}, 5, "")
	ctx, cancel := context.WithCancel(t.Context())
	done := e.runAsync(ctx, steps("25%", "25%", weight(20), pauseUntilPromoted), 5)
	e.waitPaused(t, "2")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if strings.Contains(e.out.String(), "[post hook") {
		t.Errorf("post hook ran:\n%s", e.out.String())
	}
}

type failingAnalysis struct{}

func (failingAnalysis) Run(context.Context, *dcv1.Analysis, *corev1.ReplicationController, string) error {
	return errors.New(`analysis Failed: metric "errors" failed 2 times`)
}

func TestCanaryFailedAnalysisFailsTheRollout(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	e.rollout.WithAnalysis(failingAnalysis{})
	_, err := e.rollout.Rolling(t.Context(), steps("1", "0", weight(25), dcv1.RollingStep{Analysis: &dcv1.Analysis{}}, weight(50)), e.from, e.to, 4)
	if err == nil || err.Error() != `step 2 of 3: analysis Failed: metric "errors" failed 2 times` {
		t.Fatalf("err = %v", err)
	}
	if to, _ := e.rcState(t, "web-2", ""); to != 1 {
		t.Errorf("web-2 has %d replicas, want 1 (left at step 1 for the fall-back)", to)
	}
}

// TestCanaryWeightBounds checks maxSurge and maxUnavailable between steps,
// with rising and falling weights and pods that take a while.
func TestCanaryWeightBounds(t *testing.T) {
	tests := []struct {
		surge, unavailable string
		desired            int32
		weights            []int32
	}{
		{"25%", "25%", 5, []int32{20, 60}},
		{"1", "0", 4, []int32{30, 70}},
		{"0", "1", 5, []int32{40, 20, 80}},
		{"0", "25%", 10, []int32{5, 50}},
		{"1", "0", 1, []int32{50}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s %d %v", tt.surge, tt.unavailable, tt.desired, tt.weights), func(t *testing.T) {
			e := setup(t, fc.Options{AvailableAfter: 5 * time.Millisecond}, tt.desired, "")
			before := len(e.cluster.Scales())
			var s []dcv1.RollingStep
			for _, w := range tt.weights {
				s = append(s, weight(w))
			}
			params := steps(tt.surge, tt.unavailable, s...)
			if _, err := e.rollout.Rolling(t.Context(), params, e.from, e.to, tt.desired); err != nil {
				t.Fatalf("rollout: %v\n%s", err, e.out.String())
			}
			surge, unavailable, _ := Fenceposts(params.MaxSurge, params.MaxUnavailable, tt.desired)
			for _, sc := range e.cluster.Scales()[before:] {
				old, cur := sc.After["web-1"], sc.After["web-2"]
				// +1: the rounding's extra pod.
				if pods := old[0] + cur[0]; pods > tt.desired+surge+1 {
					t.Errorf("after %s=%d: %d pods, more than %d", sc.RC, sc.Replicas, pods, tt.desired+surge+1)
				}
				if avail := old[1] + cur[1]; avail < tt.desired-unavailable {
					t.Errorf("after %s=%d: %d available, fewer than %d", sc.RC, sc.Replicas, avail, tt.desired-unavailable)
				}
			}
			for _, w := range tt.weights {
				c := weightCounts(tt.desired, w)
				if !reachedCounts(e.cluster.Scales()[before:], c) {
					t.Errorf("weight %d: never at web-2=%d web-1=%d; scales %v", w, c.to, c.from, e.cluster.Scales()[before:])
				}
			}
		})
	}
}

func reachedCounts(scales []fc.Scale, c canaryCounts) bool {
	for _, s := range scales {
		if s.After["web-2"][0] == c.to && s.After["web-1"][0] == c.from {
			return true
		}
	}
	return false
}

// TestCanaryResumesAtTheRecordedStep checks that a deployer started again
// for a deployment that recorded a step (its pod restarted) goes on from
// that step instead of starting over.
func TestCanaryResumesAtTheRecordedStep(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"3",%q:"3",%q:"2026-03-01T11:00:00Z"}}}`,
		dcv1.DeploymentStepAnnotation, dcv1.DeploymentStepsAnnotation, dcv1.DeploymentPausedSinceAnnotation)
	to, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Patch(t.Context(), "web-2", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.to = to
	e.promote(t, "3")
	if _, err := e.rollout.Rolling(t.Context(), steps("1", "0", weight(25), weight(50), pauseUntilPromoted), e.from, e.to, 4); err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	out := e.out.String()
	if strings.Contains(out, "Step 1 of 3") || strings.Contains(out, "Step 2 of 3") || !strings.Contains(out, "--> Step 3 of 3: paused until") {
		t.Errorf("output:\n%s", out)
	}
	if to, _ := e.rcState(t, "web-2", ""); to != 4 {
		t.Errorf("web-2 has %d replicas, want 4", to)
	}
}

// TestCanaryGrowsTheOldDeploymentToItsShare checks a canary whose
// DeploymentConfig's replicas were raised with the template: the old
// deployment (2 pods) grows to its share of 5 (4 at 20%) beside the new
// one's pod, instead of waiting for its pods for ever.
func TestCanaryGrowsTheOldDeploymentToItsShare(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	done := e.runAsync(t.Context(), steps("25%", "25%", weight(20), pauseUntilPromoted), 5)
	e.waitPaused(t, "2")
	if to, _ := e.rcState(t, "web-2", ""); to != 1 {
		t.Errorf("at the pause web-2 has %d replicas, want 1", to)
	}
	if from, _ := e.rcState(t, "web-1", ""); from != 4 {
		t.Errorf("at the pause web-1 has %d replicas, want 4", from)
	}
	e.promote(t, "2")
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
}
