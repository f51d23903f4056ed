package controller

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// withPods gives a deployment pods as the RC manager reports them: replicas
// of them, available of those available.
func withPods(rc *corev1.ReplicationController, replicas, available int32) *corev1.ReplicationController {
	rc.Spec.Replicas = &replicas
	rc.Status = corev1.ReplicationControllerStatus{Replicas: replicas, ReadyReplicas: available, AvailableReplicas: available,
		ObservedGeneration: rc.Generation}
	return rc
}

// synced returns dc as the controller writes it at generation gen with
// these deployments: computeStatus after the triggers of the sync fired.
func synced(dc *dcv1.DeploymentConfig, gen int64, rcs ...*corev1.ReplicationController) *dcv1.DeploymentConfig {
	dc = dc.DeepCopy()
	dc.Generation = gen
	latest := findVersion(rcs, dc.Status.LatestVersion)
	if details := triggeredRollout(dc, latest); details != nil && !dc.Spec.Paused {
		dc.Status.LatestVersion++
	}
	dc.Status = computeStatus(dc, rcs, nil, metav1.Now())
	return dc
}

// computeKstatus runs cli-utils' kstatus on the DeploymentConfig as the API
// server would serve it.
func computeKstatus(t *testing.T, dc *dcv1.DeploymentConfig) *kstatus.Result {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dc)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(dcv1.GroupVersion.WithKind("DeploymentConfig"))
	res, err := kstatus.Compute(u)
	if err != nil {
		t.Fatalf("kstatus.Compute: %v", err)
	}
	return res
}

