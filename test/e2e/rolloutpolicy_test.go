package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// fleetSize is how many DeploymentConfigs follow the fleet's ConfigMap:
// with waves [1, 50%, rest] the waves of a change are 1, 3 and 2.
const fleetSize = 6

// TestRolloutPolicyOnKwok: the sequences of a RolloutPolicy on kwok, with
// the real kube-controller-manager and real deployer pods. Six
// DeploymentConfigs follow one ConfigMap under waves [1 (soak 5s), 50%,
// rest] and maxConcurrent 2. A change starts one rollout and lines up the
// five others; dc-local serve (and with it dc-controller) is killed while
// wave 1 soaks, and the new dc-controller keeps the line: wave 2 is its
// first three, two at a time, then wave 3 the last two, each wave only
// once the one before completed. A second change fails in its first wave
// (a pre hook refuses the new data) and stops the rest, which the CLI
// says, and the dashboard's policy page, open since before the change,
// shows without a reload, with the DCs' pages naming the policy.
func TestRolloutPolicyOnKwok(t *testing.T) {
	ns := dcNamespace(t)
	fleet := createFleet(t, ns)
	createFleetPolicy(t, ns)
	waitPolicy(t, ns, "the policy to select the fleet", func(s dcv1.RolloutPolicyStatus) bool { return s.Selected == fleetSize })

	t.Run("waves hold across a restart", func(t *testing.T) {
		log := watchRollouts(t, ns, 2)
		setConfigMapValue(t, ns, "shared", "MODE", "two")
		s := waitPolicy(t, ns, "wave 1 done and soaking, five in line", func(s dcv1.RolloutPolicyStatus) bool {
			return len(s.Changes) == 1 && s.Changes[0].WaveCompleted != nil && s.Running == 0 && s.Waiting == fleetSize-1
		})
		line := waiterNames(s)
		first := log.started()
		if len(first) != 1 || slices.Contains(line, first[0]) {
			t.Fatalf("wave 1 started %v, the line is %v: want one rollout, not in line", first, line)
		}

		killServer(t)

		for _, name := range fleet {
			requireComplete(t, ns, name, 2)
		}
		// Each wave is the next rollouts of the line before the restart,
		// and starts once every rollout of the one before ended.
		started := log.started()
		want := [][]string{first, line[:3], line[3:]}
		for i, from := 0, 0; i < len(want); from, i = from+len(want[i]), i+1 {
			got := started[from : from+len(want[i])]
			if !slices.Equal(sorted(got), sorted(want[i])) {
				t.Errorf("wave %d started %v, want %v (the line before the restart: %v; %s)", i+1, got, want[i], line, log)
			}
			if i > 0 && !log.startedAfter(got, started[:from]) {
				t.Errorf("wave %d (%v) started before wave %d ended: %s", i+1, got, i, log)
			}
		}
		if most := log.mostAtOnce(); most > 2 {
			t.Errorf("%d rollouts ran at once; maxConcurrent is 2", most)
		}
		waitPolicy(t, ns, "the change to end", func(s dcv1.RolloutPolicyStatus) bool {
			return s.Running == 0 && s.Waiting == 0 && len(s.Changes) == 0
		})
	})

	t.Run("a failure in the first wave stops the rest", func(t *testing.T) {
		browser := newBrowser(t)
		dashboard := startDashboard(t, "--namespace", ns)
		browse(t, browser, dashboard+"policy/"+ns+"/fleet")
		waitPage(t, browser, "the empty line", `document.querySelector('#line-empty') !== null`)
		markPage(t, browser)

		log := watchRollouts(t, ns, 3)
		setConfigMapValue(t, ns, "shared", "MODE", "broken")
		s := waitPolicy(t, ns, "the waves stopped by the failed rollout", func(s dcv1.RolloutPolicyStatus) bool {
			return len(s.Changes) == 1 && s.Changes[0].Stopped != "" && s.Running == 0 && s.Waiting == fleetSize-1
		})
		failed := log.started()
		if len(failed) != 1 {
			t.Fatalf("the change started %v, want one rollout", failed)
		}
		requirePhase(t, ns, failed[0], 3, dcv1.DeploymentPhaseFailed)
		for _, w := range s.Line {
			dc := getDC(t, ns, w.Name)
			if !hasCondition(dc, dcv1.DeploymentProgressing, corev1.ConditionUnknown, dcv1.AwaitingWaveReason) {
				t.Errorf("%s in line has Progressing %+v, want Unknown, AwaitingWave", w.Name, dc.Status.Conditions)
			}
		}
		if out := mustDC(t, ns, "describe", s.Line[0].Name); !strings.Contains(out, "fleet: rollout #3 waits, 1 of 5 in line (AwaitingWave)") {
			t.Errorf("kubectl dc describe %s does not say it waits first in fleet's line:\n%s", s.Line[0].Name, out)
		}
		if out := mustDC(t, ns, "policy", "get"); !strings.HasPrefix(strings.Join(strings.Fields(out), " "), "NAME MAX SELECTED RUNNING WAITING HOLDING AGE fleet 2 6 0 5 - ") {
			t.Errorf("kubectl dc policy get: want fleet with max 2, 6 selected, 0 running, 5 waiting, nothing holding:\n%s", out)
		}
		if out := mustDC(t, ns, "policy", "describe", "fleet"); !strings.Contains(out, "stopped by the failure of "+failed[0]+" #3") || !strings.Contains(out, s.Line[4].Name) {
			t.Errorf("kubectl dc policy describe fleet does not show the stopped change and the line:\n%s", out)
		}

		waitPage(t, browser, "five in line, wave 1 stopped by "+failed[0],
			`document.querySelectorAll('tr[data-waiter]').length === 5 && document.querySelector('li.wave[data-wave="1"]')?.dataset.state === "stopped" && document.querySelector('.change h3')?.textContent.includes("stopped by the failure of `+failed[0]+` #3")`)
		if got := evaluate[[]string](t, browser, `[...document.querySelectorAll('tr[data-waiter]')].map(r => r.dataset.waiter)`); !slices.Equal(got, waiterNames(s)) {
			t.Errorf("the page's line is %v, the policy's %v", got, waiterNames(s))
		}
		requireSamePage(t, browser)
		screenshot(t, browser, "policy-stopped")
		browse(t, browser, dashboard+"dc/"+ns+"/"+s.Line[0].Name)
		waitPage(t, browser, "the DC's policy and its place in line",
			`document.querySelector('#dc-policy')?.textContent.includes("Governed by RolloutPolicy fleet: rollout #3 waits, 1 of 5 in line, AwaitingWave")`)

		// The waves stay stopped: nothing but the failed rollout started.
		if got := log.started(); !slices.Equal(got, failed) {
			t.Errorf("after the failure %v started, want only %v", got, failed)
		}
	})
}

