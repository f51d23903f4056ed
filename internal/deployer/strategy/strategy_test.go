package strategy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
	"github.com/deployconfig/deployconfig/internal/deployer/scaler"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

const ns = "shop"

// hookLog records hooks in the rollout's output, so tests see their order
// among the rollout's own lines, and fails the ones it is told to.
type hookLog struct {
	out   *bytes.Buffer
	fails map[string]bool
}

func (h *hookLog) Run(_ context.Context, _ *dcv1.LifecycleHook, rc *corev1.ReplicationController, hookType string) error {
	fmt.Fprintf(h.out, "[%s hook of %s]\n", hookType, rc.Name)
	if h.fails[hookType] {
		return fmt.Errorf("%s hook failed: boom", hookType)
	}
	return nil
}

var someHook = &dcv1.LifecycleHook{FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort, ExecNewPod: &dcv1.ExecNewPodHook{Command: []string{"true"}}}

// newRC makes the deployment of version v of DeploymentConfig web.
func newRC(t *testing.T, v int64) *corev1.ReplicationController {
	t.Helper()
	dc := &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "dc-uid"},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: 4,
			Selector: map[string]string{"app": "web"},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: fmt.Sprintf("web:%d", v)}}},
			},
		},
		Status: dcv1.DeploymentConfigStatus{LatestVersion: v},
	}
	rc, err := deployment.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

type env struct {
	cluster *fc.Cluster
	out     *bytes.Buffer
	rollout *Rollout
	from    *corev1.ReplicationController
	to      *corev1.ReplicationController
	// requests counts the promote requests written, for their IDs.
	requests int
}

// setup makes web-2 (to, at 0) and, when fromReplicas >= 0, web-1 (from)
// running fromReplicas available pods.
func setup(t *testing.T, opts fc.Options, fromReplicas int32, until string, failHooks ...string) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	to := newRC(t, 2)
	objects := []runtime.Object{to}
	var from *corev1.ReplicationController
	if fromReplicas >= 0 {
		from = newRC(t, 1)
		objects = append(objects, from)
	}
	cluster := fc.New(ctx, opts, objects...)
	t.Cleanup(func() { cancel(); cluster.Wait() })
	s := scaler.New(cluster.Client, ns)
	if from != nil && fromReplicas > 0 {
		// Bring the old deployment up before the test, as the earlier
		// rollout left it; the manager makes it available at once.
		var err error
		if from, err = s.Scale(ctx, from.Name, fromReplicas, time.Second); err != nil {
			t.Fatal(err)
		}
		if err := cluster.SetAvailable(from.Name, fromReplicas); err != nil {
			t.Fatal(err)
		}
		if from, err = s.Get(ctx, from.Name); err != nil {
			t.Fatal(err)
		}
	}
	u, err := ParseUntil(until)
	if err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	fails := map[string]bool{}
	for _, h := range failHooks {
		fails[h] = true
	}
	r := New(s, &hookLog{out: out, fails: fails}, out, u)
	r.pause = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	return &env{cluster: cluster, out: out, rollout: r, from: from, to: to}
}

// scalesSince returns the scale operations after the setup's, as "rc=n".
func (e *env) scales(skip int) string {
	var parts []string
	for _, s := range e.cluster.Scales()[skip:] {
		parts = append(parts, fmt.Sprintf("%s=%d", s.RC, s.Replicas))
	}
	return strings.Join(parts, " ")
}

func lines(s ...string) string { return strings.Join(s, "\n") + "\n" }

