package rolloutpolicy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

func intOrString(v string) *intstr.IntOrString { s := intstr.Parse(v); return &s }

// createPolicy creates a policy named fleet over the DeploymentConfigs
// labelled fleet=a.
func createPolicy(t *testing.T, ns string, spec dcv1.RolloutPolicySpec) {
	t.Helper()
	spec.Selector = metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "a"}}
	p := &dcv1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fleet"}, Spec: spec}
	if err := c.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func names(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s%02d", prefix, i))
	}
	return out
}

func shared(string) string { return "shared" }

// waitStatus waits for the policy's status to satisfy ok.
func waitStatus(t *testing.T, ns, what string, ok func(dcv1.RolloutPolicyStatus) bool) dcv1.RolloutPolicyStatus {
	t.Helper()
	var s dcv1.RolloutPolicyStatus
	waitFor(t, what, func(ctx context.Context) (bool, string, error) {
		var err error
		s, err = policyStatus(ctx, ns, "fleet")
		return err == nil && ok(s), fmt.Sprintf("running %d, waiting %d, line %v, changes %+v", s.Running, s.Waiting, lineOf(s), s.Changes), err
	})
	return s
}

// nextStarted waits for one deployment of version v that is not in seen
// to run, and returns it.
func nextStarted(t *testing.T, rw *runningWatch, seen map[string]bool, v int64) string {
	t.Helper()
	var got string
	waitFor(t, "a rollout to start", func(context.Context) (bool, string, error) {
		for _, rc := range rw.running() {
			if !seen[rc] && strings.HasSuffix(rc, fmt.Sprintf("-%d", v)) {
				got = rc
				return true, "", nil
			}
		}
		return false, fmt.Sprint(rw.running()), nil
	})
	seen[got] = true
	return got
}

// TestWavesOfFiftyFollowers: 50 DeploymentConfigs follow one ConfigMap
// under waves [1, 10%, rest] and maxConcurrent 5. Its change starts one
// rollout; the 49 others wait in line, each saying so. Once it completes
// the next five start, the first five in line; then the rest, five at a
// time, each the head of the line when a slot frees.
func TestWavesOfFiftyFollowers(t *testing.T) {
	ns := newNamespace(t)
	dcs := names("f", 50)
	rw := createFollowers(t, ns, dcs, shared)
	createPolicy(t, ns, dcv1.RolloutPolicySpec{
		MaxConcurrent: intOrString("5"),
		Waves:         []dcv1.RolloutWave{{Size: intOrString("1")}, {Size: intOrString("10%")}, {}},
	})
	waitStatus(t, ns, "the policy to select 50", func(s dcv1.RolloutPolicyStatus) bool { return s.Selected == 50 })
	rw.resetMax()
	changeConfigMap(t, ns, "shared", "2")

	seen := map[string]bool{}
	first := nextStarted(t, rw, seen, 2)
	s := waitStatus(t, ns, "49 in line behind wave 1", func(s dcv1.RolloutPolicyStatus) bool {
		return s.Waiting == 49 && s.Running == 1 && len(s.Changes) == 1 && s.Changes[0].Wave == 1
	})
	waitWaiting(t, ns, "fleet", dcv1.AwaitingWaveReason, s.Line[0].Name, s.Line[48].Name)
	if got := rw.running(); len(got) != 1 {
		t.Fatalf("wave 1 runs %v, want one rollout", got)
	}
	line := lineOf(s)
	finish(t, ns, first, corev1.PodSucceeded)

	// Wave 2: 10% of 50, the first five in line.
	var wave2 []string
	for range 5 {
		wave2 = append(wave2, dcOf(nextStarted(t, rw, seen, 2)))
	}
	slices.Sort(wave2)
	want := slices.Clone(line[:5])
	slices.Sort(want)
	if !slices.Equal(wave2, want) {
		t.Fatalf("wave 2 started %v, want the first five in line %v", wave2, want)
	}
	s = waitStatus(t, ns, "wave 2 under way", func(s dcv1.RolloutPolicyStatus) bool {
		return s.Running == 5 && s.Waiting == 44 && s.Changes[0].Wave == 2
	})
	if got := rw.running(); len(got) != 5 {
		t.Fatalf("wave 2 runs %v, want five", got)
	}
	for _, rc := range rw.running() {
		finish(t, ns, rc, corev1.PodSucceeded)
	}

	// Wave 3, the rest: five at a time, first come first served.
	for range 5 {
		nextStarted(t, rw, seen, 2)
	}
	for done := 0; done < 44; done++ {
		s = waitStatus(t, ns, "the line to settle", func(s dcv1.RolloutPolicyStatus) bool {
			return int(s.Running)+int(s.Waiting) == min(5, 44-done)+max(0, 44-done-5) && int(s.Running) == min(5, 44-done)
		})
		running := rw.running()
		finish(t, ns, running[0], corev1.PodSucceeded)
		if len(s.Line) == 0 {
			continue
		}
		if got := dcOf(nextStarted(t, rw, seen, 2)); got != s.Line[0].Name {
			t.Fatalf("%s started when a slot freed; the head of the line was %s", got, s.Line[0].Name)
		}
	}
	if got := rw.max(); got > 5 {
		t.Fatalf("%d rollouts ran at once; maxConcurrent is 5", got)
	}
	waitStatus(t, ns, "the change to end", func(s dcv1.RolloutPolicyStatus) bool {
		return s.Running == 0 && s.Waiting == 0 && len(s.Changes) == 0
	})
}