// createFleet creates the ConfigMap shared and fleetSize DeploymentConfigs
// labelled fleet=a that follow it, each with a pre hook that fails on
// MODE=broken, and waits for their first rollouts.
func createFleet(t *testing.T, ns string) []string {
	t.Helper()
	_, err := clientset().CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Data: map[string]string{"MODE": "one"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range fleetSize {
		name := fmt.Sprintf("svc-%d", i)
		names = append(names, name)
		dc := newDC(name, 1, rolling(intstr.FromInt32(1), intstr.FromInt32(0)))
		dc.Labels = map[string]string{"fleet": "a"}
		dc.Spec.ConfigSnapshots = &dcv1.ConfigSnapshots{}
		dc.Spec.Strategy.RollingParams.Pre = shellHook(dcv1.LifecycleHookFailurePolicyAbort, `test "$MODE" != broken`)
		dc.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}}}}
		createDC(t, ns, dc)
	}
	for _, name := range names {
		requireComplete(t, ns, name, 1)
	}
	return names
}

// createFleetPolicy creates the policy fleet: waves [1 (soak 5s), 50%,
// rest], maxConcurrent 2.
func createFleetPolicy(t *testing.T, ns string) {
	t.Helper()
	size := func(v string) *intstr.IntOrString { s := intstr.Parse(v); return &s }
	p := &dcv1.RolloutPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fleet"},
		Spec: dcv1.RolloutPolicySpec{
			Selector:      metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "a"}},
			MaxConcurrent: size("2"),
			Waves:         []dcv1.RolloutWave{{Size: size("1"), Soak: &metav1.Duration{Duration: 5 * time.Second}}, {Size: size("50%")}, {}},
		},
	}
	if err := dcs(t).Create(t.Context(), p); err != nil {
		t.Fatalf("creating rolloutpolicy fleet: %v", err)
	}
}