func TestRecreate(t *testing.T) {
	hooks := &dcv1.RecreateDeploymentStrategyParams{Pre: someHook, Mid: someHook, Post: someHook, TimeoutSeconds: ptr.To[int64](5)}
	tests := []struct {
		name       string
		from       int32
		desired    int32
		until      string
		failHooks  []string
		opts       fc.Options
		wantOut    string
		wantScales string
		wantErr    string
		wantStop   bool
	}{
		{
			name:       "first rollout",
			from:       -1,
			desired:    3,
			wantOut:    lines("[pre hook of web-2]", "[mid hook of web-2]", "--> Scaling web-2 to 3", "[post hook of web-2]"),
			wantScales: "web-2=3",
		},
		{
			name:    "replacing a previous deployment",
			from:    3,
			desired: 3,
			wantOut: lines("[pre hook of web-2]", "--> Scaling web-1 down to zero", "[mid hook of web-2]",
				"--> Scaling web-2 to 1", "--> Scaling web-2 to 3", "[post hook of web-2]"),
			wantScales: "web-1=0 web-2=1 web-2=3",
		},
		{
			name:       "a scaled-down previous deployment",
			from:       0,
			desired:    2,
			wantOut:    lines("[pre hook of web-2]", "[mid hook of web-2]", "--> Scaling web-2 to 1", "--> Scaling web-2 to 2", "[post hook of web-2]"),
			wantScales: "web-2=1 web-2=2",
		},
		{
			name:       "zero desired replicas",
			from:       2,
			desired:    0,
			wantOut:    lines("[pre hook of web-2]", "--> Scaling web-1 down to zero", "[mid hook of web-2]", "[post hook of web-2]"),
			wantScales: "web-1=0",
		},
		{
			name:       "pre hook failure stops everything",
			from:       3,
			desired:    3,
			failHooks:  []string{"pre"},
			wantOut:    lines("[pre hook of web-2]"),
			wantErr:    "pre hook failed: boom",
			wantScales: "",
		},
		{
			name:       "mid hook failure leaves the old deployment down",
			from:       3,
			desired:    3,
			failHooks:  []string{"mid"},
			wantOut:    lines("[pre hook of web-2]", "--> Scaling web-1 down to zero", "[mid hook of web-2]"),
			wantErr:    "mid hook failed: boom",
			wantScales: "web-1=0",
		},
		{
			name:     "until pre",
			from:     3,
			desired:  3,
			until:    "pre",
			wantOut:  lines("[pre hook of web-2]", "--> Reached pre"),
			wantStop: true,
		},
		{
			name:       "until 0%",
			from:       3,
			desired:    3,
			until:      "0%",
			wantOut:    lines("[pre hook of web-2]", "--> Scaling web-1 down to zero", "--> Reached 0%"),
			wantScales: "web-1=0",
			wantStop:   true,
		},
		{
			name:       "until mid",
			from:       3,
			desired:    3,
			until:      "mid",
			wantOut:    lines("[pre hook of web-2]", "--> Scaling web-1 down to zero", "[mid hook of web-2]", "--> Reached mid"),
			wantScales: "web-1=0",
			wantStop:   true,
		},
		{
			name:    "until 50% stops after the first pod",
			from:    3,
			desired: 3,
			until:   "50%",
			wantOut: lines("[pre hook of web-2]", "--> Scaling web-1 down to zero", "[mid hook of web-2]",
				"--> Scaling web-2 to 1", "--> Reached 50%"),
			wantScales: "web-1=0 web-2=1",
			wantStop:   true,
		},
		{
			name:    "until 100% stops before the post hook",
			from:    3,
			desired: 3,
			until:   "100%",
			wantOut: lines("[pre hook of web-2]", "--> Scaling web-1 down to zero", "[mid hook of web-2]",
				"--> Scaling web-2 to 1", "--> Scaling web-2 to 3", "--> Reached 100%"),
			wantScales: "web-1=0 web-2=1 web-2=3",
			wantStop:   true,
		},
		{
			name:       "until 50% on a first rollout stops when all are up",
			from:       -1,
			desired:    2,
			until:      "50%",
			wantOut:    lines("[pre hook of web-2]", "[mid hook of web-2]", "--> Scaling web-2 to 2", "--> Reached 50%"),
			wantScales: "web-2=2",
			wantStop:   true,
		},
		{
			name:       "pods that never become available",
			from:       -1,
			desired:    2,
			opts:       fc.Options{NeverAvailable: []string{"web-2"}},
			wantOut:    lines("[pre hook of web-2]", "[mid hook of web-2]", "--> Scaling web-2 to 2"),
			wantErr:    "pods for rc 'shop/web-2' took longer than 1 seconds to become available",
			wantScales: "web-2=2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t, tt.opts, tt.from, tt.until, tt.failHooks...)
			before := len(e.cluster.Scales())
			params := hooks
			if tt.opts.NeverAvailable != nil {
				params = &dcv1.RecreateDeploymentStrategyParams{Pre: someHook, Mid: someHook, Post: someHook, TimeoutSeconds: ptr.To[int64](1)}
			}
			outcome, err := e.rollout.Recreate(t.Context(), params, e.from, e.to, tt.desired)
			checkResult(t, err, tt.wantErr, outcome, tt.wantStop)
			if e.out.String() != tt.wantOut {
				t.Errorf("output:\n%s\nwant:\n%s", e.out.String(), tt.wantOut)
			}
			if got := e.scales(before); got != tt.wantScales {
				t.Errorf("scales %q, want %q", got, tt.wantScales)
			}
		})
	}
}

