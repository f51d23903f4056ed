package deployment

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func testDC() *dcv1.DeploymentConfig {
	dc := &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-1", Labels: map[string]string{"team": "a"}},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: 3,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "img:1"}}},
			},
		},
		Status: dcv1.DeploymentConfigStatus{LatestVersion: 4},
	}
	dcv1.SetDefaults(dc)
	return dc
}

func TestNew(t *testing.T) {
	dc := testDC()
	rc, err := New(dc)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Name != "web-4" || *rc.Spec.Replicas != 0 {
		t.Errorf("rc %s with %d replicas, want web-4 with 0", rc.Name, *rc.Spec.Replicas)
	}
	wantSelector := map[string]string{"app": "web", "deploymentconfig": "web", "deployment": "web-4"}
	for k, v := range wantSelector {
		if rc.Spec.Selector[k] != v || rc.Spec.Template.Labels[k] != v {
			t.Errorf("selector/template label %s = %q/%q, want %q", k, rc.Spec.Selector[k], rc.Spec.Template.Labels[k], v)
		}
	}
	if rc.Labels[dcv1.DeploymentConfigLabel] != "web" || rc.Labels["team"] != "a" {
		t.Errorf("labels = %v", rc.Labels)
	}
	if Phase(rc) != dcv1.DeploymentPhaseNew || Version(rc) != 4 || rc.Annotations[dcv1.DeployerPodAnnotation] != "web-4-deploy" {
		t.Errorf("annotations = %v", rc.Annotations)
	}
	if n, ok := DesiredReplicas(rc); !ok || n != 3 {
		t.Errorf("desired replicas = %d, %v", n, ok)
	}
	if ref := metav1.GetControllerOf(rc); ref == nil || ref.UID != "uid-1" || ref.Kind != "DeploymentConfig" {
		t.Errorf("controller ref = %+v", ref)
	}
	if dc.Spec.Template.Labels["deployment"] != "" {
		t.Error("New changed the DeploymentConfig's template")
	}
	if !TemplateMatches(dc, rc) {
		t.Error("TemplateMatches is false for the RC just made")
	}
	changed := dc.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "img:2"
	if TemplateMatches(changed, rc) {
		t.Error("TemplateMatches is true after an image change")
	}
}

func TestDecodeConfigErrors(t *testing.T) {
	cases := map[string]map[string]string{
		"no annotation": {},
		"not json":      {dcv1.EncodedDeploymentConfigAnnotation: "{"},
		"no template":   {dcv1.EncodedDeploymentConfigAnnotation: `{"spec":{}}`},
	}
	for name, annotations := range cases {
		t.Run(name, func(t *testing.T) {
			rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Annotations: annotations}}
			if _, err := DecodeConfig(rc); err == nil {
				t.Error("DecodeConfig succeeded")
			}
		})
	}
}

func TestCanTransition(t *testing.T) {
	const (
		n = dcv1.DeploymentPhaseNew
		p = dcv1.DeploymentPhasePending
		r = dcv1.DeploymentPhaseRunning
		c = dcv1.DeploymentPhaseComplete
		f = dcv1.DeploymentPhaseFailed
	)
	allowed := map[[2]dcv1.DeploymentPhase]bool{
		{n, p}: true, {n, r}: true, {n, c}: true, {n, f}: true,
		{p, r}: true, {p, c}: true, {p, f}: true,
		{r, c}: true, {r, f}: true,
	}
	for _, from := range []dcv1.DeploymentPhase{n, p, r, c, f} {
		for _, to := range []dcv1.DeploymentPhase{n, p, r, c, f} {
			want := from == to || allowed[[2]dcv1.DeploymentPhase{from, to}]
			if got := CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
}

func TestVersionAndDesiredReplicasParsing(t *testing.T) {
	cases := []struct {
		value       string
		wantVersion int64
		wantOK      bool
	}{{"3", 3, true}, {"", 0, false}, {"-1", 0, false}, {"x", 0, false}}
	for _, tc := range cases {
		rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			dcv1.DeploymentVersionAnnotation: tc.value, dcv1.DesiredReplicasAnnotation: tc.value,
		}}}
		if got := Version(rc); got != tc.wantVersion {
			t.Errorf("Version(%q) = %d, want %d", tc.value, got, tc.wantVersion)
		}
		if _, ok := DesiredReplicas(rc); ok != tc.wantOK {
			t.Errorf("DesiredReplicas(%q) ok = %v, want %v", tc.value, ok, tc.wantOK)
		}
	}
}

