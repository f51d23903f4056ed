package strategy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

func TestWeightCounts(t *testing.T) {
	tests := []struct {
		desired, surge, weight int32
		want                   canaryCounts
	}{
		{5, 2, 20, canaryCounts{to: 1, from: 4}},
		{5, 2, 0, canaryCounts{to: 0, from: 5}},
		{5, 2, 100, canaryCounts{to: 5, from: 0}},
		// The case: no surge, so never more than 4 pods.
		{4, 0, 30, canaryCounts{to: 1, from: 3}},
		{4, 1, 30, canaryCounts{to: 1, from: 3}},
		// 1 of 11 (9.1%) is closer to 5% than 1 of 10.
		{10, 1, 5, canaryCounts{to: 1, from: 10}},
		{10, 0, 5, canaryCounts{to: 1, from: 9}},
		// One pod each needs the surge; without it the tie goes to the canary.
		{1, 1, 50, canaryCounts{to: 1, from: 1}},
		{1, 0, 50, canaryCounts{to: 1, from: 0}},
		{1, 1, 95, canaryCounts{to: 1, from: 1}},
		{0, 1, 50, canaryCounts{}},
		// 2 of 4 is exactly 50%; without surge 1 and 2 of 3 tie and the
		// larger canary wins, as in Argo Rollouts.
		{3, 1, 50, canaryCounts{to: 2, from: 2}},
		{3, 0, 50, canaryCounts{to: 2, from: 1}},
		{2, 0, 1, canaryCounts{to: 1, from: 1}},
		{2, 0, 99, canaryCounts{to: 1, from: 1}},
		{10, 3, 33, canaryCounts{to: 3, from: 7}},
	}
	for _, tt := range tests {
		if got := weightCounts(tt.desired, tt.surge, tt.weight); got != tt.want {
			t.Errorf("weightCounts(%d, %d, %d) = %+v, want %+v", tt.desired, tt.surge, tt.weight, got, tt.want)
		}
	}
}