// TestFailureInFirstWaveStopsTheRest: the first wave's rollout fails; the
// later waves do not start, and say why, until the policy is resumed.
func TestFailureInFirstWaveStopsTheRest(t *testing.T) {
	ns := newNamespace(t)
	dcs := names("g", 6)
	rw := createFollowers(t, ns, dcs, shared)
	createPolicy(t, ns, dcv1.RolloutPolicySpec{
		MaxConcurrent: intOrString("2"),
		Waves:         []dcv1.RolloutWave{{Size: intOrString("1")}, {}},
	})
	waitStatus(t, ns, "the policy to select 6", func(s dcv1.RolloutPolicyStatus) bool { return s.Selected == 6 })
	changeConfigMap(t, ns, "shared", "2")
	seen := map[string]bool{}
	first := nextStarted(t, rw, seen, 2)
	waitStatus(t, ns, "5 in line", func(s dcv1.RolloutPolicyStatus) bool { return s.Waiting == 5 })
	finish(t, ns, first, corev1.PodFailed)

	s := waitStatus(t, ns, "the waves to stop", func(s dcv1.RolloutPolicyStatus) bool {
		return len(s.Changes) == 1 && s.Changes[0].Stopped != "" && s.Waiting == 5 && s.Running == 0 && len(s.Failures) == 1
	})
	for _, w := range s.Line {
		waitWaiting(t, ns, "fleet", dcv1.AwaitingWaveReason, w.Name)
		cond, err := progressing(context.Background(), ns, w.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(cond.Message, dcOf(first)) || !strings.Contains(cond.Message, "kubectl dc policy resume") {
			t.Fatalf("%s waits with %q: it should name the failed %s and the way on", w.Name, cond.Message, dcOf(first))
		}
	}
	if got := rw.running(); len(got) != 0 {
		t.Fatalf("after the failure %v run; the later waves should not start", got)
	}

	// A resume goes on: wave 2 is the rest, two at a time.
	resume(t, ns)
	rw.resetMax()
	for range 5 {
		finish(t, ns, nextStarted(t, rw, seen, 2), corev1.PodSucceeded)
	}
	if got := rw.max(); got > 2 {
		t.Fatalf("%d rollouts ran at once; maxConcurrent is 2", got)
	}
}

// TestFreezeHoldsAndReleases: a change during a freeze waits, saying
// until when; when the freeze ends (the controller's clock moves past it)
// the rollouts start.
func TestFreezeHoldsAndReleases(t *testing.T) {
	ns := newNamespace(t)
	dcs := names("h", 3)
	rw := createFollowers(t, ns, dcs, shared)
	now := clk.Now()
	end := metav1.NewTime(now.Add(time.Hour).Truncate(time.Second))
	createPolicy(t, ns, dcv1.RolloutPolicySpec{Freezes: []dcv1.RolloutFreeze{{Name: "year-end", Start: metav1.NewTime(now.Add(-time.Hour)), End: end}}})
	waitStatus(t, ns, "the policy to select 3", func(s dcv1.RolloutPolicyStatus) bool { return s.Selected == 3 })
	changeConfigMap(t, ns, "shared", "2")

	waitWaiting(t, ns, "fleet", dcv1.AwaitingWindowReason, dcs...)
	s := waitStatus(t, ns, "the freeze to hold 3", func(s dcv1.RolloutPolicyStatus) bool {
		return s.Waiting == 3 && s.NextWindow != nil
	})
	if !s.NextWindow.Equal(&end) {
		t.Fatalf("nextWindow %s, want the freeze's end %s", s.NextWindow, end)
	}
	cond, err := progressing(context.Background(), ns, dcs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cond.Message, end.UTC().Format(time.RFC3339)) || !strings.Contains(cond.Message, "year-end") {
		t.Fatalf("the waiting rollout says %q: it should name the freeze and when it starts", cond.Message)
	}
	if got := rw.running(); len(got) != 0 {
		t.Fatalf("%v run during the freeze", got)
	}

	clk.Step(2 * time.Hour)
	seen := map[string]bool{}
	for range dcs {
		finish(t, ns, nextStarted(t, rw, seen, 2), corev1.PodSucceeded)
	}
}

// TestRestartKeepsTheLine: rollouts wait in an order other than their
// names'; dc-controller restarts; they start in the order they came.
func TestRestartKeepsTheLine(t *testing.T) {
	ns := newNamespace(t)
	dcs := []string{"a", "b", "c", "d"}
	own := func(n string) string { return "cm-" + n }
	rw := createFollowers(t, ns, dcs, own)
	createPolicy(t, ns, dcv1.RolloutPolicySpec{MaxConcurrent: intOrString("1")})
	waitStatus(t, ns, "the policy to select 4", func(s dcv1.RolloutPolicyStatus) bool { return s.Selected == 4 })
	seen := map[string]bool{}
	changeConfigMap(t, ns, own("a"), "2")
	running := nextStarted(t, rw, seen, 2)
	order := []string{"d", "b", "c"}
	for i, n := range order {
		changeConfigMap(t, ns, own(n), "2")
		waitStatus(t, ns, n+" in line", func(s dcv1.RolloutPolicyStatus) bool { return slices.Equal(lineOf(s), order[:i+1]) })
	}

	restartController(t)
	for _, n := range order {
		finish(t, ns, running, corev1.PodSucceeded)
		running = nextStarted(t, rw, seen, 2)
		if dcOf(running) != n {
			t.Fatalf("after the restart %s started; the line was %v", dcOf(running), order)
		}
	}
	finish(t, ns, running, corev1.PodSucceeded)
}

// TestPausedWaiterBlocksNobody: a DeploymentConfig paused while it waits,
// and one whose template can no longer roll out (an empty image), leave the
// line at once, and the one behind them starts next.
func TestPausedWaiterBlocksNobody(t *testing.T) {
	ns := newNamespace(t)
	dcs := []string{"a", "b", "c", "d"}
	own := func(n string) string { return "cm-" + n }
	rw := createFollowers(t, ns, dcs, own)
	createPolicy(t, ns, dcv1.RolloutPolicySpec{MaxConcurrent: intOrString("1")})
	waitStatus(t, ns, "the policy to select 4", func(s dcv1.RolloutPolicyStatus) bool { return s.Selected == 4 })
	seen := map[string]bool{}
	changeConfigMap(t, ns, own("a"), "2")
	running := nextStarted(t, rw, seen, 2)
	for i, n := range []string{"b", "c", "d"} {
		changeConfigMap(t, ns, own(n), "2")
		waitStatus(t, ns, n+" in line", func(s dcv1.RolloutPolicyStatus) bool { return len(s.Line) == i+1 })
	}
	waitWaiting(t, ns, "fleet", dcv1.RolloutQueuedReason, "b", "c", "d")

	updateDC(t, ns, "b", func(dc *dcv1.DeploymentConfig) { dc.Spec.Paused = true })
	updateDC(t, ns, "c", func(dc *dcv1.DeploymentConfig) { dc.Spec.Template.Spec.Containers[0].Image = " " })
	waitStatus(t, ns, "b and c out of line", func(s dcv1.RolloutPolicyStatus) bool { return slices.Equal(lineOf(s), []string{"d"}) })
	finish(t, ns, running, corev1.PodSucceeded)
	if got := dcOf(nextStarted(t, rw, seen, 2)); got != "d" {
		t.Fatalf("%s started after a; d was next in line once b was paused and c emptied", got)
	}
	cond, err := progressing(context.Background(), ns, "b")
	if err != nil {
		t.Fatal(err)
	}
	if cond.Reason != dcv1.PausedConfigReason {
		t.Fatalf("paused b says %s: %s", cond.Reason, cond.Message)
	}
	for _, rc := range []string{deployment.Name("b", 2), deployment.Name("c", 2), deployment.Name("c", 3)} {
		if _, err := getRC(ns, rc); err == nil {
			t.Fatalf("%s was created; b is paused and c has an empty image", rc)
		}
	}
}

// updateDC changes a DeploymentConfig, retrying on conflicts.
func updateDC(t *testing.T, ns, name string, change func(*dcv1.DeploymentConfig)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dc := &dcv1.DeploymentConfig{}
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, dc); err != nil {
			return err
		}
		change(dc)
		return c.Update(context.Background(), dc)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func getRC(ns, name string) (*corev1.ReplicationController, error) {
	rc := &corev1.ReplicationController{}
	err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, rc)
	return rc, err
}