// TestNewCopiesOnlyTheIgnoreAnnotation: as OpenShift's, an RC gets none of
// its DeploymentConfig's annotations but the one that says to create no
// deployer pod.
func TestNewCopiesOnlyTheIgnoreAnnotation(t *testing.T) {
	dc := testDC()
	dc.Annotations = map[string]string{
		dcv1.DeployerPodIgnoreAnnotation:                   "true",
		"kubectl.kubernetes.io/last-applied-configuration": "{}",
		"team.example.com/owner":                           "a",
	}
	rc, err := New(dc)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := rc.Annotations[dcv1.DeployerPodIgnoreAnnotation]; !ok || v != "true" {
		t.Errorf("the ignore annotation was not copied: %v", rc.Annotations)
	}
	for _, k := range []string{"kubectl.kubernetes.io/last-applied-configuration", "team.example.com/owner"} {
		if _, ok := rc.Annotations[k]; ok {
			t.Errorf("annotation %s was copied onto the RC", k)
		}
	}
}

func TestIsCancelled(t *testing.T) {
	cases := map[string]bool{"true": true, "True": true, "TRUE": true, "": false, "false": false, "yes": false, "1": false, " true": false}
	for value, want := range cases {
		rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{dcv1.DeploymentCancelledAnnotation: value}}}
		if got := IsCancelled(rc); got != want {
			t.Errorf("IsCancelled(%q) = %v, want %v", value, got, want)
		}
	}
	if IsCancelled(&corev1.ReplicationController{}) {
		t.Error("an RC without annotations is cancelled")
	}
}

// TestLive checks which deployment serves: the newest Complete one, or a
// newer one the active Service was switched to for good (a blue-green
// rollout cancelled during scaleDownDelaySeconds), never one on trial.
func TestLive(t *testing.T) {
	rc := func(v int64, phase dcv1.DeploymentPhase, switched string) *corev1.ReplicationController {
		r := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{
			Name:        Name("web", v),
			Labels:      map[string]string{dcv1.DeploymentConfigLabel: "web"},
			Annotations: map[string]string{dcv1.DeploymentPhaseAnnotation: string(phase)},
		}}
		if switched != "" {
			SetProgress(r, Progress{Stage: StageSwitched, Switch: Switch(switched)})
		}
		return r
	}
	complete, failed, running := dcv1.DeploymentPhaseComplete, dcv1.DeploymentPhaseFailed, dcv1.DeploymentPhaseRunning
	for _, tc := range []struct {
		name string
		rcs  []*corev1.ReplicationController
		skip int
		want string
	}{
		{"none", nil, -1, ""},
		{"newest complete", []*corev1.ReplicationController{rc(1, complete, ""), rc(2, complete, ""), rc(3, failed, "")}, -1, "web-2"},
		{"switched for good, then cancelled", []*corev1.ReplicationController{rc(1, complete, ""), rc(2, failed, dcv1.SwitchedFinal)}, -1, "web-2"},
		{"switched for good, still running", []*corev1.ReplicationController{rc(1, complete, ""), rc(2, running, dcv1.SwitchedFinal)}, -1, "web-2"},
		{"on trial", []*corev1.ReplicationController{rc(1, complete, ""), rc(2, failed, dcv1.SwitchedTrial)}, -1, "web-1"},
		{"skipped", []*corev1.ReplicationController{rc(1, complete, ""), rc(2, running, dcv1.SwitchedFinal)}, 1, "web-1"},
		{"older switch under a newer complete", []*corev1.ReplicationController{rc(2, failed, dcv1.SwitchedFinal), rc(3, complete, "")}, -1, "web-3"},
		{"first rollout switched", []*corev1.ReplicationController{rc(1, failed, dcv1.SwitchedFinal)}, -1, "web-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var skip *corev1.ReplicationController
			if tc.skip >= 0 {
				skip = tc.rcs[tc.skip].DeepCopy()
			}
			got := ""
			if live := Live(tc.rcs, skip); live != nil {
				got = live.Name
			}
			if got != tc.want {
				t.Errorf("Live = %q, want %q", got, tc.want)
			}
		})
	}
}
