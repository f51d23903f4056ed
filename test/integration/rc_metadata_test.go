package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Anyone who may edit RCs can write any deployconfig.io/ label or
// annotation on a DeploymentConfig's deployments. The worst of them leave
// the DeploymentConfig rolling out: a settled label of another value, a
// malformed or huge version, the cache's own summary annotation, and a
// phase deployconfig never writes.
func TestRCMetadataWrittenByHandDoesNotWedgeTheDC(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	rollOutVersions(t, ns, "web", 2)
	replicas := getDC(t, ns, "web").Spec.Replicas
	forgedSummary := `{"templateHash":"forged","test":true}`

	patchRC(t, ns, "web-1", func(rc *corev1.ReplicationController) {
		rc.Labels[dcv1.DeploymentSettledLabel] = "false"
		rc.Annotations[dcv1.DeploymentVersionAnnotation] = "999999999999"
	})
	patchRC(t, ns, "web-2", func(rc *corev1.ReplicationController) {
		rc.Annotations[dcv1.DeploymentVersionAnnotation] = "abc"
		rc.Annotations[dcv1.KeyPrefix+"cached-config-summary"] = forgedSummary
	})
	// Back in the cache, web-1 is seen and labelled settled again.
	waitRC(t, ns, "web-1", "labelled settled again", isSettled)

	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:3"
	})
	waitPhase(t, ns, "web-3", dcv1.DeploymentPhasePending)
	patchRC(t, ns, "web-3", func(rc *corev1.ReplicationController) {
		rc.Annotations[dcv1.KeyPrefix+"cached-config-summary"] = forgedSummary
	})
	runDeployer(t, ns, "web-3", corev1.PodSucceeded)
	waitRC(t, ns, "web-3", "at full size", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == replicas })
	waitRC(t, ns, "web-2", "scaled down", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 0 })
	if v := getDC(t, ns, "web").Status.LatestVersion; v != 3 {
		t.Fatalf("latestVersion %d, want 3", v)
	}

	// A phase deployconfig never writes fails the deployment, naming the
	// value; the fall-back brings the last complete one back.
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:4"
	})
	pod := waitPod(t, ns, deployment.DeployerPodName("web-4"))
	setPodPhase(t, ns, pod.Name, corev1.PodRunning)
	waitPhase(t, ns, "web-4", dcv1.DeploymentPhaseRunning)
	patchRC(t, ns, "web-4", func(rc *corev1.ReplicationController) {
		rc.Annotations[dcv1.DeploymentPhaseAnnotation] = "Bogus"
	})
	failed := waitPhase(t, ns, "web-4", dcv1.DeploymentPhaseFailed)
	if reason := failed.Annotations[dcv1.DeploymentStatusReasonAnnotation]; !strings.Contains(reason, `"Bogus"`) {
		t.Errorf("status reason %q does not name the phase", reason)
	}
	waitEvent(t, ns, "web-4", controller.EventUnknownPhase)
	waitRC(t, ns, "web-3", "still at full size", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == replicas })

	// And the next rollout goes through.
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:5"
	})
	runDeployer(t, ns, "web-5", corev1.PodSucceeded)
	waitRC(t, ns, "web-5", "at full size", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == replicas })
	if v := getDC(t, ns, "web").Status.LatestVersion; v != 5 {
		t.Errorf("latestVersion %d, want 5", v)
	}
}