// TestKstatusOfEachPhase: cli-utils' kstatus says InProgress from a spec
// change until its rollout is Complete, Current after it, Failed when it
// failed or was cancelled (the fall-back serving does not make it Current),
// and the defined result for paused, scaled-to-0, test and image-waiting
// DeploymentConfigs (docs/gitops.md).
func TestKstatusOfEachPhase(t *testing.T) {
	v1 := withVersion(testDC(nil), 1)
	complete1 := func() *corev1.ReplicationController {
		return withPods(rcOf(t, v1, 1, dcv1.DeploymentPhaseComplete, 0), 4, 4)
	}
	changed := withVersion(testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Template.Spec.Containers[0].Image = "img:2" }), 2)
	rc2 := func(phase dcv1.DeploymentPhase, replicas, available int32) *corev1.ReplicationController {
		return withPods(rcOf(t, changed, 2, phase, 0), replicas, available)
	}
	scaledDown := func(rc *corev1.ReplicationController) *corev1.ReplicationController { return withPods(rc, 0, 0) }
	cancelled := rc2(dcv1.DeploymentPhaseFailed, 0, 0)
	cancelled.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
	failed := rc2(dcv1.DeploymentPhaseFailed, 0, 0)
	failed.Annotations[dcv1.DeploymentStatusReasonAnnotation] = "timed out waiting for pods"

	unseen := synced(v1, 1, complete1())
	unseen.Spec = changed.Spec
	unseen.Generation = 2

	brandNew := testDC(nil)
	brandNew.Generation = 1 // status as the CRD defaults it: observedGeneration 0

	paused := testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Paused = true })
	zero := withVersion(testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Replicas = 0 }), 1)
	test := withVersion(testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Test = true }), 1)
	waiting := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{imageTrigger(true, "")}
	})
	manual := testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{} })
	noConfigChange := withVersion(testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{}
		dc.Spec.Template.Spec.Containers[0].Image = "img:2"
	}), 1)
	scaledUp := withVersion(testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Replicas = 6 }), 1)

	cases := []struct {
		name   string
		dc     *dcv1.DeploymentConfig
		want   kstatus.Status
		reason string // of the kstatus conditions; "" for the generation check
	}{
		{"created, not synced yet", brandNew, kstatus.InProgressStatus, ""},
		{"new spec the controller has not seen", unseen, kstatus.InProgressStatus, ""},
		{"trigger fired, deployment not created yet", synced(withVersion(changed, 1), 2, complete1()), kstatus.InProgressStatus, dcv1.RolloutPendingReason},
		{"rollout new", synced(changed, 2, complete1(), rc2(dcv1.DeploymentPhaseNew, 0, 0)), kstatus.InProgressStatus, dcv1.RolloutInProgressReason},
		{"rollout running", synced(changed, 2, withPods(complete1(), 2, 2), rc2(dcv1.DeploymentPhaseRunning, 2, 1)), kstatus.InProgressStatus, dcv1.RolloutInProgressReason},
		{"complete, old pods still going", synced(changed, 2, withPods(complete1(), 1, 1), rc2(dcv1.DeploymentPhaseComplete, 4, 4)), kstatus.InProgressStatus, dcv1.ReplicasNotReadyReason},
		{"complete, new pods not all available", synced(changed, 2, scaledDown(complete1()), rc2(dcv1.DeploymentPhaseComplete, 4, 3)), kstatus.InProgressStatus, dcv1.ReplicasNotReadyReason},
		{"complete", synced(changed, 2, scaledDown(complete1()), rc2(dcv1.DeploymentPhaseComplete, 4, 4)), kstatus.CurrentStatus, dcv1.RolloutCompleteReason},
		{"failed, the fall-back serves", synced(changed, 2, complete1(), failed), kstatus.FailedStatus, dcv1.RolloutFailedReason},
		{"cancelled, the fall-back serves", synced(changed, 2, complete1(), cancelled), kstatus.FailedStatus, dcv1.RolloutCancelledReason},
		{"paused before the first rollout", synced(paused, 1), kstatus.InProgressStatus, dcv1.PausedReason},
		{"paused after a rollout", synced(withVersion(paused, 1), 2, complete1()), kstatus.InProgressStatus, dcv1.PausedReason},
		{"replicas 0, complete", synced(zero, 1, withPods(rcOf(t, zero, 1, dcv1.DeploymentPhaseComplete, 0), 0, 0)), kstatus.CurrentStatus, dcv1.RolloutCompleteReason},
		{"test deployment running", synced(test, 1, withPods(rcOf(t, test, 1, dcv1.DeploymentPhaseRunning, 0), 4, 2)), kstatus.InProgressStatus, dcv1.RolloutInProgressReason},
		{"test deployment complete, pods not gone yet", synced(test, 1, withPods(rcOf(t, test, 1, dcv1.DeploymentPhaseComplete, 0), 4, 4)), kstatus.InProgressStatus, dcv1.ReplicasNotReadyReason},
		{"test deployment complete, scaled to 0", synced(test, 1, withPods(rcOf(t, test, 1, dcv1.DeploymentPhaseComplete, 0), 0, 0)), kstatus.CurrentStatus, dcv1.RolloutCompleteReason},
		{"image trigger waiting for its first image", synced(waiting, 1), kstatus.InProgressStatus, dcv1.WaitingForImageReason},
		{"no trigger, never rolled out", synced(manual, 1), kstatus.CurrentStatus, dcv1.ManualRolloutReason},
		{"template changed without a ConfigChange trigger", synced(noConfigChange, 2, complete1()), kstatus.CurrentStatus, dcv1.RolloutCompleteReason},
		{"replicas raised, pods not there yet", synced(scaledUp, 2, complete1()), kstatus.InProgressStatus, dcv1.ReplicasNotReadyReason},
		{"replicas raised, pods there", synced(scaledUp, 2, withPods(rcOf(t, scaledUp, 1, dcv1.DeploymentPhaseComplete, 0), 6, 6)), kstatus.CurrentStatus, dcv1.RolloutCompleteReason},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := computeKstatus(t, tc.dc)
			if res.Status != tc.want {
				t.Fatalf("kstatus %s (%s), want %s; conditions %+v", res.Status, res.Message, tc.want, tc.dc.Status.Conditions)
			}
			if tc.reason == "" {
				return
			}
			for _, ct := range []dcv1.DeploymentConditionType{dcv1.DeploymentReady, dcv1.DeploymentReconciling, dcv1.DeploymentStalled} {
				c := findCondition(tc.dc.Status.Conditions, ct)
				if c == nil || c.Reason != tc.reason || c.Message == "" {
					t.Errorf("%s condition %+v, want reason %s with a message", ct, c, tc.reason)
				}
			}
		})
	}
}

