package controller

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/cachedconfig"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// cached returns rc as dc-controller's cache holds it.
func cached(t *testing.T, rc *corev1.ReplicationController) *corev1.ReplicationController {
	t.Helper()
	obj, err := transformRC(rc.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*corev1.ReplicationController)
}

// TestCachedRCDecidesAlike: every decision the controllers take from an RC's
// encoded DeploymentConfig comes out the same from the cache's slimmed copy.
func TestCachedRCDecidesAlike(t *testing.T) {
	base := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Test = true
		dc.Spec.Triggers = append(dc.Spec.Triggers, imageTrigger(true, "registry.example.com/web@sha256:1"))
		dc.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	})
	full := rcOf(t, base, 1, dcv1.DeploymentPhaseComplete, 4)
	slim := cached(t, full)
	if _, ok := slim.Annotations[dcv1.EncodedDeploymentConfigAnnotation]; ok {
		t.Error("a Complete RC in the cache keeps its encoded DeploymentConfig")
	}
	if slim.Spec.Template != nil || slim.ManagedFields != nil {
		t.Error("the cache keeps the RC's pod template or managedFields")
	}
	sameTemplate := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Test = true
		// 1000m is 1 CPU: the same template, written differently.
		dc.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m")}
		dc.Spec.Template.Spec.Volumes = []corev1.Volume{}
	})
	otherImage := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = "img:2"
	})
	for _, tc := range []struct {
		name string
		dc   *dcv1.DeploymentConfig
	}{{"encoded template", base}, {"equal template", sameTemplate}, {"other template", otherImage}} {
		want := deployment.TemplateMatches(tc.dc, full)
		if got := templateMatches(tc.dc, slim); got != want {
			t.Errorf("%s: cached RC matches %v, the full one %v", tc.name, got, want)
		}
		if got := templateMatches(tc.dc, full); got != want {
			t.Errorf("%s: uncached RC matches %v, want %v", tc.name, got, want)
		}
	}
	s := configSummary(slim)
	if !s.Test || s.Images["registry.example.com/web:stable"] != "registry.example.com/web@sha256:1" {
		t.Errorf("summary %+v lacks test or the triggered image", s)
	}
}

func TestCachedRCKeepsEncodingWhileNew(t *testing.T) {
	rc := rcOf(t, testDC(nil), 2, dcv1.DeploymentPhaseNew, 0)
	slim := cached(t, rc)
	if slim.Annotations[dcv1.EncodedDeploymentConfigAnnotation] != rc.Annotations[dcv1.EncodedDeploymentConfigAnnotation] {
		t.Error("a New RC lost its encoded DeploymentConfig, which its deployer pod is built from")
	}
}

func TestCachedRCUndecodable(t *testing.T) {
	rc := rcOf(t, testDC(nil), 1, dcv1.DeploymentPhaseComplete, 4)
	rc.Annotations[dcv1.EncodedDeploymentConfigAnnotation] = "{"
	slim := cached(t, rc)
	if s := configSummary(slim); s.Error == "" {
		t.Error("an undecodable encoding: want a summary with an error")
	}
	if templateMatches(testDC(nil), slim) {
		t.Error("an undecodable encoding matches a template")
	}
}

func TestCachedPod(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1-deploy", Namespace: "ns", UID: "u",
			Labels:        map[string]string{dcv1.DeployerPodForDeploymentLabel: "web-1"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "deployment", Image: "img"}}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded", ContainerStatuses: []corev1.ContainerStatus{
			{Name: "deployment", Image: "img", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "boom"}}},
		}},
	}
	obj, err := transformPod(pod.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	slim := obj.(*corev1.Pod)
	if slim.ManagedFields != nil || slim.Spec.Containers[0].Image != "" || slim.Status.ContainerStatuses[0].Image != "" {
		t.Error("the cache keeps a deployer pod's spec, statuses or managedFields whole")
	}
	if slim.Labels[dcv1.DeployerPodForDeploymentLabel] != "web-1" || slim.UID != "u" {
		t.Error("the cache lost the pod's metadata")
	}
	if got, want := podFailureReason(slim), podFailureReason(pod); got != want || !podFinished(slim) {
		t.Errorf("cached pod: failure %q, want %q", got, want)
	}

	// A deployer whose container exited 0, before the kubelet writes
	// Succeeded: the cached pod says so as the pod does.
	exited := pod.DeepCopy()
	exited.Spec.RestartPolicy = corev1.RestartPolicyNever
	exited.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
		{Name: "deployment", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
	}}
	obj, err = transformPod(exited.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if !deployerSucceeded(exited) || !deployerSucceeded(obj.(*corev1.Pod)) {
		t.Error("a deployer pod whose container exited 0 has not succeeded once cached")
	}
}

