package controller

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestRunsInController(t *testing.T) {
	hook := &dcv1.LifecycleHook{ExecNewPod: &dcv1.ExecNewPodHook{Command: []string{"true"}}}
	cases := []struct {
		name       string
		mode       DeployerMode
		annotation string // "" for none
		strategy   dcv1.DeploymentStrategy
		want       bool
		wantErr    string
	}{
		{name: "pod mode runs pods", mode: DeployerModePod, strategy: rolling(nil), want: false},
		{name: "controller mode runs a Rolling rollout in the controller", mode: DeployerModeControllerWhenPossible, strategy: rolling(nil), want: true},
		{name: "the annotation asks for the controller", mode: DeployerModePod, annotation: "controller-when-possible", strategy: rolling(nil), want: true},
		{name: "the annotation asks for a pod", mode: DeployerModeControllerWhenPossible, annotation: "pod", strategy: rolling(nil), want: false},
		{name: "an invalid annotation is an error and the controller's mode holds", mode: DeployerModeControllerWhenPossible, annotation: "in-process",
			strategy: rolling(nil), want: true, wantErr: `annotation deployconfig.io/deployer-mode: "in-process" is not a deployer mode (expected "pod" or "controller-when-possible")`},
		{name: "an execNewPod hook needs a pod", mode: DeployerModeControllerWhenPossible, strategy: rolling(hook), want: false},
		{name: "a Recreate mid hook needs a pod", mode: DeployerModeControllerWhenPossible,
			strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRecreate, RecreateParams: &dcv1.RecreateDeploymentStrategyParams{Mid: hook}}, want: false},
		{name: "a tagImages hook needs a pod", mode: DeployerModeControllerWhenPossible,
			strategy: rolling(&dcv1.LifecycleHook{TagImages: []dcv1.TagImageHook{{ContainerName: "web"}}}), want: false},
		{name: "a Recreate rollout without hooks runs in the controller", mode: DeployerModeControllerWhenPossible,
			strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRecreate, RecreateParams: &dcv1.RecreateDeploymentStrategyParams{}}, want: true},
		{name: "a Custom strategy needs a pod", mode: DeployerModeControllerWhenPossible,
			strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeCustom, CustomParams: &dcv1.CustomDeploymentStrategyParams{Image: "x"}}, want: false},
		{name: "customParams on Rolling need a pod", mode: DeployerModeControllerWhenPossible,
			strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, CustomParams: &dcv1.CustomDeploymentStrategyParams{Command: []string{"x"}}}, want: false},
		{name: "BlueGreen runs in the controller", mode: DeployerModeControllerWhenPossible,
			strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen}, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dc := &dcv1.DeploymentConfig{Spec: dcv1.DeploymentConfigSpec{Strategy: tc.strategy}}
			if tc.annotation != "" {
				dc.ObjectMeta = metav1.ObjectMeta{Annotations: map[string]string{dcv1.DeployerModeAnnotation: tc.annotation}}
			}
			got, err := runsInController(tc.mode, dc)
			if got != tc.want {
				t.Errorf("runsInController = %t, want %t", got, tc.want)
			}
			if (err == nil) != (tc.wantErr == "") || err != nil && err.Error() != tc.wantErr {
				t.Errorf("error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func rolling(pre *dcv1.LifecycleHook) dcv1.DeploymentStrategy {
	return dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{Pre: pre}}
}

func TestParseDeployerModeNamesTheFlag(t *testing.T) {
	if m, err := ParseDeployerMode("--deployer-mode", "controller-when-possible"); err != nil || m != DeployerModeControllerWhenPossible {
		t.Errorf("ParseDeployerMode = %q, %v", m, err)
	}
	_, err := ParseDeployerMode("--deployer-mode", "Pod")
	if err == nil || !strings.HasPrefix(err.Error(), `--deployer-mode: "Pod" is not a deployer mode`) {
		t.Errorf("error = %v, want one naming --deployer-mode", err)
	}
}