// TestKstatusConditionsLeaveOpenShiftsAlone: the new conditions sit beside
// Available and Progressing, which stay what they were.
func TestKstatusConditionsLeaveOpenShiftsAlone(t *testing.T) {
	dc := withVersion(testDC(nil), 2)
	latest := withPods(rcOf(t, dc, 2, dcv1.DeploymentPhaseRunning, 0), 2, 1)
	status := computeStatus(dc, []*corev1.ReplicationController{latest}, nil, metav1.Now())
	var types []dcv1.DeploymentConditionType
	for _, c := range status.Conditions {
		types = append(types, c.Type)
	}
	want := []dcv1.DeploymentConditionType{dcv1.DeploymentAvailable, dcv1.DeploymentProgressing,
		dcv1.DeploymentReady, dcv1.DeploymentReconciling, dcv1.DeploymentStalled}
	if len(types) != len(want) {
		t.Fatalf("conditions %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("conditions %v, want %v", types, want)
		}
	}
	p := findCondition(status.Conditions, dcv1.DeploymentProgressing)
	if p.Reason != dcv1.ReplicationControllerUpdatedReason || p.Status != corev1.ConditionTrue {
		t.Errorf("Progressing %+v changed", p)
	}
}

// TestKstatusCreateError: a deployment the API server refuses keeps the
// DeploymentConfig InProgress with the error in the message (the controller
// retries it: a quota may free up).
func TestKstatusCreateError(t *testing.T) {
	dc := withVersion(testDC(nil), 1)
	dc.Generation = 1
	dc.Status = computeStatus(dc, nil, errors.New(`replicationcontrollers "web-1" is forbidden: exceeded quota`), metav1.Now())
	res := computeKstatus(t, dc)
	if res.Status != kstatus.InProgressStatus || res.Message != `Rollout #1 cannot be created yet: replicationcontrollers "web-1" is forbidden: exceeded quota` {
		t.Errorf("kstatus %s %q", res.Status, res.Message)
	}
}

// awaiting returns the running deployment of dc at version 2 as the
// deployer leaves it while it waits: step (empty for blue-green) of steps,
// paused since a minute ago, with a pause reason and duration when set.
func awaiting(t *testing.T, dc *dcv1.DeploymentConfig, step, reason, duration string) *corev1.ReplicationController {
	t.Helper()
	rc := withPods(rcOf(t, dc, 2, dcv1.DeploymentPhaseRunning, 0), 2, 2)
	rc.Annotations[dcv1.DeploymentPausedSinceAnnotation] = "2026-01-01T00:00:00Z"
	set := map[string]string{dcv1.DeploymentStepAnnotation: step, dcv1.DeploymentPauseReasonAnnotation: reason,
		dcv1.DeploymentPauseDurationAnnotation: duration}
	for k, v := range set {
		if v != "" {
			rc.Annotations[k] = v
		}
	}
	if step != "" {
		rc.Annotations[dcv1.DeploymentStepsAnnotation] = "4"
	}
	return rc
}