// TestCachedRCSelector: the cache keeps the selector only of an RC no RC
// manager has reported on, the one whose pods leftoverPods looks up.
func TestCachedRCSelector(t *testing.T) {
	dc := testDC(nil)
	for _, tc := range []struct {
		name     string
		mutate   func(*corev1.ReplicationController)
		selector bool
	}{
		{"settled", func(*corev1.ReplicationController) {}, false},
		{"still running", func(rc *corev1.ReplicationController) {
			rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseRunning)
		}, false},
		{"pods not yet gone", func(rc *corev1.ReplicationController) { rc.Status.Replicas = 1 }, false},
		{"scale-down not yet seen", func(rc *corev1.ReplicationController) { rc.Generation = 3 }, false},
		{"never reported on", func(rc *corev1.ReplicationController) { rc.Status.ObservedGeneration = 0 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := rcOf(t, dc, 1, dcv1.DeploymentPhaseFailed, 0)
			rc.Generation, rc.Status.ObservedGeneration = 2, 2
			tc.mutate(rc)
			if got := cached(t, rc).Spec.Selector != nil; got != tc.selector {
				t.Errorf("cached RC has a selector: %v, want %v", got, tc.selector)
			}
		})
	}
}

// TestCachedMetadataUnchanged: sharing strings changes no label,
// annotation or owner reference.
func TestCachedMetadataUnchanged(t *testing.T) {
	rc := rcOf(t, testDC(nil), 1, dcv1.DeploymentPhaseRunning, 2)
	rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps.deployconfig.io/v1", Kind: "DeploymentConfig", Name: "web", UID: "dc-uid"}}
	slim := cached(t, rc)
	if !reflect.DeepEqual(slim.Labels, rc.Labels) || !reflect.DeepEqual(slim.OwnerReferences, rc.OwnerReferences) || slim.Namespace != rc.Namespace {
		t.Errorf("cached metadata changed: %+v, want %+v", slim.ObjectMeta, rc.ObjectMeta)
	}
	for k, v := range rc.Annotations {
		if k != dcv1.EncodedDeploymentConfigAnnotation && slim.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, slim.Annotations[k], v)
		}
	}
}

