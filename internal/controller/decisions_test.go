package controller

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

func testDC(mutate func(*dcv1.DeploymentConfig)) *dcv1.DeploymentConfig {
	dc := &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "dc-uid"},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: 4,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "img:1"}}},
			},
		},
	}
	if mutate != nil {
		mutate(dc)
	}
	dcv1.SetDefaults(dc)
	return dc
}

// rcOf returns the deployment of dc at a version, in a phase.
func rcOf(t *testing.T, dc *dcv1.DeploymentConfig, version int64, phase dcv1.DeploymentPhase, replicas int32) *corev1.ReplicationController {
	t.Helper()
	at := dc.DeepCopy()
	at.Status.LatestVersion = version
	rc, err := deployment.New(at)
	if err != nil {
		t.Fatal(err)
	}
	rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(phase)
	rc.Spec.Replicas = &replicas
	return rc
}

func imageTrigger(automatic bool, last string) dcv1.DeploymentTriggerPolicy {
	return dcv1.DeploymentTriggerPolicy{Type: dcv1.DeploymentTriggerOnImageChange, ImageChangeParams: &dcv1.DeploymentTriggerImageChangeParams{
		Automatic: automatic, ContainerNames: []string{"web"}, LastTriggeredImage: last,
		From: dcv1.ImageTriggerSource{Kind: "DockerImage", Name: "registry.example.com/web:stable"},
	}}
}

func TestTriggeredRollout(t *testing.T) {
	base := testDC(nil)
	deployed := rcOf(t, base, 1, dcv1.DeploymentPhaseComplete, 4)
	cases := []struct {
		name   string
		dc     *dcv1.DeploymentConfig
		latest *corev1.ReplicationController
		want   string // details message, "" for no rollout
	}{
		{"first version with a config trigger", testDC(nil), nil, configChangeMessage},
		{"template unchanged", withVersion(base, 1), deployed, ""},
		{"template changed", withVersion(testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Template.Spec.Containers[0].Image = "img:2" }), 1), deployed, configChangeMessage},
		{"replicas changed only", withVersion(testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Replicas = 9 }), 1), deployed, ""},
		{"latest version's RC not created yet", withVersion(testDC(nil), 2), nil, ""},
		{"manual only", testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{} }), nil, ""},
		{"empty image", testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Template.Spec.Containers[0].Image = "" }), nil, ""},
		{"unresolved automatic image trigger gates the first rollout", testDC(func(dc *dcv1.DeploymentConfig) {
			dc.Spec.Triggers = append(dc.Spec.Triggers, imageTrigger(true, ""))
		}), nil, ""},
		{"unresolved manual image trigger does not gate", testDC(func(dc *dcv1.DeploymentConfig) {
			dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{{Type: dcv1.DeploymentTriggerOnConfigChange}, imageTrigger(false, "")}
		}), nil, configChangeMessage},
		{"resolved image trigger alone starts the first rollout", testDC(func(dc *dcv1.DeploymentConfig) {
			dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{imageTrigger(true, "registry.example.com/web@sha256:1")}
		}), nil, imageChangeMessage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := triggeredRollout(tc.dc, tc.latest)
			msg := ""
			if got != nil {
				msg = got.Message
			}
			if msg != tc.want {
				t.Errorf("triggeredRollout = %q, want %q", msg, tc.want)
			}
		})
	}
}

func TestImageChangeNamesTheImage(t *testing.T) {
	old := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{imageTrigger(true, "registry.example.com/web@sha256:1")}
	})
	latest := rcOf(t, old, 1, dcv1.DeploymentPhaseComplete, 4)
	dc := withVersion(testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{imageTrigger(true, "registry.example.com/web@sha256:2")}
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web@sha256:2"
	}), 1)
	got := triggeredRollout(dc, latest)
	if got == nil || got.Message != imageChangeMessage || len(got.Causes) != 1 || got.Causes[0].ImageTrigger.From.Name != "registry.example.com/web@sha256:2" {
		t.Fatalf("triggeredRollout = %+v, want an image change naming sha256:2", got)
	}
}

func withVersion(dc *dcv1.DeploymentConfig, v int64) *dcv1.DeploymentConfig {
	dc.Status.LatestVersion = v
	return dc
}

