package imagetrigger

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

const (
	appTag = "r.example.com/app:1"
	appV1  = "r.example.com/app@sha256:aaaa"
	appV2  = "r.example.com/app@sha256:bbbb"
)

// testDC returns a DeploymentConfig with containers web and sidecar, an
// init container init, and one image trigger per params.
func testDC(params ...dcv1.DeploymentTriggerImageChangeParams) *dcv1.DeploymentConfig {
	dc := &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: dcv1.DeploymentConfigSpec{
			Triggers: []dcv1.DeploymentTriggerPolicy{{Type: dcv1.DeploymentTriggerOnConfigChange}},
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
				Containers:     []corev1.Container{{Name: "web", Image: appTag}, {Name: "sidecar", Image: "proxy:1"}},
			}},
		},
	}
	for i := range params {
		dc.Spec.Triggers = append(dc.Spec.Triggers, dcv1.DeploymentTriggerPolicy{Type: dcv1.DeploymentTriggerOnImageChange, ImageChangeParams: &params[i]})
	}
	return dc
}

func params(automatic bool, containers ...string) dcv1.DeploymentTriggerImageChangeParams {
	return dcv1.DeploymentTriggerImageChangeParams{Automatic: automatic, ContainerNames: containers, From: dcv1.ImageTriggerSource{Kind: "DockerImage", Name: appTag}}
}

func images(dc *dcv1.DeploymentConfig) []string {
	var out []string
	for _, c := range append(dc.Spec.Template.Spec.InitContainers, dc.Spec.Template.Spec.Containers...) {
		out = append(out, c.Name+"="+c.Image)
	}
	return out
}

func TestDockerTriggers(t *testing.T) {
	dc := testDC(params(true, "web"), params(false, "web"))
	dc.Spec.Triggers = append(dc.Spec.Triggers,
		dcv1.DeploymentTriggerPolicy{Type: dcv1.DeploymentTriggerOnImageChange, ImageChangeParams: &dcv1.DeploymentTriggerImageChangeParams{
			ContainerNames: []string{"web"}, From: dcv1.ImageTriggerSource{Kind: "ImageStreamTag", Name: "app:1"}}},
		dcv1.DeploymentTriggerPolicy{Type: dcv1.DeploymentTriggerOnImageChange, ImageChangeParams: &dcv1.DeploymentTriggerImageChangeParams{
			ContainerNames: []string{"web"}, From: dcv1.ImageTriggerSource{Kind: "DockerImage", Name: "Bad Reference"}}},
		dcv1.DeploymentTriggerPolicy{Type: dcv1.DeploymentTriggerOnImageChange},
	)
	got := dockerTriggers(dc)
	if len(got) != 3 {
		t.Fatalf("%d triggers, want 3 (ConfigChange, ImageStreamTag and a trigger without params are not ours)", len(got))
	}
	if got[0].index != 1 || !got[0].automatic || got[0].err != nil || got[0].tag.Name() != appTag {
		t.Errorf("first trigger %+v", got[0])
	}
	if got[1].index != 2 || got[1].automatic {
		t.Errorf("second trigger %+v", got[1])
	}
	if got[2].index != 4 || got[2].err == nil {
		t.Errorf("a bad reference parsed: %+v", got[2])
	}
	dc.Spec.Template = nil
	if got := dockerTriggers(dc); got != nil {
		t.Errorf("triggers of a DC without a template: %v", got)
	}
}

