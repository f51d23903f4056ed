package strategy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// scriptedBackground gives each round of the background analysis the
// verdict the test sends on rounds; other analyses pass.
type scriptedBackground struct {
	rounds  chan error
	running atomic.Int32
	total   atomic.Int32
	// count is the count of the last round's analysis.
	count atomic.Int32
}

func newScriptedBackground() *scriptedBackground {
	return &scriptedBackground{rounds: make(chan error)}
}

func (s *scriptedBackground) Run(ctx context.Context, a *dcv1.Analysis, _ *corev1.ReplicationController, label string) error {
	if label != BackgroundLabel {
		return nil
	}
	s.running.Add(1)
	defer s.running.Add(-1)
	s.total.Add(1)
	if a.Count != nil {
		s.count.Store(*a.Count)
	}
	select {
	case <-ctx.Done():
		return fmt.Errorf("analysis interrupted: %w", ctx.Err())
	case err := <-s.rounds:
		return err
	}
}

// verdict hands the next round its verdict.
func (s *scriptedBackground) verdict(t *testing.T, err error) {
	t.Helper()
	select {
	case s.rounds <- err:
	case <-time.After(10 * time.Second):
		t.Fatal("no round of the background analysis is running")
	}
}

// withBackground is a canary with a background analysis.
func withBackground(p *dcv1.RollingDeploymentStrategyParams) *dcv1.RollingDeploymentStrategyParams {
	p.Analysis = &dcv1.Analysis{}
	return p
}

// TestCanaryBackgroundFailureEndsTheRollout checks that a failed background
// analysis ends the rollout at once, during a pause that would otherwise
// wait for ever, with the analysis's message.
func TestCanaryBackgroundFailureEndsTheRollout(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	bg := newScriptedBackground()
	e.rollout.WithAnalysis(bg)
	done := e.runAsync(t.Context(), withBackground(steps("1", "0", weight(25), pauseUntilPromoted, weight(50))), 4)
	e.waitPaused(t, "2")
	bg.verdict(t, errors.New(`analysis Failed: metric "errors" failed 1 measurement(s)`))
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the rollout goes on after the background analysis failed")
	}
	if err == nil || err.Error() != `background analysis: analysis Failed: metric "errors" failed 1 measurement(s)` {
		t.Fatalf("err = %v", err)
	}
	if to, _ := e.rcState(t, "web-2"); to != 1 {
		t.Errorf("web-2 has %d replicas, want 1 (left at step 1 for the fall-back)", to)
	}
	if strings.Contains(e.out.String(), "Step 3 of 3") {
		t.Errorf("the steps went on:\n%s", e.out.String())
	}
}

// TestCanaryBackgroundRunsUntilFullWeight checks that a background
// analysis without count measures round after round beside the steps and
// is stopped once the rollout reaches 100%.
func TestCanaryBackgroundRunsUntilFullWeight(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	bg := newScriptedBackground()
	e.rollout.WithAnalysis(bg)
	done := e.runAsync(t.Context(), withBackground(steps("1", "0", weight(50), pauseUntilPromoted)), 4)
	e.waitPaused(t, "2")
	bg.verdict(t, nil)
	bg.verdict(t, nil)
	e.promote(t, "2")
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if n := bg.running.Load(); n != 0 {
		t.Errorf("%d rounds still run after the rollout", n)
	}
	if n := bg.total.Load(); n < 3 {
		t.Errorf("%d rounds, want at least 3 (two passed, one stopped)", n)
	}
	if to, _ := e.rcState(t, "web-2"); to != 4 {
		t.Errorf("web-2 has %d replicas, want 4", to)
	}
	// One long run, not a run per measurement: its limits count over the
	// whole rollout, and it is recorded once.
	if n := bg.count.Load(); n != endlessCount {
		t.Errorf("the background analysis ran with count %d, want %d", n, endlessCount)
	}
	if !strings.Contains(e.out.String(), "--> background: analysis runs until the rollout reaches 100%") {
		t.Errorf("output:\n%s", e.out.String())
	}
}

// TestCanaryBackgroundInconclusiveWaitsForPromote checks that an
// Inconclusive background analysis makes the rollout wait for a person at
// the end of the current step; promote goes on.
func TestCanaryBackgroundInconclusiveWaitsForPromote(t *testing.T) {
	e := setup(t, fc.Options{}, 4, "")
	bg := newScriptedBackground()
	e.rollout.WithAnalysis(bg)
	done := e.runAsync(t.Context(), withBackground(steps("1", "0", weight(25), pauseUntilPromoted, weight(50))), 4)
	e.waitPaused(t, "2")
	bg.verdict(t, fmt.Errorf(`%w: metric "errors" was inconclusive`, ErrInconclusive))
	e.promote(t, "2")
	// The pause's promote may end step 2 before the verdict is taken in;
	// the rollout then waits after step 3.
	e.waitReason(t, dcv1.PauseReasonInconclusive)
	_, pr := e.rcState(t, "web-2")
	if pr.Wait.Gate != deployment.BackgroundGate(pr.Step) {
		t.Errorf("the rollout waits at gate %q, want %q", pr.Wait.Gate, deployment.BackgroundGate(pr.Step))
	}
	select {
	case err := <-done:
		t.Fatalf("the rollout ended while waiting: %v\n%s", err, e.out.String())
	default:
	}
	e.promoteAt(t, pr.Wait.Gate)
	if err := <-done; err != nil {
		t.Fatalf("rollout: %v\n%s", err, e.out.String())
	}
	if !strings.Contains(e.out.String(), "--> background: analysis inconclusive: waiting for 'kubectl dc rollout promote web' to go on, or cancel to abort") {
		t.Errorf("output:\n%s", e.out.String())
	}
}
