package deployment

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// FuzzDecodeConfig feeds arbitrary annotation values to the decoder every
// component trusts: it must return a DeploymentConfig with a template or an
// error, never panic.
func FuzzDecodeConfig(f *testing.F) {
	rc, err := New(testDC())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rc.Annotations[dcv1.EncodedDeploymentConfigAnnotation])
	f.Add(`{"spec":{"template":{}}}`)
	f.Add(`{"spec":{"template":{"spec":{"containers":null}},"strategy":{"type":"Recreate","rollingParams":{"maxSurge":"x%"}}}}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, data string) {
		rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{dcv1.EncodedDeploymentConfigAnnotation: data}}}
		dc, err := DecodeConfig(rc)
		if err == nil && dc.Spec.Template == nil {
			t.Fatalf("DecodeConfig(%q) returned no template and no error", data)
		}
		if err == nil {
			// What decodes must also build a deployment.
			if _, err := New(dc); err != nil {
				t.Fatalf("New after DecodeConfig(%q): %v", data, err)
			}
		}
	})
}

// FuzzAnnotationParsers checks the version and replica parsers never panic
// and never return a negative number.
func FuzzAnnotationParsers(f *testing.F) {
	for _, s := range []string{"1", "-1", "", "9223372036854775807", "2147483648", "0x10", " 3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			dcv1.DeploymentVersionAnnotation: value,
			dcv1.DesiredReplicasAnnotation:   value,
			dcv1.DeploymentPhaseAnnotation:   value,
		}}}
		if v := Version(rc); v < 0 {
			t.Fatalf("Version(%q) = %d", value, v)
		}
		if n, ok := DesiredReplicas(rc); n < 0 || (!ok && n != 0) {
			t.Fatalf("DesiredReplicas(%q) = %d, %v", value, n, ok)
		}
		_ = CanTransition(Phase(rc), dcv1.DeploymentPhaseComplete)
	})
}