func TestPrunable(t *testing.T) {
	dc := testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.RevisionHistoryLimit = ptr(int32(2)) })
	cases := []struct {
		name   string
		phases []dcv1.DeploymentPhase // versions 1..n
		scaled map[int]int32          // version → replicas, default 0
		want   []string
		limit  int32 // 2 unless set
	}{
		// OpenShift's own example: it deletes nothing.
		{"only deployments older than the active one count", phases("CCFFR"), map[int]int32{2: 4}, nil, 1},
		{"failed rollouts newer than the active one neither count nor go", phases("CCCFFF"), map[int]int32{3: 4}, nil, 0},
		{"with the active one at version 4, versions 1 and 2 go", phases("CCCCFF"), map[int]int32{4: 4}, []string{"web-1", "web-2"}, 1},
		{"no active deployment: all but the latest count", phases("FFFFF"), nil, []string{"web-1", "web-2"}, 0},
		{"a scaled-up deployment counts but stays", phases("CCCCC"), map[int]int32{1: 1, 5: 4}, nil, 3},
		{"under the limit", phases("CC"), nil, nil, 0},
		{"oldest beyond the limit go", phases("CCCCC"), map[int]int32{5: 4}, []string{"web-1", "web-2"}, 0},
		{"the active version is kept when the latest failed", phases("CCCCF"), map[int]int32{4: 4}, []string{"web-1"}, 0},
		{"scaled-up deployments are kept", phases("CCCCC"), map[int]int32{1: 1, 5: 4}, []string{"web-2"}, 0},
		{"running deployments are kept", phases("RCCCC"), map[int]int32{5: 4}, []string{"web-2"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var rcs []*corev1.ReplicationController
			for i, p := range tc.phases {
				rcs = append(rcs, rcOf(t, dc, int64(i+1), p, tc.scaled[i+1]))
			}
			d := withVersion(dc.DeepCopy(), int64(len(rcs)))
			if tc.limit != 0 {
				d.Spec.RevisionHistoryLimit = ptr(tc.limit)
			}
			var got []string
			for _, rc := range prunable(d, rcs) {
				got = append(got, rc.Name)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("prunable = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPrunableSparesThePinnedVersion: the deployment whose snapshots a
// rollback pinned keeps its copies for every later rollout, so cleanup
// leaves it however old it is.
func TestPrunableSparesThePinnedVersion(t *testing.T) {
	dc := withVersion(testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.RevisionHistoryLimit = ptr(int32(1))
		dc.Spec.ConfigSnapshots = &dcv1.ConfigSnapshots{}
		dc.Annotations = map[string]string{dcv1.ConfigSnapshotPinAnnotation: "2"}
	}), 4)
	var rcs []*corev1.ReplicationController
	for v := int64(1); v <= 4; v++ {
		rcs = append(rcs, rcOf(t, dc, v, dcv1.DeploymentPhaseComplete, map[bool]int32{true: 4}[v == 4]))
	}
	var got []string
	for _, rc := range prunable(dc, rcs) {
		got = append(got, rc.Name)
	}
	if !reflect.DeepEqual(got, []string{"web-1"}) {
		t.Errorf("prunable = %v, want [web-1]: web-2 is pinned", got)
	}
}

func phases(s string) []dcv1.DeploymentPhase {
	m := map[rune]dcv1.DeploymentPhase{'N': dcv1.DeploymentPhaseNew, 'P': dcv1.DeploymentPhasePending, 'R': dcv1.DeploymentPhaseRunning, 'C': dcv1.DeploymentPhaseComplete, 'F': dcv1.DeploymentPhaseFailed}
	var out []dcv1.DeploymentPhase
	for _, r := range s {
		out = append(out, m[r])
	}
	return out
}

func TestProgressingCondition(t *testing.T) {
	dc := withVersion(testDC(nil), 1)
	cancelled := rcOf(t, dc, 1, dcv1.DeploymentPhaseFailed, 0)
	cancelled.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
	paused := withVersion(testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Paused = true }), 1)
	resumed := withVersion(testDC(nil), 1)
	resumed.Status.Conditions = []dcv1.DeploymentCondition{{Type: dcv1.DeploymentProgressing, Status: corev1.ConditionUnknown, Reason: dcv1.PausedConfigReason}}
	cases := []struct {
		name       string
		dc         *dcv1.DeploymentConfig
		latest     *corev1.ReplicationController
		createErr  error
		wantStatus corev1.ConditionStatus
		wantReason string
	}{
		{"new", dc, rcOf(t, dc, 1, dcv1.DeploymentPhaseNew, 0), nil, corev1.ConditionTrue, dcv1.NewReplicationControllerCreatedReason},
		{"create failed", dc, nil, fmt.Errorf("quota"), corev1.ConditionFalse, dcv1.ReplicationControllerCreateErrorReason},
		{"invalid analysis", dc, nil, fmt.Errorf("sync: %w", &InvalidAnalysisError{Version: 1}), corev1.ConditionFalse, dcv1.InvalidAnalysisReason},
		{"pending", dc, rcOf(t, dc, 1, dcv1.DeploymentPhasePending, 0), nil, corev1.ConditionUnknown, dcv1.ReplicationControllerUpdatedReason},
		{"running", dc, rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 0), nil, corev1.ConditionTrue, dcv1.ReplicationControllerUpdatedReason},
		{"complete", dc, rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 4), nil, corev1.ConditionTrue, dcv1.NewReplicationControllerAvailableReason},
		{"failed", dc, rcOf(t, dc, 1, dcv1.DeploymentPhaseFailed, 0), nil, corev1.ConditionFalse, dcv1.ProgressDeadlineExceededReason},
		{"cancelled", dc, cancelled, nil, corev1.ConditionFalse, dcv1.RolloutCancelledReason},
		{"paused", paused, rcOf(t, dc, 1, dcv1.DeploymentPhaseRunning, 0), nil, corev1.ConditionUnknown, dcv1.PausedConfigReason},
		{"resumed", resumed, rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 4), nil, corev1.ConditionUnknown, dcv1.ResumedConfigReason},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := progressingCondition(tc.dc, tc.latest, tc.createErr)
			if c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason {
				t.Errorf("progressing = %+v, want %s %s", c, tc.wantStatus, tc.wantReason)
			}
		})
	}
}

