package integration

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// TestNameTakenByAForeignRC: an RC named like the next deployment that is
// not the DeploymentConfig's (here one left over from OpenShift) is
// reported with an event and Progressing=False naming it, and the rollout
// goes on once it is deleted.
func TestNameTakenByAForeignRC(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)

	foreign := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-2",
			Annotations: map[string]string{"openshift.io/deployment-config.name": "web", "openshift.io/deployment-config.latest-version": "2"}},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr(int32(0)),
			Selector: map[string]string{"leftover": "web-2"},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"leftover": "web-2"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example.com/old:1"}}},
			},
		},
	}
	mustCreate(t, foreign)
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:2"
	})

	waitEvent(t, ns, "web", "DeploymentCreationFailed")
	waitCondition(t, ns, "web", dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.ReplicationControllerCreateErrorReason)
	dc := getDC(t, ns, "web")
	if dc.Status.LatestVersion != 2 {
		t.Fatalf("latestVersion = %d, want 2", dc.Status.LatestVersion)
	}
	for _, c := range dc.Status.Conditions {
		if c.Type == dcv1.DeploymentProgressing && (!strings.Contains(c.Message, `"web-2"`) || !strings.Contains(c.Message, "OpenShift")) {
			t.Errorf("Progressing message %q does not name web-2 and say it is an OpenShift leftover", c.Message)
		}
	}
	rc, err := getRC(context.Background(), ns, "web-2")
	if err != nil {
		t.Fatal(err)
	}
	if metav1.GetControllerOf(rc) != nil || rc.Labels[dcv1.DeploymentConfigLabel] != "" {
		t.Errorf("the foreign RC was taken over: owners %v, labels %v", rc.OwnerReferences, rc.Labels)
	}

	// Background: the orphan finalizer an RC gets by default waits for a
	// garbage collector this control plane does not run.
	if err := cluster.client.Delete(context.Background(), foreign, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	// The controller may create its own web-2 at once: wait for that
	// rather than for the name to be free.
	waitRC(t, ns, "web-2", "made by the DeploymentConfig", func(rc *corev1.ReplicationController) bool {
		ref := metav1.GetControllerOf(rc)
		return rc.UID != foreign.UID && ref != nil && ref.UID == dc.UID
	})
	runDeployer(t, ns, "web-2", corev1.PodSucceeded)
	waitCondition(t, ns, "web", dcv1.DeploymentProgressing, corev1.ConditionTrue, dcv1.NewReplicationControllerAvailableReason)
	waitRC(t, ns, "web-2", "3 replicas", func(rc *corev1.ReplicationController) bool {
		return deployment.Replicas(rc) == 3 && deployment.Version(rc) == 2
	})
	waitRC(t, ns, "web-1", "scaled down", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 0 })
}