// TestWeightCountsProperties checks the counts of every weight for many
// replica counts and fenceposts: never more pods than desired+maxSurge, at
// rest never fewer than desired-maxUnavailable, one pod of each version when
// the room allows, and no allowed pair closer to the weight.
func TestWeightCountsProperties(t *testing.T) {
	delta := func(w, to, total int32) float64 {
		if total == 0 {
			return 0
		}
		return math.Abs(float64(to)*100/float64(total) - float64(w))
	}
	for desired := int32(0); desired <= 25; desired++ {
		for surge := int32(0); surge <= 3; surge++ {
			for unavailable := int32(0); unavailable <= 3; unavailable++ {
				for w := int32(0); w <= 100; w++ {
					c := weightCounts(desired, surge, w)
					name := fmt.Sprintf("replicas %d surge %d unavailable %d weight %d: %+v", desired, surge, unavailable, w, c)
					if c.to < 0 || c.from < 0 || c.to+c.from > desired+surge {
						t.Fatalf("%s: more pods than %d", name, desired+surge)
					}
					if c.to+c.from < desired-unavailable || c.to+c.from < desired {
						t.Fatalf("%s: fewer pods than %d", name, desired)
					}
					room := desired >= 2 || (desired == 1 && surge >= 1)
					if room && w > 0 && c.to == 0 {
						t.Fatalf("%s: no canary pod", name)
					}
					if room && w < 100 && c.from == 0 {
						t.Fatalf("%s: no stable pod", name)
					}
					if w == 0 && c.to != 0 || w == 100 && c.from != 0 {
						t.Fatalf("%s: want only one version", name)
					}
					got := delta(w, c.to, c.to+c.from)
					for total := desired; total <= desired+min(surge, 1); total++ {
						for to := int32(0); to <= total; to++ {
							keeps := (w == 0 || to > 0) && (w == 100 || to < total)
							if room && !keeps {
								continue
							}
							if d := delta(w, to, total); d < got-1e-9 {
								t.Fatalf("%s: %d of %d is closer (%.2f < %.2f)", name, to, total, d, got)
							}
						}
					}
				}
			}
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

// rcState reads an RC's spec replicas and progress record.
func (e *env) rcState(t *testing.T, name string) (int32, deployment.Progress) {
	t.Helper()
	rc, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ptr.Deref(rc.Spec.Replicas, 0), deployment.ProgressOf(rc)
}

// recordProgress writes p as web-2's progress record, as an earlier runner
// of the rollout left it, and returns web-2.
func (e *env) recordProgress(t *testing.T, p deployment.Progress) *corev1.ReplicationController {
	t.Helper()
	rcs := e.cluster.Client.CoreV1().ReplicationControllers(ns)
	rc, err := rcs.Get(t.Context(), "web-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc, err = deployment.Update(t.Context(), rcs, rc, func(got *deployment.Progress) error {
		p.Seq, p.Runner = got.Seq, got.Runner
		*got = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// weightOf words a record's weight ("" without one).
func weightOf(p deployment.Progress) string {
	if p.Weight == nil {
		return ""
	}
	return strconv.Itoa(int(*p.Weight))
}

// promote writes a promote request on web-2 that ends the wait of step k,
// as `kubectl dc rollout promote` does.
func (e *env) promote(t *testing.T, k string) {
	t.Helper()
	n, err := strconv.Atoi(k)
	if err != nil {
		t.Fatalf("step %q: %v", k, err)
	}
	e.request(t, deployment.Request{Kind: deployment.RequestPromote, Gate: deployment.StepGate(n)})
}

// promoteAt writes a promote request on web-2 that ends the wait of gate.
func (e *env) promoteAt(t *testing.T, gate string) {
	t.Helper()
	e.request(t, deployment.Request{Kind: deployment.RequestPromote, Gate: gate})
}

// promoteFull writes a full promote request on web-2, as `kubectl dc
// rollout promote --full` does.
func (e *env) promoteFull(t *testing.T) {
	t.Helper()
	e.request(t, deployment.Request{Kind: deployment.RequestPromoteFull})
}

// request writes req, with a fresh ID, on web-2.
func (e *env) request(t *testing.T, req deployment.Request) {
	t.Helper()
	e.requests++
	req.ID = fmt.Sprintf("req-%d", e.requests)
	patch, err := deployment.RequestPatch(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Patch(context.Background(), "web-2", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
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
		if p := deployment.ProgressOf(rc); p.Wait != nil && (k == "" || p.Stage == deployment.StageSteps && strconv.Itoa(p.Step) == k) {
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
	if to, pr := e.rcState(t, "web-2"); to != 1 || weightOf(pr) != "20" {
		w := weightOf(pr)
		t.Errorf("at the first pause web-2 has %d replicas, weight %q; want 1 and 20", to, w)
	}
	if from, _ := e.rcState(t, "web-1"); from != 4 {
		t.Errorf("at the first pause web-1 has %d replicas, want 4", from)
	}
	// A promote of another step does not end this pause.
	e.promote(t, "4")
	e.promote(t, "2")
	e.waitPaused(t, "4")
	if to, _ := e.rcState(t, "web-2"); to != 3 {
		t.Errorf("at the second pause web-2 has %d replicas, want 3", to)
	}
	if from, _ := e.rcState(t, "web-1"); from != 2 {
		t.Errorf("at the second pause web-1 has %d replicas, want 2", from)
	}
	e.promote(t, "4")
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	to, pr := e.rcState(t, "web-2")
	from, _ := e.rcState(t, "web-1")
	if to != 5 || from != 0 || pr.Stage != deployment.StageFinalRoll {
		t.Errorf("ended with web-2=%d web-1=%d stage %q; want 5, 0 and the final roll", to, from, pr.Stage)
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
	if to, pr := e.rcState(t, "web-2"); to != 4 || pr.Wait != nil {
		t.Errorf("ended with web-2=%d and record %s", to, pr.Encode())
	}
}

func TestCanaryPromoteFullSkipsTheRest(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	analysis := dcv1.RollingStep{Analysis: &dcv1.Analysis{}}
	done := e.runAsync(t.Context(), steps("1", "0", weight(25), pauseUntilPromoted, analysis, weight(75), pauseUntilPromoted), 4)
	e.waitPaused(t, "2")
	e.promoteFull(t)
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if !strings.Contains(e.out.String(), "--> Promoted in full: skipping steps 3 to 5") || strings.Contains(e.out.String(), "Step 4") {
		t.Errorf("output:\n%s", e.out.String())
	}
	if to, _ := e.rcState(t, "web-2"); to != 4 {
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
	if to, _ := e.rcState(t, "web-2"); to != 1 {
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
		{"0", "1", 4, []int32{30, 70}},
		{"0", "25%", 1, []int32{50}},
		{"2", "0", 3, []int32{50, 10, 90}},
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
				if pods := old[0] + cur[0]; pods > tt.desired+surge {
					t.Errorf("after %s=%d: %d pods, more than %d", sc.RC, sc.Replicas, pods, tt.desired+surge)
				}
				if avail := old[1] + cur[1]; avail < tt.desired-unavailable {
					t.Errorf("after %s=%d: %d available, fewer than %d", sc.RC, sc.Replicas, avail, tt.desired-unavailable)
				}
			}
			for _, w := range tt.weights {
				c := weightCounts(tt.desired, surge, w)
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
// that step instead of starting over, after bringing the deployments back
// to the weight of the last setWeight before it: the earlier run's weight
// may have been undone since (here web-2 is at 0, as a fall-back leaves
// it), and a pause must never wait with no canary pods.
func TestCanaryResumesAtTheRecordedStep(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	e.to = e.recordProgress(t, deployment.Progress{Stage: deployment.StageSteps, Step: 3, Steps: 3,
		Wait: &deployment.Wait{Gate: "step-3", Reason: dcv1.PauseReasonPause, Since: metav1.NewTime(time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC))}})
	done := e.runAsync(t.Context(), steps("1", "0", weight(25), weight(50), pauseUntilPromoted), 4)
	e.waitProgress(t, "the pause at weight 50", func(p deployment.Progress) bool { return p.Wait != nil && weightOf(p) == "50" })
	if to, pr := e.rcState(t, "web-2"); to != 2 || weightOf(pr) != "50" {
		w := weightOf(pr)
		t.Errorf("at the resumed pause web-2 has %d replicas, weight %q; want 2 and 50", to, w)
	}
	if from, _ := e.rcState(t, "web-1"); from != 2 {
		t.Errorf("at the resumed pause web-1 has %d replicas, want 2", from)
	}
	e.promote(t, "3")
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	out := e.out.String()
	for _, unwanted := range []string{"Step 1 of 3", "Step 2 of 3"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("output has %q:\n%s", unwanted, out)
		}
	}
	for _, want := range []string{
		"--> Resuming at step 3 of 3: back to the weight of step 2 (setWeight 50%)",
		"--> Step 3 of 3: paused until",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if to, _ := e.rcState(t, "web-2"); to != 4 {
		t.Errorf("web-2 has %d replicas, want 4", to)
	}
}

// waitProgress waits until web-2's progress record satisfies cond.
func (e *env) waitProgress(t *testing.T, what string, cond func(deployment.Progress) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, p := e.rcState(t, "web-2"); cond(p) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, p := e.rcState(t, "web-2")
	t.Fatalf("web-2 never recorded %s; it records %s", what, p.Encode())
}

// waitReason waits until web-2 records a wait for reason.
func (e *env) waitReason(t *testing.T, reason dcv1.PauseReason) {
	t.Helper()
	e.waitProgress(t, "a wait for "+string(reason), func(p deployment.Progress) bool { return p.Wait != nil && p.Wait.Reason == reason })
}

// TestCanaryGrowsTheOldDeploymentToItsShare checks a canary whose
// DeploymentConfig's replicas were raised with the template: the old
// deployment (2 pods) grows to its share of 5 (4 at 20%) beside the new
// one's pod, instead of waiting for its pods for ever.
func TestCanaryGrowsTheOldDeploymentToItsShare(t *testing.T) {
	e := setup(t, fc.Options{}, 2, "")
	done := e.runAsync(t.Context(), steps("25%", "25%", weight(20), pauseUntilPromoted), 5)
	e.waitPaused(t, "2")
	if to, _ := e.rcState(t, "web-2"); to != 1 {
		t.Errorf("at the pause web-2 has %d replicas, want 1", to)
	}
	if from, _ := e.rcState(t, "web-1"); from != 4 {
		t.Errorf("at the pause web-1 has %d replicas, want 4", from)
	}
	e.promote(t, "2")
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
}

// inconclusiveAnalysis ends every analysis Inconclusive, as the deployer's
// runner reports it.
type inconclusiveAnalysis struct{}

func (inconclusiveAnalysis) Run(context.Context, *dcv1.Analysis, *corev1.ReplicationController, string) error {
	return fmt.Errorf(`%w: metric "errors" was inconclusive: result [0.5]`, ErrInconclusive)
}

// blockingAnalysis measures until its context ends, and says so.
type blockingAnalysis struct{ stopped chan error }

func (b blockingAnalysis) Run(ctx context.Context, _ *dcv1.Analysis, _ *corev1.ReplicationController, _ string) error {
	<-ctx.Done()
	b.stopped <- ctx.Err()
	return fmt.Errorf("analysis interrupted: %w", ctx.Err())
}

var analysisStep = dcv1.RollingStep{Analysis: &dcv1.Analysis{}}

// TestCanaryInconclusiveWaitsForPromote checks that an Inconclusive
// analysis step waits for a person, as in Argo Rollouts, instead of
// failing the rollout: the RC says why it waits, and promote goes on.
func TestCanaryInconclusiveWaitsForPromote(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	e.rollout.WithAnalysis(inconclusiveAnalysis{})
	done := e.runAsync(t.Context(), steps("1", "0", weight(25), analysisStep, weight(50)), 4)
	e.waitReason(t, dcv1.PauseReasonInconclusive)
	if _, pr := e.rcState(t, "web-2"); pr.Wait == nil || pr.Wait.Since.IsZero() {
		t.Errorf("waiting without a recorded start: %s", pr.Encode())
	}
	select {
	case err := <-done:
		t.Fatalf("the rollout ended on Inconclusive: %v\n%s", err, e.out.String())
	default:
	}
	e.promote(t, "2")
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if _, pr := e.rcState(t, "web-2"); pr.Wait != nil {
		t.Errorf("a wait is left after the promote: %s", pr.Encode())
	}
	for _, want := range []string{
		`--> step-2: analysis inconclusive: metric "errors" was inconclusive: result [0.5]`,
		"--> step-2: analysis inconclusive: waiting for 'kubectl dc rollout promote web' to go on, or cancel to abort",
		"    Promoted",
		"--> Step 3 of 3: setWeight 50%",
	} {
		if !strings.Contains(e.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, e.out.String())
		}
	}
}

// TestCanaryInconclusiveCancelAborts checks that a cancel (the deployer's
// context ends) while an Inconclusive analysis waits aborts the rollout.
func TestCanaryInconclusiveCancelAborts(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	e.rollout.WithAnalysis(inconclusiveAnalysis{})
	ctx, cancel := context.WithCancel(t.Context())
	done := e.runAsync(ctx, steps("1", "0", weight(25), analysisStep, weight(50)), 4)
	e.waitReason(t, dcv1.PauseReasonInconclusive)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if strings.Contains(e.out.String(), "Step 3 of 3") {
		t.Errorf("the rollout went on:\n%s", e.out.String())
	}
}

// TestCanaryPromoteFullStopsARunningAnalysis checks that `promote --full`
// during an analysis step stops the analysis and skips the rest.
func TestCanaryPromoteFullStopsARunningAnalysis(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	b := blockingAnalysis{stopped: make(chan error, 1)}
	e.rollout.WithAnalysis(b)
	done := e.runAsync(t.Context(), steps("1", "0", weight(25), analysisStep, weight(50), pauseUntilPromoted), 4)
	e.waitProgress(t, "step 2", func(p deployment.Progress) bool { return p.Stage == deployment.StageSteps && p.Step == 2 })
	e.promoteFull(t)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("rollout: %v\n%s", err, e.out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the analysis still runs after promote --full")
	}
	if err := <-b.stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("the analysis ended with %v, want it cancelled", err)
	}
	for _, want := range []string{
		"--> step-2: promoted in full: analysis stopped",
		"--> Promoted in full: skipping steps 3 to 4",
	} {
		if !strings.Contains(e.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, e.out.String())
		}
	}
	if to, _ := e.rcState(t, "web-2"); to != 4 {
		t.Errorf("web-2 has %d replicas, want 4", to)
	}
}

// TestCanaryHonoursAScaleMidway checks that a DeploymentConfig scaled
// during a canary (dc-controller records the new count on the running
// deployment) is honoured at the next step, as Argo Rollouts recomputes,
// and by the final roll.
func TestCanaryHonoursAScaleMidway(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	done := e.runAsync(t.Context(), steps("25%", "25%", weight(25), pauseUntilPromoted, weight(50), pauseUntilPromoted), 4)
	e.waitPaused(t, "2")
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"8"}}}`, dcv1.DesiredReplicasAnnotation)
	if _, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Patch(t.Context(), "web-2", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.promote(t, "2")
	e.waitPaused(t, "4")
	if to, _ := e.rcState(t, "web-2"); to != 4 {
		t.Errorf("at 50%% of 8 web-2 has %d replicas, want 4", to)
	}
	if from, _ := e.rcState(t, "web-1"); from != 4 {
		t.Errorf("at 50%% of 8 web-1 has %d replicas, want 4", from)
	}
	e.promote(t, "4")
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	to, _ := e.rcState(t, "web-2")
	from, _ := e.rcState(t, "web-1")
	if to != 8 || from != 0 {
		t.Errorf("ended with web-2=%d web-1=%d, want 8 and 0", to, from)
	}
	for _, want := range []string{
		"--> The DeploymentConfig now has 8 replicas (was 4): the next steps count 8",
		"--> Step 3 of 4: setWeight 50%: scaling web-2 to 4 and web-1 to 4",
		"--> Scaling up web-2 from 4 to 8, scaling down web-1 from 4 to 0",
	} {
		if !strings.Contains(e.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, e.out.String())
		}
	}
}

type passingAnalysis struct{}

func (passingAnalysis) Run(context.Context, *dcv1.Analysis, *corev1.ReplicationController, string) error {
	return nil
}

// TestCanaryResumedAnalysisClearsAnEarlierWait checks that a deployer
// started again while the earlier one waited after an Inconclusive analysis
// measures again and, when it passes, no longer shows the rollout waiting.
func TestCanaryResumedAnalysisClearsAnEarlierWait(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	e.to = e.recordProgress(t, deployment.Progress{Stage: deployment.StageSteps, Step: 2, Steps: 3,
		Wait: &deployment.Wait{Gate: "step-2", Reason: dcv1.PauseReasonInconclusive, Since: metav1.NewTime(time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC))}})
	e.rollout.WithAnalysis(passingAnalysis{})
	if _, err := e.rollout.Rolling(t.Context(), steps("1", "0", weight(25), analysisStep, weight(50)), e.from, e.to, 4); err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if _, pr := e.rcState(t, "web-2"); pr.Wait != nil {
		t.Errorf("a wait is left after the analysis passed: %s", pr.Encode())
	}
	if !strings.Contains(e.out.String(), "--> Resuming at step 2 of 3: back to the weight of step 1 (setWeight 25%)") {
		t.Errorf("output:\n%s", e.out.String())
	}
}