// TestCircuitBreakerOpens: two failed rollouts within the period open the
// breaker: no other rollout of the policy starts, each says why, until the
// policy is resumed.
func TestCircuitBreakerOpens(t *testing.T) {
	ns := newNamespace(t)
	dcs := []string{"a", "b", "c"}
	own := func(n string) string { return "cm-" + n }
	rw := createFollowers(t, ns, dcs, own)
	createPolicy(t, ns, dcv1.RolloutPolicySpec{CircuitBreaker: &dcv1.RolloutCircuitBreaker{MaxFailures: intstr.FromInt32(2), Period: &metav1.Duration{Duration: time.Hour}}})
	waitStatus(t, ns, "the policy to select 3", func(s dcv1.RolloutPolicyStatus) bool { return s.Selected == 3 })
	seen := map[string]bool{}
	for _, n := range []string{"a", "b"} {
		changeConfigMap(t, ns, own(n), "2")
		finish(t, ns, nextStarted(t, rw, seen, 2), corev1.PodFailed)
	}
	waitStatus(t, ns, "two failures", func(s dcv1.RolloutPolicyStatus) bool { return len(s.Failures) == 2 })
	changeConfigMap(t, ns, own("c"), "2")
	waitWaiting(t, ns, "fleet", dcv1.CircuitOpenReason, "c")
	s := waitStatus(t, ns, "the breaker to hold c", func(s dcv1.RolloutPolicyStatus) bool { return slices.Equal(lineOf(s), []string{"c"}) })
	if got := rw.running(); len(got) != 0 {
		t.Fatalf("%v run while the breaker is open", got)
	}
	if c := holdingReason(s); c != dcv1.CircuitOpenReason {
		t.Fatalf("the policy's Holding condition says %q, want %s", c, dcv1.CircuitOpenReason)
	}
	resume(t, ns)
	finish(t, ns, nextStarted(t, rw, seen, 2), corev1.PodSucceeded)
}