func TestAvailableCondition(t *testing.T) {
	rolling := testDC(nil) // 4 replicas, maxUnavailable 25% → 1
	recreate := testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Strategy.Type = dcv1.DeploymentStrategyTypeRecreate })
	surgeOnly := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy.RollingParams = &dcv1.RollingDeploymentStrategyParams{MaxSurge: ptr(intstr.FromInt32(1))}
	})
	cases := []struct {
		name      string
		dc        *dcv1.DeploymentConfig
		available int32
		want      corev1.ConditionStatus
	}{
		{"rolling at replicas-maxUnavailable", rolling, 3, corev1.ConditionTrue},
		{"rolling below", rolling, 2, corev1.ConditionFalse},
		{"recreate needs all", recreate, 3, corev1.ConditionFalse},
		{"recreate with all", recreate, 4, corev1.ConditionTrue},
		{"maxUnavailable 0 needs all", surgeOnly, 3, corev1.ConditionFalse},
		{"none available is never available", testDC(func(dc *dcv1.DeploymentConfig) { dc.Spec.Replicas = 0 }), 0, corev1.ConditionFalse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := availableCondition(tc.dc, tc.available); got.Status != tc.want {
				t.Errorf("available = %s (%s), want %s", got.Status, got.Reason, tc.want)
			}
		})
	}
}

func TestSetConditionKeepsTimestamps(t *testing.T) {
	t0 := metav1.NewTime(time.Unix(1000, 0))
	t1 := metav1.NewTime(time.Unix(2000, 0))
	s := &dcv1.DeploymentConfigStatus{}
	c := dcv1.DeploymentCondition{Type: dcv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "A"}
	setCondition(s, c, t0)
	setCondition(s, c, t1)
	if got := s.Conditions[0]; !got.LastUpdateTime.Equal(&t0) || !got.LastTransitionTime.Equal(&t0) {
		t.Errorf("an unchanged condition moved its timestamps: %+v", got)
	}
	c.Reason = "B"
	setCondition(s, c, t1)
	if got := s.Conditions[0]; !got.LastUpdateTime.Equal(&t1) || !got.LastTransitionTime.Equal(&t0) {
		t.Errorf("a reason change: %+v, want update %v, transition %v", got, t1, t0)
	}
}