func TestApply(t *testing.T) {
	resolved := func(dc *dcv1.DeploymentConfig, image string, err error) []outcome {
		var out []outcome
		for _, tr := range dockerTriggers(dc) {
			out = append(out, outcome{trigger: tr, image: image, err: err})
		}
		return out
	}
	tests := []struct {
		name   string
		dc     *dcv1.DeploymentConfig
		mutate func(*dcv1.DeploymentConfig)
		// afterResolve changes the DC between resolving and applying.
		afterResolve func(*dcv1.DeploymentConfig)
		image        string
		err          error
		ans          *answer
		wantChanged  bool
		wantImages   []string
		wantLast     []string
		wantChanges  int
	}{
		{
			name: "automatic trigger writes the digest and lastTriggeredImage", dc: testDC(params(true, "web")), image: appV1,
			wantChanged: true, wantImages: []string{"init=busybox", "web=" + appV1, "sidecar=proxy:1"}, wantLast: []string{appV1}, wantChanges: 1,
		},
		{
			name: "one trigger feeds two containers and an init container", dc: testDC(params(true, "web", "sidecar", "init")), image: appV1,
			wantChanged: true, wantImages: []string{"init=" + appV1, "web=" + appV1, "sidecar=" + appV1}, wantLast: []string{appV1}, wantChanges: 1,
		},
		{
			name: "nothing to do when already written", dc: testDC(params(true, "web")), image: appV1,
			mutate: func(dc *dcv1.DeploymentConfig) {
				dc.Spec.Template.Spec.Containers[0].Image = appV1
				dc.Spec.Triggers[1].ImageChangeParams.LastTriggeredImage = appV1
			},
			wantImages: []string{"init=busybox", "web=" + appV1, "sidecar=proxy:1"}, wantLast: []string{appV1},
		},
		{
			name: "an emptied container image is written again", dc: testDC(params(true, "web")), image: appV1,
			mutate: func(dc *dcv1.DeploymentConfig) {
				dc.Spec.Template.Spec.Containers[0].Image = ""
				dc.Spec.Triggers[1].ImageChangeParams.LastTriggeredImage = appV1
			},
			wantChanged: true, wantImages: []string{"init=busybox", "web=" + appV1, "sidecar=proxy:1"}, wantLast: []string{appV1}, wantChanges: 1,
		},
		{
			name: "a new digest replaces the old", dc: testDC(params(true, "web")), image: appV2,
			mutate: func(dc *dcv1.DeploymentConfig) {
				dc.Spec.Template.Spec.Containers[0].Image = appV1
				dc.Spec.Triggers[1].ImageChangeParams.LastTriggeredImage = appV1
			},
			wantChanged: true, wantImages: []string{"init=busybox", "web=" + appV2, "sidecar=proxy:1"}, wantLast: []string{appV2}, wantChanges: 1,
		},
		{
			name: "no image yet changes nothing", dc: testDC(params(true, "web")), image: "",
			wantImages: []string{"init=busybox", "web=" + appTag, "sidecar=proxy:1"}, wantLast: []string{""},
		},
		{
			name: "a manual trigger is not written without a request", dc: testDC(params(false, "web")), image: appV1,
			wantImages: []string{"init=busybox", "web=" + appTag, "sidecar=proxy:1"}, wantLast: []string{""},
		},
		{
			name: "a manual trigger is written on a request", dc: testDC(params(false, "web")), image: appV1,
			mutate: func(dc *dcv1.DeploymentConfig) {
				dc.Annotations = map[string]string{dcv1.ImageTriggerRequestAnnotation: "t1"}
			},
			ans: &answer{token: "t1"}, wantChanged: true,
			wantImages: []string{"init=busybox", "web=" + appV1, "sidecar=proxy:1"}, wantLast: []string{appV1}, wantChanges: 1,
		},
		{
			name: "a failed request writes no manual trigger", dc: testDC(params(false, "web")), image: appV1, err: errors.New("unauthorized"),
			mutate: func(dc *dcv1.DeploymentConfig) {
				dc.Annotations = map[string]string{dcv1.ImageTriggerRequestAnnotation: "t1"}
			},
			ans: &answer{token: "t1", err: errors.New("unauthorized")}, wantChanged: true,
			wantImages: []string{"init=busybox", "web=" + appTag, "sidecar=proxy:1"}, wantLast: []string{""},
		},
		{
			name: "a trigger that changed since it was resolved is skipped", dc: testDC(params(true, "web")), image: appV1,
			afterResolve: func(dc *dcv1.DeploymentConfig) {
				dc.Spec.Triggers[1].ImageChangeParams.From.Name = "r.example.com/other:1"
			},
			wantImages: []string{"init=busybox", "web=" + appTag, "sidecar=proxy:1"}, wantLast: []string{""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := tt.dc
			if tt.mutate != nil {
				tt.mutate(dc)
			}
			outcomes := resolved(dc, tt.image, tt.err)
			if tt.afterResolve != nil {
				tt.afterResolve(dc)
			}
			changes, changed := apply(dc, outcomes, tt.ans)
			if changed != tt.wantChanged || len(changes) != tt.wantChanges {
				t.Errorf("apply = %d changes, changed %v; want %d, %v", len(changes), changed, tt.wantChanges, tt.wantChanged)
			}
			if got := images(dc); !slices.Equal(got, tt.wantImages) {
				t.Errorf("images %v, want %v", got, tt.wantImages)
			}
			var last []string
			for _, tr := range dc.Spec.Triggers[1:] {
				last = append(last, tr.ImageChangeParams.LastTriggeredImage)
			}
			if !slices.Equal(last, tt.wantLast) {
				t.Errorf("lastTriggeredImage %v, want %v", last, tt.wantLast)
			}
		})
	}
}