// waitPolicy waits until the status of the policy fleet satisfies ok.
func waitPolicy(t *testing.T, ns, what string, ok func(dcv1.RolloutPolicyStatus) bool) dcv1.RolloutPolicyStatus {
	t.Helper()
	p := &dcv1.RolloutPolicy{}
	err := poll(t, rolloutTimeout, func(ctx context.Context) (bool, error) {
		if err := dcs(t).Get(ctx, client.ObjectKey{Namespace: ns, Name: "fleet"}, p); err != nil {
			return false, err
		}
		return ok(p.Status), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; status %+v", what, err, p.Status)
	}
	return p.Status
}

// waiterNames are the DeploymentConfigs in the policy's line, in order.
func waiterNames(s dcv1.RolloutPolicyStatus) []string {
	var out []string
	for _, w := range s.Line {
		out = append(out, w.Name)
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// rolloutLog records, from a watch of a namespace's RCs, the deployments
// of one version: when each was created and when it ended.
type rolloutLog struct {
	mu      sync.Mutex
	version int64
	// order is the DCs in the order their deployment was created.
	order []string
	// ended marks the DCs whose deployment ended, with how many
	// deployments had been created by then.
	ended map[string]int
	// running and most are the deployments created and not ended, now and
	// at the most.
	running, most int
}

// watchRollouts records the deployments of version in ns until the test
// ends.
func watchRollouts(t *testing.T, ns string, version int64) *rolloutLog {
	t.Helper()
	w, err := clientset().CoreV1().ReplicationControllers(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch the deployments of %s: %v", ns, err)
	}
	l := &rolloutLog{version: version, ended: map[string]int{}}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if rc, ok := ev.Object.(*corev1.ReplicationController); ok && ev.Type != watch.Deleted {
				l.observe(rc)
			}
		}
	}()
	t.Cleanup(w.Stop)
	return l
}

func (l *rolloutLog) observe(rc *corev1.ReplicationController) {
	if deployment.Version(rc) != l.version {
		return
	}
	dc := rc.Labels[dcv1.DeploymentConfigLabel]
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.order, dc) {
		l.order = append(l.order, dc)
		l.running++
		l.most = max(l.most, l.running)
	}
	if _, done := l.ended[dc]; !done && deployment.IsTerminal(deployment.Phase(rc)) {
		l.ended[dc] = len(l.order)
		l.running--
	}
}

// started is the DCs whose deployment was created, in order.
func (l *rolloutLog) started() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.order)
}

// mostAtOnce is the most deployments that ran at once.
func (l *rolloutLog) mostAtOnce() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.most
}

// startedAfter reports whether every deployment of later was created
// after every one of earlier had ended.
func (l *rolloutLog) startedAfter(later, earlier []string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, dc := range later {
		i := slices.Index(l.order, dc)
		for _, e := range earlier {
			if at, done := l.ended[e]; !done || at > i {
				return false
			}
		}
	}
	return true
}

// String shows the log in a failure.
func (l *rolloutLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("started in order %v, ended after %v", l.order, l.ended)
}
