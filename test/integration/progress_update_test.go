package integration

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// The API server answers a JSON patch whose test fails with a bare 422, not
// with the patch library's message: deployment.Update must still take it
// for a conflict, read the deployment again and apply its change to what
// the other writer wrote, both for a record and for a deployment that
// still has the keys of the release before it.
func TestProgressUpdateAfterAnotherWriter(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t, time.Minute)
	kube, err := kubernetes.NewForConfig(cluster.cfg)
	if err != nil {
		t.Fatal(err)
	}
	rcs := kube.CoreV1().ReplicationControllers(ns)
	for _, tt := range []struct {
		name        string
		annotations map[string]string
	}{
		{"record", map[string]string{dcv1.RolloutProgressAnnotation: `{"format":1,"seq":1,"stage":"Steps","step":1,"steps":2}`}},
		{"old keys", map[string]string{dcv1.KeyPrefix + "deployment.step": "1", dcv1.KeyPrefix + "deployment.steps": "2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc := &corev1.ReplicationController{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "progress-", Annotations: tt.annotations},
				Spec: corev1.ReplicationControllerSpec{
					Replicas: ptr(int32(0)),
					Selector: map[string]string{"app": "progress"},
					Template: &corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "progress"}},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
					},
				},
			}
			stale, err := rcs.Create(ctx, rc, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// Another writer records a consumed request after this one read.
			if _, err := deployment.Update(ctx, rcs, stale, func(p *deployment.Progress) error { p.Consume("other"); return nil }); err != nil {
				t.Fatalf("the other writer: %v", err)
			}
			written, err := deployment.Update(ctx, rcs, stale, func(p *deployment.Progress) error { p.Step = 2; return nil })
			if err != nil {
				t.Fatalf("writing from a stale copy: %v", err)
			}
			got := deployment.ProgressOf(written)
			if got.Step != 2 || !got.HasConsumed("other") {
				t.Errorf("record %s: want step 2 with the other writer's request consumed", got.Encode())
			}
			if _, ok := written.Annotations[dcv1.KeyPrefix+"deployment.step"]; ok {
				t.Errorf("the old step key is still there: %v", written.Annotations)
			}
		})
	}
}