// TestKstatusAwaitingPromotion: a rollout that waits for a person (a pause
// step without a duration, an Inconclusive analysis, a blue-green rollout
// waiting to switch) says so: kstatus reason AwaitingPromotion with the
// command to run, and the Progressing condition (OpenShift's reason kept)
// says it too. A timed pause, or one already promoted, is in progress.
func TestKstatusAwaitingPromotion(t *testing.T) {
	dc := withVersion(testDC(nil), 2)
	promoted := func(rc *corev1.ReplicationController, value string) *corev1.ReplicationController {
		rc.Annotations[dcv1.PromoteRequestAnnotation] = value
		return rc
	}
	cases := []struct {
		name   string
		latest *corev1.ReplicationController
		reason string
		words  string // in both messages, when awaiting promotion
	}{
		{"pause step without duration", awaiting(t, dc, "2", string(dcv1.PauseReasonPause), ""), dcv1.AwaitingPromotionReason, "paused at step 2 of 4"},
		{"pause step, written by a deployer that records no reason", awaiting(t, dc, "2", "", ""), dcv1.AwaitingPromotionReason, "paused at step 2 of 4"},
		{"Inconclusive analysis step", awaiting(t, dc, "3", string(dcv1.PauseReasonInconclusive), ""), dcv1.AwaitingPromotionReason,
			"paused at step 3 of 4: an analysis was Inconclusive"},
		{"Inconclusive blue-green analysis", awaiting(t, dc, "", string(dcv1.PauseReasonInconclusive), ""), dcv1.AwaitingPromotionReason,
			"paused: an analysis was Inconclusive"},
		{"blue-green promotion gate", awaiting(t, dc, "", string(dcv1.PauseReasonPromotion), ""), dcv1.AwaitingPromotionReason,
			"waiting for promotion to the active Service"},
		{"timed pause", awaiting(t, dc, "2", string(dcv1.PauseReasonPause), "30s"), dcv1.RolloutInProgressReason, ""},
		{"blue-green autoPromotionSeconds", awaiting(t, dc, "", string(dcv1.PauseReasonPromotion), "1m0s"), dcv1.RolloutInProgressReason, ""},
		{"pause promoted, deployer not on yet", promoted(awaiting(t, dc, "2", string(dcv1.PauseReasonPause), ""), "2"), dcv1.RolloutInProgressReason, ""},
		{"pause promoted in full", promoted(awaiting(t, dc, "2", string(dcv1.PauseReasonPause), ""), dcv1.PromoteFull), dcv1.RolloutInProgressReason, ""},
		{"blue-green promoted", promoted(awaiting(t, dc, "", string(dcv1.PauseReasonPromotion), ""), "true"), dcv1.RolloutInProgressReason, ""},
		{"an earlier step's promote request left", promoted(awaiting(t, dc, "3", string(dcv1.PauseReasonPause), ""), "1"), dcv1.AwaitingPromotionReason, "paused at step 3 of 4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := synced(dc, 2, tc.latest)
			if res := computeKstatus(t, got); res.Status != kstatus.InProgressStatus {
				t.Errorf("kstatus %s (%s), want InProgress", res.Status, res.Message)
			}
			r := findCondition(got.Status.Conditions, dcv1.DeploymentReconciling)
			if r == nil || r.Status != corev1.ConditionTrue || r.Reason != tc.reason {
				t.Fatalf("Reconciling %+v, want True %s", r, tc.reason)
			}
			p := findCondition(got.Status.Conditions, dcv1.DeploymentProgressing)
			if p == nil || p.Status != corev1.ConditionTrue || p.Reason != dcv1.ReplicationControllerUpdatedReason {
				t.Fatalf("Progressing %+v, want True %s", p, dcv1.ReplicationControllerUpdatedReason)
			}
			if tc.words == "" {
				if p.Message != `replication controller "web-2" is progressing` {
					t.Errorf("Progressing message %q changed", p.Message)
				}
				return
			}
			for _, want := range []string{tc.words, "'kubectl dc rollout promote web'", "abort", "'kubectl dc rollout cancel web'"} {
				if !strings.Contains(r.Message, want) {
					t.Errorf("Reconciling message %q does not say %q", r.Message, want)
				}
			}
			for _, want := range []string{`replication controller "web-2"`, tc.words, "'kubectl dc rollout promote web'"} {
				if !strings.Contains(p.Message, want) {
					t.Errorf("Progressing message %q does not say %q", p.Message, want)
				}
			}
		})
	}
}

// TestKstatusInvalidAnalysis: an analysis the controller refuses stops the
// rollout until the spec changes, so the DeploymentConfig is Stalled
// (kstatus Failed, kubectl wait --for=condition=Stalled returns) rather
// than InProgress for ever, and Progressing says InvalidAnalysis.
func TestKstatusInvalidAnalysis(t *testing.T) {
	dc := withVersion(testDC(nil), 1)
	dc.Generation = 1
	invalid := &InvalidAnalysisError{Version: 1, Errs: field.ErrorList{
		field.Invalid(field.NewPath("spec", "strategy", "rollingParams", "pre", "analysis", "metrics").Index(0).Child("successCondition"), "result[0] <", "does not compile as CEL")}}
	for name, createErr := range map[string]error{"as returned": invalid, "wrapped": fmt.Errorf("start rollout: %w", invalid)} {
		t.Run(name, func(t *testing.T) {
			dc := dc.DeepCopy()
			dc.Status = computeStatus(dc, nil, createErr, metav1.Now())
			res := computeKstatus(t, dc)
			if res.Status != kstatus.FailedStatus {
				t.Errorf("kstatus %s (%s), want Failed", res.Status, res.Message)
			}
			s := findCondition(dc.Status.Conditions, dcv1.DeploymentStalled)
			if s == nil || s.Status != corev1.ConditionTrue || s.Reason != dcv1.InvalidAnalysisReason ||
				!strings.Contains(s.Message, "spec.strategy.rollingParams.pre.analysis.metrics[0].successCondition") {
				t.Errorf("Stalled %+v, want True %s naming the field", s, dcv1.InvalidAnalysisReason)
			}
			p := findCondition(dc.Status.Conditions, dcv1.DeploymentProgressing)
			if p == nil || p.Status != corev1.ConditionFalse || p.Reason != dcv1.InvalidAnalysisReason {
				t.Errorf("Progressing %+v, want False %s", p, dcv1.InvalidAnalysisReason)
			}
		})
	}
}
