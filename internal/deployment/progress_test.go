package deployment

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// running is a Running deployment web-2 with the given annotations.
func running(annotations map[string]string) *corev1.ReplicationController {
	a := map[string]string{dcv1.DeploymentPhaseAnnotation: string(dcv1.DeploymentPhaseRunning)}
	for k, v := range annotations {
		a[k] = v
	}
	return &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{
		Name: "web-2", Namespace: "shop", Labels: map[string]string{dcv1.DeploymentConfigLabel: "web"}, Annotations: a,
	}}
}

// TestLegacyProgress reads the progress of rollouts that the code before
// the record started, as a rollout in flight across an upgrade has it.
func TestLegacyProgress(t *testing.T) {
	since := metav1.NewTime(time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name string
		old  map[string]string
		want Progress
	}{
		{"nothing recorded", nil, NewProgress("web-2")},
		{"paused at a step", map[string]string{
			legacyStep: "2", legacySteps: "3", legacyWeight: "40",
			legacyPausedSince: "2026-03-01T11:00:00Z", legacyPauseReason: "Pause",
		}, Progress{Format: 1, Stage: StageSteps, Step: 2, Steps: 3, Weight: new(int32(40)), Runner: Runner{Kind: RunnerPod, Holder: "web-2-deploy"},
			Wait: &Wait{Gate: "step-2", Reason: dcv1.PauseReasonPause, Since: since}}},
		{"timed pause", map[string]string{
			legacyStep: "1", legacySteps: "2", legacyPausedSince: "2026-03-01T11:00:00Z", legacyPauseDuration: "5m0s",
		}, Progress{Format: 1, Stage: StageSteps, Step: 1, Steps: 2, Runner: Runner{Kind: RunnerPod, Holder: "web-2-deploy"},
			Wait: &Wait{Gate: "step-1", Reason: dcv1.PauseReasonPause, Since: since, Duration: &metav1.Duration{Duration: 5 * time.Minute}}}},
		{"blue-green waiting for promotion, in the controller", map[string]string{
			legacyPausedSince: "2026-03-01T11:00:00Z", legacyPauseReason: "Promotion",
			legacyRunner: "controller", legacyRunnerStarted: "2026-03-01T11:00:00Z",
		}, Progress{Format: 1, Stage: StageBeforeSwitch, Runner: Runner{Kind: RunnerController, Holder: "dc-controller", Since: &since}, Log: LogInAnnotation,
			Wait: &Wait{Gate: GatePromotion, Reason: dcv1.PauseReasonPromotion, Since: since}}},
		{"blue-green on trial", map[string]string{legacySwitched: "trial"},
			Progress{Format: 1, Stage: StageSwitched, Switch: SwitchTrial, Runner: Runner{Kind: RunnerPod, Holder: "web-2-deploy"}}},
		{"a step out of range reads as none", map[string]string{legacyStep: "4", legacySteps: "3"}, NewProgress("web-2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadProgress(running(tc.old))
			if err != nil {
				t.Fatal(err)
			}
			if got.Encode() != tc.want.Encode() {
				t.Errorf("progress = %s\nwant       %s", got.Encode(), tc.want.Encode())
			}
		})
	}
}