func TestDeployerPod(t *testing.T) {
	dc := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy.Annotations = map[string]string{dcv1.DeploymentAnnotation: "user", "note": "x"}
		dc.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
		dc.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		dc.Spec.Template.Spec.DNSPolicy = corev1.DNSDefault
	})
	rc := rcOf(t, dc, 2, dcv1.DeploymentPhaseNew, 0)
	cases := []struct {
		name        string
		params      *dcv1.CustomDeploymentStrategyParams
		wantImage   string
		wantCommand []string
		wantEnv     map[string]string
	}{
		{"default deployer", nil, "deployer:1", []string{"dc-deploy"}, map[string]string{"DC_DEPLOYMENT_NAME": "web-2"}},
		{"custom image uses its entrypoint", &dcv1.CustomDeploymentStrategyParams{Image: "mine:1"}, "mine:1", nil, nil},
		{"custom command and env; ours win", &dcv1.CustomDeploymentStrategyParams{
			Command:     []string{"/bin/sh", "-c", "dc-deploy"},
			Environment: []corev1.EnvVar{{Name: "X", Value: "1"}, {Name: "DC_DEPLOYMENT_NAME", Value: "evil"}},
		}, "deployer:1", []string{"/bin/sh", "-c", "dc-deploy"}, map[string]string{"X": "1", "DC_DEPLOYMENT_NAME": "web-2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := dc.DeepCopy()
			d.Spec.Strategy.CustomParams = tc.params
			pod := deployerPod(rc, d, "deployer:1")
			c := pod.Spec.Containers[0]
			if c.Image != tc.wantImage || !reflect.DeepEqual(c.Command, tc.wantCommand) {
				t.Errorf("container = %s %v, want %s %v", c.Image, c.Command, tc.wantImage, tc.wantCommand)
			}
			env := map[string]string{}
			for _, e := range c.Env {
				if _, dup := env[e.Name]; dup {
					t.Errorf("env %s set twice", e.Name)
				}
				env[e.Name] = e.Value
			}
			for k, v := range tc.wantEnv {
				if env[k] != v {
					t.Errorf("env %s = %q, want %q", k, env[k], v)
				}
			}
			if pod.Name != "web-2-deploy" || pod.Annotations[dcv1.DeploymentAnnotation] != "web-2" || pod.Annotations["note"] != "x" {
				t.Errorf("pod %s annotations %v", pod.Name, pod.Annotations)
			}
			if pod.Spec.ImagePullSecrets[0].Name != "pull" || pod.Spec.Tolerations[0].Key != "k" || pod.Spec.DNSPolicy != corev1.DNSDefault {
				t.Errorf("scheduling fields not copied: %+v", pod.Spec)
			}
			if *pod.Spec.SecurityContext.RunAsNonRoot != true || *c.SecurityContext.AllowPrivilegeEscalation {
				t.Errorf("deployer pod is not restricted")
			}
		})
	}
}

func TestIndexRCByDeploymentConfig(t *testing.T) {
	dc := testDC(nil)
	rc := rcOf(t, dc, 1, dcv1.DeploymentPhaseNew, 0)
	if got := indexRCByDeploymentConfig(rc); !reflect.DeepEqual(got, []string{"web"}) {
		t.Errorf("index = %v", got)
	}
	rc.Labels[dcv1.DeploymentConfigLabel] = "other"
	if got := indexRCByDeploymentConfig(rc); !reflect.DeepEqual(got, []string{"other", "web"}) {
		t.Errorf("index of a relabelled RC = %v", got)
	}
	rc.OwnerReferences = nil
	delete(rc.Labels, dcv1.DeploymentConfigLabel)
	if got := indexRCByDeploymentConfig(rc); len(got) != 0 {
		t.Errorf("index of an unrelated RC = %v", got)
	}
}

