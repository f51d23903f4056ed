package node

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// requireAnswer fails the test unless every running pod of a deployment
// answers GET / with the message.
func requireAnswer(t *testing.T, ns, rc, message string) {
	t.Helper()
	pods := podsOf(t, ns, rc)
	if len(pods) == 0 {
		t.Fatalf("%s has no running pods", rc)
	}
	for _, pod := range pods {
		if code, body := get(t, pod, "/"); code != 200 || !strings.Contains(body, message) {
			t.Errorf("pod %s of %s answered %d %q, want 200 and %q", pod.Name, rc, code, body, message)
		}
	}
}

// The sample application's MESSAGE comes from a ConfigMap that the
// DeploymentConfig's configuration snapshots follow: a change of the
// ConfigMap rolls out and the new pods serve it, and `kubectl dc rollout
// undo` brings back pods that serve the old one, from revision 1's copy,
// although the ConfigMap itself still holds the new message.
func TestConfigSnapshotRollbackServesTheOldConfiguration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)
	cms := suite.clientset.CoreV1().ConfigMaps(ns)
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config"}, Data: map[string]string{"MESSAGE": "config one"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dc := appDC(ns, "web", rollout.Options{Replicas: 2, MaxSurge: "1", MaxUnavailable: "0"})
	dc.Spec.ConfigSnapshots = &dcv1.ConfigSnapshots{}
	dc.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}
	create(t, dc)
	requireComplete(t, ns, "web", 1)
	requireAnswer(t, ns, "web-1", "config one")

	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, "web-config", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data["MESSAGE"] = "config two"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	requireComplete(t, ns, "web", 2)
	requireAnswer(t, ns, "web-2", "config two")

	if _, stderr, err := suite.dcs.KubectlDC(ctx, ns, "rollout", "undo", "web"); err != nil || !strings.Contains(stderr, "pinned to the snapshots of revision 1") {
		t.Fatalf("kubectl dc rollout undo web: %v\n%s", err, stderr)
	}
	requireComplete(t, ns, "web", 3)
	requireAnswer(t, ns, "web-3", "config one")
}