// resume does what `kubectl dc policy resume fleet` does, a second after
// the controller's now (the annotation has seconds).
func resume(t *testing.T, ns string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &dcv1.RolloutPolicy{}
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "fleet"}, p); err != nil {
			return err
		}
		p.Annotations = map[string]string{dcv1.PolicyResumeAnnotation: clk.Now().Add(time.Second).Format(time.RFC3339)}
		return c.Update(context.Background(), p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// holdingReason is the reason of a policy's Holding condition when True.
func holdingReason(s dcv1.RolloutPolicyStatus) string {
	for _, c := range s.Conditions {
		if c.Type == dcv1.PolicyHolding && c.Status == metav1.ConditionTrue {
			return c.Reason
		}
	}
	return ""
}

// TestValidation: the API server refuses policies it could not follow, and
// says which field and what was expected.
func TestValidation(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name string
		spec dcv1.RolloutPolicySpec
		want string
	}{
		{"a zero maxConcurrent", dcv1.RolloutPolicySpec{MaxConcurrent: intOrString("0")}, "spec.maxConcurrent: Invalid value"},
		{"a percentage above 100", dcv1.RolloutPolicySpec{MaxConcurrent: intOrString("150%")}, "spec.maxConcurrent"},
		{"a wave without size before the last", dcv1.RolloutPolicySpec{Waves: []dcv1.RolloutWave{{}, {Size: intOrString("1")}}}, "only the last wave may omit size"},
		{"a window of 25 o'clock", dcv1.RolloutPolicySpec{Windows: []dcv1.RolloutWindow{{Start: "25:00", End: "02:00"}}}, "spec.windows[0].start"},
		{"a window that both is weekly and cron", dcv1.RolloutPolicySpec{Windows: []dcv1.RolloutWindow{{Start: "09:00", End: "17:00", Cron: "0 9 * * *"}}}, "set either start and end (and days), or cron and duration"},
		{"a cron window of two weeks", dcv1.RolloutPolicySpec{Windows: []dcv1.RolloutWindow{{Cron: "0 9 * * *", Duration: &metav1.Duration{Duration: 336 * time.Hour}}}}, "at most 168h"},
		{"a freeze that ends before it starts", dcv1.RolloutPolicySpec{Freezes: []dcv1.RolloutFreeze{{Start: metav1.NewTime(clk.Now()), End: metav1.NewTime(clk.Now().Add(-time.Hour))}}}, "spec.freezes[0].end: Invalid value"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Selector = metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "a"}}
			p := &dcv1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%d", i)}, Spec: tc.spec}
			err := c.Create(context.Background(), p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v; want an error with %q", err, tc.want)
			}
		})
	}
	ok := &dcv1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ok"}, Spec: dcv1.RolloutPolicySpec{
		MaxConcurrent: intOrString("10%"),
		Waves:         []dcv1.RolloutWave{{Size: intOrString("1"), Soak: &metav1.Duration{Duration: time.Minute}}, {}},
		Windows:       []dcv1.RolloutWindow{{Days: []dcv1.Weekday{"Monday"}, Start: "22:00", End: "02:00"}, {Cron: "0 9 * * 1-5", Duration: &metav1.Duration{Duration: 8 * time.Hour}}},
	}}
	if err := c.Create(context.Background(), ok); err != nil {
		t.Fatalf("a valid policy was refused: %v", err)
	}
}