func TestPhasePatch(t *testing.T) {
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web-1", ResourceVersion: "7", Annotations: map[string]string{
		dcv1.DeploymentPhaseAnnotation: "Running", dcv1.DeployerPodCreateFailingSinceAnnotation: "x",
	}}}
	legacy := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web-1", ResourceVersion: "7"}}
	log, record := "--> Success\n", `{"format":1,"stage":"Started","runner":{"kind":"controller"}}`
	inController := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Annotations: map[string]string{
		dcv1.DeploymentPhaseAnnotation: "Running", dcv1.DeployerPodAnnotation: "web-1-deploy",
	}}}
	cases := []struct {
		name   string
		rc     *corev1.ReplicationController
		reason string
		extra  map[string]*string
		want   string
	}{
		{"writes and removes extra annotations in the same patch, in key order", inController, "", map[string]*string{
			dcv1.DeploymentLogAnnotation: &log, dcv1.RolloutProgressAnnotation: &record,
			dcv1.DeployerPodAnnotation: nil, dcv1.DeploymentCancelledAnnotation: nil,
		}, `[{"op":"test","path":"/metadata/annotations/deployconfig.io~1deployment.phase","value":"Running"},` +
			`{"op":"add","path":"/metadata/annotations/deployconfig.io~1deployment.phase","value":"Failed"},` +
			`{"op":"remove","path":"/metadata/annotations/deployconfig.io~1deployer-pod.name"},` +
			`{"op":"add","path":"/metadata/annotations/deployconfig.io~1deployment.log","value":"--\u003e Success\n"},` +
			`{"op":"add","path":"/metadata/annotations/deployconfig.io~1rollout","value":"{\"format\":1,\"stage\":\"Started\",\"runner\":{\"kind\":\"controller\"}}"}]`},
		{"tests the phase it moves from", rc, "deployer pod failed", nil,
			`[{"op":"test","path":"/metadata/annotations/deployconfig.io~1deployment.phase","value":"Running"},` +
				`{"op":"add","path":"/metadata/annotations/deployconfig.io~1deployment.phase","value":"Failed"},` +
				`{"op":"add","path":"/metadata/annotations/deployconfig.io~1deployment.status-reason","value":"deployer pod failed"},` +
				`{"op":"remove","path":"/metadata/annotations/deployconfig.io~1deployer-pod.create-failing-since"}]`},
		{"an RC without annotations is guarded by its version", legacy, "", nil,
			`[{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"add","path":"/metadata/annotations","value":{}},` +
				`{"op":"add","path":"/metadata/annotations/deployconfig.io~1deployment.phase","value":"Failed"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			patch, err := phasePatch(tc.rc, dcv1.DeploymentPhaseFailed, tc.reason, tc.extra)
			if err != nil {
				t.Fatal(err)
			}
			data, err := patch.Data(tc.rc)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != tc.want {
				t.Errorf("patch =\n%s\nwant\n%s", data, tc.want)
			}
		})
	}
}

// A new deployment waits for the pods of every earlier one but the last
// complete deployment: those a status counts, those a status older than the
// RC's spec may not count yet, and, looked up, those of an RC scaled before
// any RC manager reported on it.
func TestLeftoverDeployments(t *testing.T) {
	dc := testDC(nil)
	complete := rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 4)
	complete.Status.Replicas = 4
	failed := func(mutate func(*corev1.ReplicationController)) *corev1.ReplicationController {
		rc := rcOf(t, dc, 2, dcv1.DeploymentPhaseFailed, 0)
		rc.Generation = 3
		mutate(rc)
		return rc
	}
	tests := []struct {
		name           string
		rcs            []*corev1.ReplicationController
		wantCounted    string
		wantUnreported []string
	}{
		{"only the active deployment has pods", []*corev1.ReplicationController{complete,
			failed(func(rc *corev1.ReplicationController) { rc.Status.ObservedGeneration = 3 })}, "", nil},
		{"a failed deployment still has pods", []*corev1.ReplicationController{complete,
			failed(func(rc *corev1.ReplicationController) { rc.Status.ObservedGeneration, rc.Status.Replicas = 3, 2 })}, "web-2", nil},
		{"its status predates its scale-down", []*corev1.ReplicationController{complete,
			failed(func(rc *corev1.ReplicationController) { rc.Status.ObservedGeneration = 2 })}, "web-2", nil},
		{"scaled but never reported on", []*corev1.ReplicationController{complete,
			failed(func(*corev1.ReplicationController) {})}, "", []string{"web-2"}},
		{"never scaled nor reported on", []*corev1.ReplicationController{complete,
			failed(func(rc *corev1.ReplicationController) { rc.Generation = 1 })}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counted, unreported := leftoverDeployments(tt.rcs)
			got := ""
			if counted != nil {
				got = counted.Name
			}
			var gotUnreported []string
			for _, rc := range unreported {
				gotUnreported = append(gotUnreported, rc.Name)
			}
			if got != tt.wantCounted || !slices.Equal(gotUnreported, tt.wantUnreported) {
				t.Errorf("leftoverDeployments = %q, %v; want %q, %v", got, gotUnreported, tt.wantCounted, tt.wantUnreported)
			}
		})
	}
}