// TestCachedDCConditions: the cache keeps a DeploymentConfig's conditions
// as they are, in a slice of their number, and the status a sync writes
// from the cached copy carries them unchanged.
func TestCachedDCConditions(t *testing.T) {
	now := metav1.Now()
	full := testDC(func(dc *dcv1.DeploymentConfig) {
		for _, ct := range []dcv1.DeploymentConditionType{"Available", "Progressing", "Ready", "Reconciling", "Stalled"} {
			dc.Status.Conditions = append(dc.Status.Conditions, dcv1.DeploymentCondition{
				Type: ct, Status: corev1.ConditionTrue, LastUpdateTime: now, LastTransitionTime: now,
				Reason: "RolloutComplete", Message: "Rollout #3 is complete",
			})
		}
	})
	obj, err := transformDC(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*dcv1.DeploymentConfig).Status.Conditions
	if !reflect.DeepEqual(got, full.Status.Conditions) {
		t.Errorf("cached conditions = %+v, want %+v", got, full.Status.Conditions)
	}
	if cap(got) != len(got) {
		t.Errorf("cached conditions have room for %d, want %d", cap(got), len(got))
	}
	none, err := transformDC(testDC(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c := none.(*dcv1.DeploymentConfig).Status.Conditions; c != nil {
		t.Errorf("a DC without conditions has %+v once cached", c)
	}
}

// TestCachedDCDecidesAlike: a DeploymentConfig read from the cache and
// expanded fires the same triggers as the full one, and the deployment
// made from it encodes no cache-only annotation.
func TestCachedDCDecidesAlike(t *testing.T) {
	full := testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Annotations = map[string]string{"team": "web"}
		dc.Spec.Triggers = append(dc.Spec.Triggers, imageTrigger(true, "registry.example.com/web@sha256:2"))
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web@sha256:2"
	})
	obj, err := transformDC(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	slim := obj.(*dcv1.DeploymentConfig)
	if slim.Spec.Template != nil {
		t.Fatal("the cache keeps the DeploymentConfig's decoded pod template")
	}
	expanded := *slim
	if err := cachedconfig.Expand(&expanded); err != nil {
		t.Fatal(err)
	}
	for _, latest := range []*corev1.ReplicationController{
		nil,
		rcOf(t, full, 1, dcv1.DeploymentPhaseComplete, 4),
		rcOf(t, testDC(nil), 1, dcv1.DeploymentPhaseComplete, 4),
	} {
		want := triggeredRollout(full, latest)
		if got := triggeredRollout(&expanded, latest); !reflect.DeepEqual(got, want) {
			t.Errorf("cached DC fires %+v, the full one %+v", got, want)
		}
	}
	expanded.Status.LatestVersion = 2
	rc, err := deployment.New(&expanded)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := deployment.DecodeConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := decoded.Annotations[cachedconfig.TemplateAnnotation]; ok || decoded.Annotations["team"] != "web" {
		t.Errorf("encoded DeploymentConfig's annotations = %v, want the user's only", decoded.Annotations)
	}
}

// TestCachedDCSelectorAndTypeMeta: the cache keeps a DeploymentConfig's
// selector and kind as they are, sharing the labels' map only when the
// selector is the labels, and a deep copy of the cached DC has maps of its
// own.
func TestCachedDCSelectorAndTypeMeta(t *testing.T) {
	tests := []struct {
		name     string
		labels   map[string]string
		selector map[string]string
		shared   bool
	}{
		{name: "selector is the labels", labels: map[string]string{"app": "web"}, selector: map[string]string{"app": "web"}, shared: true},
		{name: "labels with more", labels: map[string]string{"app": "web", "team": "a"}, selector: map[string]string{"app": "web"}},
		{name: "other selector", labels: map[string]string{"app": "web"}, selector: map[string]string{"app": "api"}},
		{name: "no labels", selector: map[string]string{"app": "web"}},
		{name: "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			full := testDC(func(dc *dcv1.DeploymentConfig) {
				dc.Labels, dc.Spec.Selector = tt.labels, tt.selector
				dc.SetGroupVersionKind(dcv1.GroupVersion.WithKind("DeploymentConfig"))
			})
			obj, err := transformDC(full.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			slim := obj.(*dcv1.DeploymentConfig)
			if !reflect.DeepEqual(slim.Labels, full.Labels) || !reflect.DeepEqual(slim.Spec.Selector, full.Spec.Selector) {
				t.Errorf("cached labels %v, selector %v; want %v, %v", slim.Labels, slim.Spec.Selector, full.Labels, full.Spec.Selector)
			}
			if slim.TypeMeta != full.TypeMeta {
				t.Errorf("cached type %+v, want %+v", slim.TypeMeta, full.TypeMeta)
			}
			shared := slim.Spec.Selector != nil && reflect.ValueOf(slim.Spec.Selector).UnsafePointer() == reflect.ValueOf(slim.Labels).UnsafePointer()
			if shared != tt.shared {
				t.Errorf("selector shares the labels' map: %v, want %v", shared, tt.shared)
			}
			copied := slim.DeepCopy()
			if copied.Spec.Selector != nil {
				copied.Spec.Selector["changed"] = "yes"
				if _, ok := copied.Labels["changed"]; ok {
					t.Error("a deep copy of the cached DC shares its selector's map with its labels")
				}
				if _, ok := slim.Spec.Selector["changed"]; ok {
					t.Error("changing a deep copy changed the cached DC")
				}
			}
		})
	}
}

// TestCachedTypeMeta: RCs and pods keep their kind and API version.
func TestCachedTypeMeta(t *testing.T) {
	rc := rcOf(t, testDC(nil), 1, dcv1.DeploymentPhaseComplete, 2)
	rc.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ReplicationController"))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1-deploy"}}
	pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	tests := []struct {
		name      string
		transform func(any) (any, error)
		obj       interface {
			GetObjectKind() schema.ObjectKind
		}
	}{
		{name: "replicationcontroller", transform: transformRC, obj: rc},
		{name: "pod", transform: transformPod, obj: pod},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.obj.GetObjectKind().GroupVersionKind()
			got, err := tt.transform(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if gvk := got.(interface{ GetObjectKind() schema.ObjectKind }).GetObjectKind().GroupVersionKind(); gvk != want {
				t.Errorf("cached kind %v, want %v", gvk, want)
			}
		})
	}
}
