package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// previousFormat is the last commit whose dc-controller kept a rollout's
// progress in separate annotations rather than in one record.
const previousFormat = "535057d29515be50b924deef2d98bfb0ea74d4ef"

// buildPrevious builds dc-local from commit, from the repository's own
// history, offline, with the module and build caches the suite has.
func buildPrevious(t *testing.T, commit string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	tree, err := exec.CommandContext(t.Context(), "git", "-C", root, "archive", commit).Output()
	if err != nil {
		t.Fatalf("git archive %s: %v (the test needs the repository's history: a full clone)", commit, err)
	}
	untar := exec.CommandContext(t.Context(), "tar", "-x", "-C", src)
	untar.Stdin = bytes.NewReader(tree)
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("unpacking %s: %v\n%s", commit, err, out)
	}
	bin := filepath.Join(t.TempDir(), "dc-local")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/dc-local")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building dc-local at %s: %v\n%s", commit, err, out)
	}
	return bin
}

// TestUpgradeWithRolloutsInFlight starts rollouts with the dc-controller
// of the release before the progress record, in dc-controller: a canary
// paused at a step, a canary in an analysis step, and a blue-green rollout
// serving on trial in its postPromotionAnalysis. dc-local serve of that
// release is then killed and today's started in its place, as an upgrade
// replaces the controller. Each rollout goes on where it was: the paused
// canary needs one promote and never goes back to its first step, the
// analysis completes, the blue-green rollout's active Service never goes
// back to the old version, and each deployment's progress is then in the
// record alone.
func TestUpgradeWithRolloutsInFlight(t *testing.T) {
	previous := slices.Clone(suite.serverCommand)
	previous[0] = buildPrevious(t, previousFormat)
	replaceServer(t, previous)
	upgraded := false
	t.Cleanup(func() {
		if !upgraded {
			replaceServer(t, suite.serverCommand)
		}
	})

	paused, analysing, trial := dcNamespace(t), dcNamespace(t), dcNamespace(t)
	for _, ns := range []string{analysing, trial} {
		suite.exporter.SetTraffic(ns, "web-1", 10, 0)
		suite.exporter.SetTraffic(ns, "web-2", 10, 0)
	}
	createDC(t, paused, inController(newDC("web", 3, canary(setWeight(34), pauseStep(0)))))
	createDC(t, analysing, inController(newDC("web", 3, canary(setWeight(34), dcv1.RollingStep{Analysis: errorRateAnalysis(10, 2*time.Second)}))))
	blueGreenServices(t, trial)
	now := int32(0)
	createDC(t, trial, inController(blueGreenDC(2, dcv1.BlueGreenDeploymentStrategyParams{AutoPromotionSeconds: &now, PostPromotionAnalysis: errorRateAnalysis(10, 2*time.Second)})))
	for _, ns := range []string{paused, analysing, trial} {
		requireComplete(t, ns, "web", 1)
	}
	waitRated(t, suite.prometheus.URL(), analysing, "web-2")
	waitRated(t, suite.prometheus.URL(), trial, "web-2")
	active := watchSelector(t, trial, "web")
	for _, ns := range []string{paused, analysing, trial} {
		rollNext(t, ns, 2)
	}
	waitPausedAt(t, paused, "web-2", 2)
	waitProgress(t, analysing, "web-2", "to run its step 2 analysis", func(p deployment.Progress) bool {
		return p.Stage == deployment.StageSteps && p.Step == 2
	})
	waitProgress(t, trial, "web-2", "to serve on trial", func(p deployment.Progress) bool { return p.Switch == deployment.SwitchTrial })
	replicas := map[string]*rollout.History[int32]{}
	for _, ns := range []string{paused, analysing} {
		replicas[ns] = watchReplicas(t, ns, "web-2")
	}
	for _, ns := range []string{paused, analysing, trial} {
		if rc := getRC(t, ns, "web-2"); !deployment.RunsInController(rc) {
			t.Fatalf("%s/web-2 does not run in dc-controller", ns)
		}
	}

	replaceServer(t, suite.serverCommand)
	upgraded = true

	mustDC(t, paused, "rollout", "promote", "web")
	for _, ns := range []string{paused, analysing, trial} {
		rc := requireComplete(t, ns, "web", 2)
		for _, key := range []string{dcv1.KeyPrefix + "deployment.step", dcv1.KeyPrefix + "deployment.switched"} {
			if v, ok := rc.Annotations[key]; ok {
				t.Errorf("%s/web-2 still has the old key %s=%q", ns, key, v)
			}
		}
		if _, ok := rc.Annotations[dcv1.RolloutProgressAnnotation]; !ok {
			t.Errorf("%s/web-2 has no progress record", ns)
		}
	}
	for ns, h := range replicas {
		counts := h.Stop()
		for i := 1; i < len(counts); i++ {
			if counts[i] < counts[i-1] {
				t.Errorf("%s/web-2 was scaled down after the upgrade: replicas %v", ns, counts)
				break
			}
		}
	}
	if p := deployment.ProgressOf(getRC(t, paused, "web-2")); len(p.Consumed) != 1 {
		t.Errorf("the paused canary consumed %d promote requests, want 1: %s", len(p.Consumed), p.Encode())
	}
	checkNeverBack(t, active, "web-1", "web-2")
	if p := deployment.ProgressOf(getRC(t, trial, "web-2")); p.Switch != deployment.SwitchFinal {
		t.Errorf("the blue-green rollout ended switched %q, want final", p.Switch)
	}
}

// waitProgress waits until deployment rc's progress record satisfies cond.
func waitProgress(t *testing.T, ns, rc, what string, cond func(deployment.Progress) bool) {
	t.Helper()
	waitFor(t, ns+"/"+rc+" "+what, rolloutTimeout, func(ctx context.Context) (bool, error) {
		got, err := clientset().CoreV1().ReplicationControllers(ns).Get(ctx, rc, metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		return cond(deployment.ProgressOf(got)), nil
	})
}