func checkResult(t *testing.T, err error, wantErr string, outcome Outcome, wantStop bool) {
	t.Helper()
	if wantErr == "" && err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if wantErr != "" && (err == nil || err.Error() != wantErr) {
		t.Fatalf("err = %v, want %q", err, wantErr)
	}
	if (outcome == Stopped) != wantStop {
		t.Errorf("outcome %v, want stopped %t", outcome, wantStop)
	}
}

// TestRecordsFinalReplicas checks that a rollout records each RC's replica
// count once, where the deployer leaves it, however many steps it takes.
func TestRecordsFinalReplicas(t *testing.T) {
	tests := []struct {
		name    string
		rollout func(e *env) error
	}{
		{"rolling, one pod at a time", func(e *env) error {
			_, err := e.rollout.Rolling(t.Context(), rolling("1", "0", 5), e.from, e.to, 3)
			return err
		}},
		{"recreate, one pod first", func(e *env) error {
			_, err := e.rollout.Recreate(t.Context(), nil, e.from, e.to, 3)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t, fc.Options{}, 3, "")
			before := len(e.cluster.Client.Actions())
			if err := tt.rollout(e); err != nil {
				t.Fatal(err)
			}
			records := map[string]int{}
			for _, a := range e.cluster.Client.Actions()[before:] {
				if p, ok := a.(k8stesting.PatchAction); ok && strings.Contains(string(p.GetPatch()), dcv1.DeploymentReplicasAnnotation) {
					records[p.GetName()]++
				}
			}
			if records["web-1"] != 1 || records["web-2"] != 1 || len(records) != 2 {
				t.Errorf("replica count records per RC %v, want one for each of web-1 and web-2", records)
			}
			for name, want := range map[string]string{"web-1": "0", "web-2": "3"} {
				rc, err := e.cluster.Client.CoreV1().ReplicationControllers(ns).Get(t.Context(), name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got := rc.Annotations[dcv1.DeploymentReplicasAnnotation]; got != want {
					t.Errorf("%s: %s = %q, want %q", name, dcv1.DeploymentReplicasAnnotation, got, want)
				}
			}
			pods, err := e.cluster.Client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "deployment=web-1"})
			if err != nil || len(pods.Items) != 0 {
				t.Errorf("old pods left: %v, %v", pods, err)
			}
		})
	}
}

func rolling(surge, unavailable string, timeout int64) *dcv1.RollingDeploymentStrategyParams {
	return &dcv1.RollingDeploymentStrategyParams{
		MaxSurge:       ptr.To(intstr.Parse(surge)),
		MaxUnavailable: ptr.To(intstr.Parse(unavailable)),
		TimeoutSeconds: ptr.To(timeout),
		Pre:            someHook,
		Post:           someHook,
	}
}