func TestAnswerRequest(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		ans         answer
		want        map[string]string
		wantChanged bool
	}{
		{
			name:        "success",
			annotations: map[string]string{dcv1.ImageTriggerRequestAnnotation: "t2", dcv1.ImageTriggerResponseAnnotation: "t1", dcv1.ImageTriggerErrorAnnotation: "old", "other": "kept"},
			ans:         answer{token: "t2"},
			want:        map[string]string{dcv1.ImageTriggerResponseAnnotation: "t2", "other": "kept"},
			wantChanged: true,
		},
		{
			name:        "failure",
			annotations: map[string]string{dcv1.ImageTriggerRequestAnnotation: "t1"},
			ans:         answer{token: "t1", err: errors.New("registry down")},
			want:        map[string]string{dcv1.ImageTriggerResponseAnnotation: "t1", dcv1.ImageTriggerErrorAnnotation: "registry down"},
			wantChanged: true,
		},
		{
			name:        "a newer request is left for the next sync",
			annotations: map[string]string{dcv1.ImageTriggerRequestAnnotation: "t2"},
			ans:         answer{token: "t1"},
			want:        map[string]string{dcv1.ImageTriggerRequestAnnotation: "t2"},
		},
		{
			name: "no request",
			ans:  answer{token: "t1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := testDC()
			dc.Annotations = tt.annotations
			if got := answerRequest(dc, &tt.ans); got != tt.wantChanged {
				t.Errorf("answerRequest = %v, want %v", got, tt.wantChanged)
			}
			if len(dc.Annotations) != len(tt.want) {
				t.Fatalf("annotations %v, want %v", dc.Annotations, tt.want)
			}
			for k, v := range tt.want {
				if dc.Annotations[k] != v {
					t.Errorf("annotation %s = %q, want %q", k, dc.Annotations[k], v)
				}
			}
		})
	}
}

func TestFailureMessageAndTruncate(t *testing.T) {
	dc := testDC(params(true, "web"), params(false, "web"))
	trs := dockerTriggers(dc)
	msg := failureMessage([]outcome{{trigger: trs[0], err: errors.New("down")}, {trigger: trs[1], image: appV1}})
	if msg != appTag+": down" {
		t.Errorf("failureMessage = %q", msg)
	}
	if got := failureMessage([]outcome{{trigger: trs[0], image: appV1}}); got != "" {
		t.Errorf("failureMessage without errors = %q", got)
	}
	long := strings.Repeat("é", maxMessage)
	got := truncate(long)
	if len(got) > maxMessage || !strings.HasSuffix(got, "...") || !strings.HasPrefix(long, strings.TrimSuffix(got, "...")) {
		t.Errorf("truncate gave %d bytes ending %q", len(got), got[len(got)-5:])
	}
}

func TestWantedCondition(t *testing.T) {
	failing := &dcv1.DeploymentCondition{Type: dcv1.ImageTriggerFailure, Status: corev1.ConditionTrue, Reason: ReasonImageResolveFailed, Message: "down"}
	resolved := &dcv1.DeploymentCondition{Type: dcv1.ImageTriggerFailure, Status: corev1.ConditionFalse, Reason: ReasonImagesResolved, Message: "every image trigger resolves"}
	tests := []struct {
		name       string
		current    *dcv1.DeploymentCondition
		message    string
		wantWrite  bool
		wantStatus corev1.ConditionStatus
	}{
		{name: "no failure, no condition", current: nil, message: ""},
		{name: "first failure", current: nil, message: "down", wantWrite: true, wantStatus: corev1.ConditionTrue},
		{name: "same failure", current: failing, message: "down"},
		{name: "another failure", current: failing, message: "unauthorized", wantWrite: true, wantStatus: corev1.ConditionTrue},
		{name: "recovery", current: failing, message: "", wantWrite: true, wantStatus: corev1.ConditionFalse},
		{name: "still fine", current: resolved, message: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, write := wantedCondition(tt.current, tt.message)
			if write != tt.wantWrite || (write && got.Status != tt.wantStatus) {
				t.Errorf("wantedCondition = %+v, %v", got, write)
			}
		})
	}
}
