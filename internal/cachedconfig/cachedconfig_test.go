package cachedconfig

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestCompactExpand(t *testing.T) {
	template := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "registry.example/web:1",
			Env:       []corev1.EnvVar{{Name: "A", Value: "1"}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
		}}},
	}
	tests := []struct {
		name        string
		annotations map[string]string
		template    *corev1.PodTemplateSpec
	}{
		{name: "template and annotations", annotations: map[string]string{"user": "kept"}, template: template},
		{name: "no annotations", template: template},
		{name: "no template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := &dcv1.DeploymentConfig{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Annotations: tt.annotations},
				Spec:       dcv1.DeploymentConfigSpec{Template: tt.template.DeepCopy()},
			}
			want := dc.DeepCopy()
			if err := Compact(dc); err != nil {
				t.Fatal(err)
			}
			if dc.Spec.Template != nil && tt.template != nil {
				t.Error("Compact kept the decoded pod template")
			}
			// A shallow copy is what a read-only caller expands: the
			// cached object must come out unchanged.
			view := *dc
			cachedAnnotations := dc.Annotations
			if err := Expand(&view); err != nil {
				t.Fatal(err)
			}
			if !apiequality.Semantic.DeepEqual(&view, want) {
				t.Errorf("expanded = %+v, want %+v", view, want)
			}
			if tt.template != nil && cachedAnnotations[TemplateAnnotation] == "" {
				t.Error("expanding a shallow copy changed the cached object's annotations")
			}
		})
	}
}

func TestExpandBadTemplate(t *testing.T) {
	dc := &dcv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Annotations: map[string]string{TemplateAnnotation: "{"}}}
	err := Expand(dc)
	if err == nil || dc.Spec.Template != nil {
		t.Fatalf("Expand of a broken encoding: err %v, template %v; want an error and no template", err, dc.Spec.Template)
	}
}