// TestRollingBounds runs rolling updates with pods that take a while to
// become available, and checks after every scale that the pods never exceed
// desired+surge and the available ones never drop below desired-unavailable.
func TestRollingBounds(t *testing.T) {
	tests := []struct {
		surge, unavailable string
		from, desired      int32
	}{
		{"25%", "25%", 4, 4},
		{"25%", "25%", 3, 3},
		{"25%", "25%", 1, 1},
		{"0", "1", 3, 3},
		{"1", "0", 3, 3},
		{"100%", "0", 2, 2},
		{"50%", "50%", 10, 10},
		{"2", "0", 2, 5},
		{"1", "1", 5, 2},
		{"0%", "100%", 3, 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("surge %s unavailable %s from %d to %d", tt.surge, tt.unavailable, tt.from, tt.desired), func(t *testing.T) {
			e := setup(t, fc.Options{AvailableAfter: 5 * time.Millisecond}, tt.from, "")
			before := len(e.cluster.Scales())
			params := rolling(tt.surge, tt.unavailable, 10)
			outcome, err := e.rollout.Rolling(t.Context(), params, e.from, e.to, tt.desired)
			t.Log(e.out.String(), e.cluster.Scales())
			checkResult(t, err, "", outcome, false)
			surge, unavailable, _ := Fenceposts(params.MaxSurge, params.MaxUnavailable, tt.desired)
			// While the old deployment has more pods than desired, the
			// bound is what it had: the rollout never adds to an excess.
			maxPods := max(tt.desired+surge, tt.from)
			minAvail := min(tt.desired-unavailable, tt.from)
			for _, s := range e.cluster.Scales()[before:] {
				old, cur := s.After["web-1"], s.After["web-2"]
				if pods := old[0] + cur[0]; pods > maxPods {
					t.Errorf("after %s=%d: %d pods, more than %d", s.RC, s.Replicas, pods, maxPods)
				}
				if avail := old[1] + cur[1]; avail < minAvail {
					t.Errorf("after %s=%d: %d available, fewer than %d", s.RC, s.Replicas, avail, minAvail)
				}
			}
			last := e.cluster.Scales()[len(e.cluster.Scales())-1].After
			if last["web-1"][0] != 0 || last["web-2"][0] != tt.desired {
				t.Errorf("ended with web-1=%d web-2=%d", last["web-1"][0], last["web-2"][0])
			}
			out := e.out.String()
			wantFirst := fmt.Sprintf("[pre hook of web-2]\n--> Scaling up web-2 from 0 to %d, scaling down web-1 from %d to 0 (keep %d pods available, don't exceed %d pods)\n",
				tt.desired, tt.from, max(tt.desired-unavailable, 0), tt.desired+surge)
			if !strings.HasPrefix(out, wantFirst) || !strings.HasSuffix(out, "[post hook of web-2]\n") {
				t.Errorf("output:\n%s\nwant it to start with:\n%s", out, wantFirst)
			}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n")[2:] {
				if !strings.HasPrefix(line, "    Scaling web-2 up to ") && !strings.HasPrefix(line, "    Scaling web-1 down to ") && line != "[post hook of web-2]" {
					t.Errorf("unexpected line %q", line)
				}
			}
		})
	}
}

func TestRolling(t *testing.T) {
	tests := []struct {
		name      string
		from      int32
		desired   int32
		params    *dcv1.RollingDeploymentStrategyParams
		until     string
		failHooks []string
		opts      fc.Options
		wantOut   string
		wantErr   string
		wantStop  bool
	}{
		{
			name:    "first rollout goes as Recreate without mid",
			from:    -1,
			desired: 3,
			params:  rolling("25%", "25%", 5),
			wantOut: lines("[pre hook of web-2]", "--> Scaling web-2 to 3", "[post hook of web-2]"),
		},
		{
			name:    "step by step",
			from:    2,
			desired: 2,
			params:  rolling("1", "0", 5),
			wantOut: lines("[pre hook of web-2]",
				"--> Scaling up web-2 from 0 to 2, scaling down web-1 from 2 to 0 (keep 2 pods available, don't exceed 3 pods)",
				"    Scaling web-2 up to 1", "    Scaling web-1 down to 1",
				"    Scaling web-2 up to 2", "    Scaling web-1 down to 0",
				"[post hook of web-2]"),
		},
		{
			name:     "until 50%",
			from:     4,
			desired:  4,
			params:   rolling("1", "0", 5),
			until:    "50%",
			wantOut:  lines("[pre hook of web-2]", "--> Scaling up web-2 from 0 to 4, scaling down web-1 from 4 to 0 (keep 4 pods available, don't exceed 5 pods)", "    Scaling web-2 up to 1", "    Scaling web-1 down to 3", "    Scaling web-2 up to 2", "--> Reached 50%"),
			wantStop: true,
		},
		{
			name:     "until mid stops after pre",
			from:     2,
			desired:  2,
			params:   rolling("1", "0", 5),
			until:    "mid",
			wantOut:  lines("[pre hook of web-2]", "--> Reached mid"),
			wantStop: true,
		},
		{
			name:     "until 100% stops before post",
			from:     1,
			desired:  1,
			params:   rolling("1", "0", 5),
			until:    "100%",
			wantOut:  lines("[pre hook of web-2]", "--> Scaling up web-2 from 0 to 1, scaling down web-1 from 1 to 0 (keep 1 pods available, don't exceed 2 pods)", "    Scaling web-2 up to 1", "    Scaling web-1 down to 0", "--> Reached 100%"),
			wantStop: true,
		},
		{
			name:      "pre hook failure",
			from:      2,
			desired:   2,
			params:    rolling("1", "0", 5),
			failHooks: []string{"pre"},
			wantOut:   lines("[pre hook of web-2]"),
			wantErr:   "pre hook failed: boom",
		},
		{
			name:    "no progress within the timeout",
			from:    2,
			desired: 2,
			params:  rolling("1", "0", 1),
			opts:    fc.Options{NeverAvailable: []string{"web-2"}},
			wantOut: lines("[pre hook of web-2]",
				"--> Scaling up web-2 from 0 to 2, scaling down web-1 from 2 to 0 (keep 2 pods available, don't exceed 3 pods)",
				"    Scaling web-2 up to 1"),
			wantErr: "timed out waiting for any update progress to be made",
		},
		{
			name:    "new pods never available with room to finish: acceptance fails",
			from:    1,
			desired: 1,
			params:  rolling("0", "1", 1),
			opts:    fc.Options{NeverAvailable: []string{"web-2"}},
			wantOut: lines("[pre hook of web-2]",
				"--> Scaling up web-2 from 0 to 1, scaling down web-1 from 1 to 0 (keep 0 pods available, don't exceed 1 pods)",
				"    Scaling web-1 down to 0", "    Scaling web-2 up to 1"),
			wantErr: "pods for rc 'shop/web-2' took longer than 1 seconds to become available",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t, tt.opts, tt.from, tt.until, tt.failHooks...)
			outcome, err := e.rollout.Rolling(t.Context(), tt.params, e.from, e.to, tt.desired)
			checkResult(t, err, tt.wantErr, outcome, tt.wantStop)
			if e.out.String() != tt.wantOut {
				t.Errorf("output:\n%s\nwant:\n%s", e.out.String(), tt.wantOut)
			}
		})
	}
}