// TestReadProgressRefuses checks that a record that cannot be read is an
// error, not a fresh start that would run a gate's steps again.
func TestReadProgressRefuses(t *testing.T) {
	for name, raw := range map[string]string{
		"not JSON":     "step 2",
		"later format": `{"format":2,"stage":"Steps"}`,
		"no stage":     `{"format":1}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadProgress(running(map[string]string{dcv1.RolloutProgressAnnotation: raw}))
			if err == nil || !strings.Contains(err.Error(), dcv1.RolloutProgressAnnotation) {
				t.Errorf("error = %v, want one naming %s", err, dcv1.RolloutProgressAnnotation)
			}
		})
	}
}

// TestReadRequest reads promote requests, those of today and those the
// code before the record wrote.
func TestReadRequest(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  Request
		ok    bool
	}{
		{`{"id":"a1","kind":"promote","gate":"step-2"}`, Request{ID: "a1", Kind: RequestPromote, Gate: "step-2"}, true},
		{`{"id":"a2","kind":"promote-full"}`, Request{ID: "a2", Kind: RequestPromoteFull}, true},
		{`{"id":"a3","kind":"skip-everything"}`, Request{}, false},
		{"full", Request{ID: "legacy-full", Kind: RequestPromoteFull}, true},
		{"3", Request{ID: "legacy-3", Kind: RequestPromote, Gate: "step-3"}, true},
		{"0", Request{}, false},
		{"", Request{}, false},
	} {
		t.Run(tc.value, func(t *testing.T) {
			got, ok := ReadRequest(running(map[string]string{dcv1.PromoteRequestAnnotation: tc.value}))
			if got != tc.want || ok != tc.ok {
				t.Errorf("ReadRequest = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestPending checks that a request is acted on at the gate it answers,
// and once.
func TestPending(t *testing.T) {
	promote := Request{ID: "p1", Kind: RequestPromote, Gate: "step-2"}
	full := Request{ID: "f1", Kind: RequestPromoteFull}
	for _, tc := range []struct {
		name     string
		req      Request
		consumed []string
		gate     string
		want     bool
	}{
		{"promote at its gate", promote, nil, "step-2", true},
		{"promote at another gate", promote, nil, "step-4", false},
		{"promote consumed", promote, []string{"p1"}, "step-2", false},
		{"full anywhere", full, nil, GatePostPromotion, true},
		{"full consumed", full, []string{"f1"}, "step-2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := running(map[string]string{dcv1.PromoteRequestAnnotation: tc.req.Encode()})
			if _, got := Pending(rc, Progress{Consumed: tc.consumed}, tc.gate); got != tc.want {
				t.Errorf("Pending = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPromotion checks what promote and promote --full ask of a rollout at
// each point, and that a plain promote never asks to skip a gate.
func TestPromotion(t *testing.T) {
	canary := &dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
		Steps: []dcv1.RollingStep{{SetWeight: new(int32(20))}, {Pause: &dcv1.RolloutPause{}}},
	}}
	blueGreen := &dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen, BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: "web"}}
	plain := &dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{}}
	since := metav1.NewTime(time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC))
	paused := Progress{Stage: StageSteps, Step: 2, Steps: 2, Wait: &Wait{Gate: "step-2", Reason: dcv1.PauseReasonPause, Since: since}}
	inPre := Progress{Stage: StageBeforeSwitch, Analysis: &RunningAnalysis{Label: "prePromotion", Since: since}}
	awaiting := Progress{Stage: StageBeforeSwitch, Wait: &Wait{Gate: GatePromotion, Reason: dcv1.PauseReasonPromotion, Since: since}}
	for _, tc := range []struct {
		name     string
		s        *dcv1.DeploymentStrategy
		p        Progress
		full     bool
		wantKind RequestKind
		wantGate string
		wantErr  string
	}{
		{"canary paused", canary, paused, false, RequestPromote, "step-2", ""},
		{"canary at a step, not paused", canary, Progress{Stage: StageSteps, Step: 1, Steps: 2}, false, "", "", "at step 1 of 2 and not paused"},
		{"canary full", canary, Progress{Stage: StageSteps, Step: 1, Steps: 2}, true, RequestPromoteFull, "", ""},
		{"canary in its final roll", canary, Progress{Stage: StageFinalRoll}, true, "", "", "past its last step"},
		{"blue-green in its prePromotionAnalysis", blueGreen, inPre, false, "", "", "prePromotion analysis, which promote does not skip"},
		{"blue-green in its prePromotionAnalysis, full", blueGreen, inPre, true, RequestPromoteFull, "", ""},
		{"blue-green waiting", blueGreen, awaiting, false, RequestPromote, GatePromotion, ""},
		{"blue-green switched for good", blueGreen, Progress{Stage: StageSwitched, Switch: SwitchFinal}, true, "", "", "nothing to promote"},
		{"no steps", plain, Progress{Stage: StageStarted}, true, "", "", "no steps and is not BlueGreen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := running(nil)
			SetProgress(rc, tc.p)
			req, _, err := Promotion(rc, tc.s, tc.full)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.Kind != tc.wantKind || req.Gate != tc.wantGate || req.ID == "" {
				t.Errorf("request = %+v, want kind %s at gate %q with an ID", req, tc.wantKind, tc.wantGate)
			}
		})
	}
}

// TestAwaitingPerson checks the one answer to "does this rollout wait for
// a person?".
func TestAwaitingPerson(t *testing.T) {
	since := metav1.NewTime(time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC))
	untimed := &Wait{Gate: "step-2", Reason: dcv1.PauseReasonPause, Since: since}
	timed := &Wait{Gate: "step-2", Reason: dcv1.PauseReasonPause, Since: since, Duration: &metav1.Duration{Duration: time.Minute}}
	inconclusive := &Wait{Gate: "step-2", Reason: dcv1.PauseReasonInconclusive, Since: since, Duration: &metav1.Duration{Duration: time.Minute}}
	answer := Request{ID: "r", Kind: RequestPromote, Gate: "step-2"}.Encode()
	for _, tc := range []struct {
		name    string
		wait    *Wait
		request string
		want    bool
	}{
		{"no wait", nil, "", false},
		{"untimed pause", untimed, "", true},
		{"timed pause", timed, "", false},
		{"inconclusive", inconclusive, "", true},
		{"answered", untimed, answer, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := running(nil)
			if tc.request != "" {
				rc.Annotations[dcv1.PromoteRequestAnnotation] = tc.request
			}
			SetProgress(rc, Progress{Stage: StageSteps, Step: 2, Steps: 2, Wait: tc.wait})
			if _, got := AwaitingPerson(rc); got != tc.want {
				t.Errorf("AwaitingPerson = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRetryPatch checks what a retry keeps: a switch for good and the
// requests already consumed; and what it drops.
func TestRetryPatch(t *testing.T) {
	rc := running(map[string]string{
		dcv1.DeploymentCancelledAnnotation: "true", AnalysisKey("pre"): "Failed: boom",
		dcv1.DeploymentLogAnnotation: "--> Step 1", legacyStep: "1",
	})
	rc.ResourceVersion = "42"
	SetProgress(rc, Progress{Stage: StageSwitched, Switch: SwitchFinal, Seq: 7, Consumed: []string{"r1"}})
	data, err := RetryPatch(rc)
	if err != nil {
		t.Fatal(err)
	}
	var patch struct {
		Metadata struct {
			ResourceVersion string             `json:"resourceVersion"`
			Annotations     map[string]*string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &patch); err != nil {
		t.Fatal(err)
	}
	a := patch.Metadata.Annotations
	if patch.Metadata.ResourceVersion != "42" {
		t.Errorf("resourceVersion = %q, want 42", patch.Metadata.ResourceVersion)
	}
	for _, k := range []string{dcv1.DeploymentCancelledAnnotation, AnalysisKey("pre"), dcv1.DeploymentLogAnnotation, legacyStep} {
		if v, ok := a[k]; !ok || v != nil {
			t.Errorf("annotation %s is not removed", k)
		}
	}
	rc.Annotations[dcv1.RolloutProgressAnnotation] = *a[dcv1.RolloutProgressAnnotation]
	got := ProgressOf(rc)
	if got.Switch != SwitchFinal || !got.HasConsumed("r1") || got.Seq != 8 || got.Runner.Kind != RunnerPod {
		t.Errorf("record after retry = %s", got.Encode())
	}
}

// TestUpdate checks the compare-and-swap: a change made from a stale read
// is made again on the fresh record, and the old keys go with the first
// write.
func TestUpdate(t *testing.T) {
	ctx := context.Background()
	rc := running(map[string]string{legacyStep: "1", legacySteps: "2"})
	client := fake.NewSimpleClientset(rc)
	rcs := client.CoreV1().ReplicationControllers("shop")
	written, err := Update(ctx, rcs, rc, func(p *Progress) error {
		if p.Stage != StageSteps || p.Step != 1 {
			t.Errorf("migrated record = %s, want step 1 of 2", p.Encode())
		}
		p.Weight = new(int32(20))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := written.Annotations[legacyStep]; ok {
		t.Errorf("the old step key is still there: %v", written.Annotations)
	}
	calls := 0
	read := written
	written, err = Update(ctx, rcs, read, func(p *Progress) error {
		calls++
		if calls == 1 {
			// Another writer changes the record after this one read it.
			if _, err := Update(ctx, rcs, read, func(p *Progress) error { p.Consume("other"); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		p.Step = 2
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := ProgressOf(written)
	if calls != 2 || got.Step != 2 || !got.HasConsumed("other") || got.Seq != 3 {
		t.Errorf("after a concurrent write: %d calls, record %s; want 2 calls, step 2, other consumed, seq 3", calls, got.Encode())
	}
}

// keptLog is a KeptLog of a test: the lines it holds, and how far they
// were kept.
type keptLog struct {
	text       string
	mark, kept uint64
}

func (l *keptLog) Unkept() (string, uint64, bool) { return l.text, l.mark, l.mark != l.kept }
func (l *keptLog) Kept(mark uint64)               { l.kept = mark }

// TestUpdateKeeping checks that a write of the record carries the lines
// of the log not yet kept, and only those writes.
func TestUpdateKeeping(t *testing.T) {
	ctx := context.Background()
	rc := running(nil)
	rcs := fake.NewSimpleClientset(rc).CoreV1().ReplicationControllers("shop")
	log := &keptLog{text: "--> Step 1 of 2\n", mark: 1}
	step := func(k int) func(*Progress) error {
		return func(p *Progress) error { p.Stage, p.Step, p.Steps = StageSteps, k, 2; return nil }
	}
	written, err := UpdateKeeping(ctx, rcs, rc, log, step(1))
	if err != nil {
		t.Fatal(err)
	}
	if got := Log(written); got != log.text || log.kept != 1 {
		t.Fatalf("after the first write the log is %q (kept up to %d), want %q kept up to 1", got, log.kept, log.text)
	}
	// Lines kept already are not written again; a write leaves the log
	// another writer put there alone.
	written.Annotations[dcv1.DeploymentLogAnnotation] = "written by the flusher"
	if written, err = rcs.Update(ctx, written, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if written, err = UpdateKeeping(ctx, rcs, written, log, step(2)); err != nil {
		t.Fatal(err)
	}
	if got := Log(written); got != "written by the flusher" {
		t.Errorf("a write with nothing new to keep changed the log to %q", got)
	}
}

// TestIsTestFailure checks that a failed test operation is told apart from
// other refusals, as the API server and as a fake client report it.
func TestIsTestFailure(t *testing.T) {
	const failed = "testing value /metadata/resourceVersion failed: test failed"
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"API server", apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", failed, 0, false), true},
		{"fake client", errors.New(failed), true},
		{"invalid object", apierrors.NewInvalid(schema.GroupKind{Kind: "ReplicationController"}, "web-2", field.ErrorList{field.TooLong(field.NewPath("metadata", "annotations"), "", 262144)}), false},
		{"conflict", apierrors.NewConflict(schema.GroupResource{Resource: "replicationcontrollers"}, "web-2", errors.New("changed")), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := isTestFailure(tt.err); got != tt.want {
				t.Errorf("isTestFailure(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestStartInController: a deployment created for dc-controller to run is
// Running from its creation, with the controller as its runner since then,
// its log kept on it and no deployer pod named.
func TestStartInController(t *testing.T) {
	dc := &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-1"},
		Spec:       dcv1.DeploymentConfigSpec{Replicas: 2, Template: &corev1.PodTemplateSpec{}},
		Status:     dcv1.DeploymentConfigStatus{LatestVersion: 3},
	}
	rc, err := New(dc)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 4, 15, 0, 0, 500, time.UTC)
	if err := StartInController(rc, now); err != nil {
		t.Fatal(err)
	}
	if got := Phase(rc); got != dcv1.DeploymentPhaseRunning {
		t.Errorf("phase = %s, want Running", got)
	}
	if !RunsInController(rc) {
		t.Error("the record does not name dc-controller as the runner")
	}
	p := ProgressOf(rc)
	if p.Runner.Since == nil || !p.Runner.Since.Time.Equal(now.Truncate(time.Second)) {
		t.Errorf("runner since = %v, want %v", p.Runner.Since, now.Truncate(time.Second))
	}
	if p.Log != LogInAnnotation || p.Stage != StageStarted {
		t.Errorf("log = %q, stage = %q; want the log on the deployment and the rollout started", p.Log, p.Stage)
	}
	if _, named := rc.Annotations[dcv1.DeployerPodAnnotation]; named {
		t.Error("a deployer pod is still named")
	}
}