func TestRolloutLogKeepsItsTailFromALineStart(t *testing.T) {
	l := &rolloutLog{}
	line := strings.Repeat("x", 99) + "\n"
	for range 2 * rolloutLogLimit / len(line) {
		if _, err := l.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	l.Write([]byte("--> Success\n"))
	got := l.String()
	first, rest, _ := strings.Cut(got, "\n")
	if first != "... (earlier lines dropped)" {
		t.Errorf("first line = %q, want the note that lines were dropped", first)
	}
	if !strings.HasPrefix(rest, line) || !strings.HasSuffix(rest, "--> Success\n") {
		t.Errorf("kept log does not start at a line and end with the last line: %q...%q", rest[:20], rest[len(rest)-20:])
	}
	if len(rest) > rolloutLogLimit {
		t.Errorf("kept %d bytes, want at most %d", len(rest), rolloutLogLimit)
	}
}

// TestRolloutLogIsWrittenOnceEachChange: the flusher writes the log when it
// has lines not yet on the deployment, and a line that arrives while a
// write is in flight is written by the next one.
func TestRolloutLogIsWrittenOnceEachChange(t *testing.T) {
	l := &rolloutLog{}
	if _, _, ok := l.Unkept(); ok {
		t.Error("an empty log is written")
	}
	l.Write([]byte("--> Waiting for promotion\n"))
	text, writes, ok := l.Unkept()
	if !ok || text != "--> Waiting for promotion\n" {
		t.Fatalf("unkept log = %q, %t", text, ok)
	}
	l.Write([]byte("    Promoted\n"))
	l.Kept(writes)
	text, writes, ok = l.Unkept()
	if !ok || text != "--> Waiting for promotion\n    Promoted\n" {
		t.Fatalf("a line written during a write is not written next: %q, %t", text, ok)
	}
	if !l.pending() {
		t.Error("a log with a line not yet written is not pending")
	}
	l.Kept(writes)
	if text, _, ok := l.Unkept(); ok || l.pending() {
		t.Errorf("a log already written is written again: %q (pending: %t)", text, l.pending())
	}
}

// TestRolloutLogRestoredGoesOn: a resumed run starts from the log its
// deployment keeps, which is not written again until a line is added, and
// whose note of dropped lines stays one note.
func TestRolloutLogRestoredGoesOn(t *testing.T) {
	l := &rolloutLog{}
	kept := "... (earlier lines dropped)\n--> Scaling web-2 to 1\n"
	l.restore(kept)
	if text, _, ok := l.Unkept(); ok {
		t.Errorf("a restored log is written again before a line is added: %q", text)
	}
	l.Write([]byte("--> Resumed by a new dc-controller leader\n"))
	text, _, ok := l.Unkept()
	if want := kept + "--> Resumed by a new dc-controller leader\n"; !ok || text != want {
		t.Errorf("log = %q, %t; want %q", text, ok, want)
	}
}

// TestRunnerSlotsFirstComeFirstServed checks that the slots of
// --max-controller-rollouts go to the deployments in the order they asked,
// whichever asks again first, that a deployment created already Running
// takes a slot only when none waits, and that no more are given than the
// bound.
func TestRunnerSlotsFirstComeFirstServed(t *testing.T) {
	now := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)
	r := &rolloutRunner{
		max: 1, runs: map[types.NamespacedName]*run{},
		slots: map[types.NamespacedName]bool{}, waiting: map[types.NamespacedName]time.Time{},
		now: func() time.Time { now = now.Add(time.Second); return now },
	}
	rc := func(name string) *corev1.ReplicationController {
		return &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}
	}
	steps := []struct {
		do   string // reserve, try (tryReserve: a create already Running) or release
		rc   string
		want bool
	}{
		{"try", "a-1", true},
		{"reserve", "a-1", true},  // a keeps its slot
		{"reserve", "b-1", false}, // b asks first
		{"reserve", "c-1", false}, // then c
		{"release", "a-1", false},
		{"try", "d-1", false},     // a slot is free, but b and c wait in line
		{"reserve", "c-1", false}, // c asks again first, but b asked before it
		{"reserve", "b-1", true},
		{"reserve", "c-1", false}, // the bound holds
		{"release", "b-1", false},
		{"reserve", "c-1", true},
		{"release", "c-1", false},
		{"try", "d-1", true}, // none waits: a create takes the slot at once
		{"try", "e-1", false},
	}
	r.ctx = t.Context()
	for i, s := range steps {
		switch s.do {
		case "reserve":
			if got := r.reserve(rc(s.rc)); got != s.want {
				t.Errorf("step %d: reserve(%s) = %v, want %v", i+1, s.rc, got, s.want)
			}
		case "try":
			if got := r.tryReserve(rc(s.rc)); got != s.want {
				t.Errorf("step %d: tryReserve(%s) = %v, want %v", i+1, s.rc, got, s.want)
			}
		case "release":
			r.release(rc(s.rc))
		}
		if used := r.usedLocked(); used > r.max {
			t.Errorf("step %d: %d slots in use, more than %d", i+1, used, r.max)
		}
	}
}

// TestTryReserveNeedsTheLead: a replica that does not lead creates no
// deployment already Running; the next leader would have to resume it.
func TestTryReserveNeedsTheLead(t *testing.T) {
	r := &rolloutRunner{max: 1, runs: map[types.NamespacedName]*run{},
		slots: map[types.NamespacedName]bool{}, waiting: map[types.NamespacedName]time.Time{}}
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "a-1"}}
	if r.tryReserve(rc) {
		t.Error("tryReserve took a slot while not leading")
	}
	if (*rolloutRunner)(nil).tryReserve(rc) {
		t.Error("tryReserve without a runner took a slot")
	}
}