// waitScaled waits until the cluster's RC manager has scaled rc to n.
func waitScaled(t *testing.T, c *fc.Cluster, rc string, n int32) error {
	return wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		for _, s := range c.Scales() {
			if s.RC == rc && s.Replicas == n {
				return true, nil
			}
		}
		return false, nil
	})
}

func TestRollingWaitsForAvailability(t *testing.T) {
	e := setup(t, fc.Options{NeverAvailable: []string{"web-2"}}, 2, "")
	var available atomic.Bool
	go func() {
		// Each new pod becomes available only after the rollout made it:
		// the rollout must notice through its watch and go on.
		for n := int32(1); n <= 2; n++ {
			if waitScaled(t, e.cluster, "web-2", n) != nil {
				return
			}
			if n == 2 {
				available.Store(true)
			}
			_ = e.cluster.SetAvailable("web-2", n)
		}
	}()
	outcome, err := e.rollout.Rolling(t.Context(), rolling("1", "0", 5), e.from, e.to, 2)
	checkResult(t, err, "", outcome, false)
	if !available.Load() {
		t.Errorf("finished before the pods were available")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
}

// TestPausesCountFromTheScale: updatePeriodSeconds starts at the scale
// write, so the wait for the RC manager's report of the scale is not added
// to it. On a clock where every scale takes 300 ms to be reported, each
// pause of the rolling update is 300 ms short of its period, and the
// scale-ups stay at least a period apart. intervalSeconds, OpenShift's
// polling period for that report, is never slept: the next round starts
// from the report.
func TestPausesCountFromTheScale(t *testing.T) {
	const scaleTakes = 300 * time.Millisecond
	e := setup(t, fc.Options{}, 3, "")
	setupScales := len(e.cluster.Scales())
	var paused time.Duration
	var pauses []time.Duration
	start := time.Unix(0, 0)
	e.rollout.now = func() time.Time {
		return start.Add(time.Duration(len(e.cluster.Scales())-setupScales)*scaleTakes + paused)
	}
	e.rollout.pause = func(ctx context.Context, d time.Duration) error {
		pauses, paused = append(pauses, d), paused+d
		return ctx.Err()
	}
	params := rolling("1", "0", 5)
	params.UpdatePeriodSeconds, params.IntervalSeconds = ptr.To[int64](2), ptr.To[int64](1)
	if _, err := e.rollout.Rolling(t.Context(), params, e.from, e.to, 3); err != nil {
		t.Fatal(err)
	}
	// Up, updatePeriod, down: three times.
	want := []time.Duration{1700 * time.Millisecond, 1700 * time.Millisecond, 1700 * time.Millisecond}
	if !slices.Equal(pauses, want) {
		t.Errorf("pauses = %v, want %v", pauses, want)
	}
	if got := e.scales(setupScales); got != "web-2=1 web-1=2 web-2=2 web-1=1 web-2=3 web-1=0" {
		t.Errorf("scales = %s", got)
	}
}
