package integration

import (
	"context"
	"fmt"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// blueGreenDC is a BlueGreen DeploymentConfig web with the Services web
// and web-preview, created selecting every version's pods ({app: web}).
func blueGreenDC(t *testing.T, ns string) {
	t.Helper()
	for _, name := range []string{"web", "web-preview"} {
		mustCreate(t, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"},
				Ports:    []corev1.ServicePort{{Port: 80}},
			},
		})
	}
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{
			Type:            dcv1.DeploymentStrategyTypeBlueGreen,
			BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: "web", PreviewService: "web-preview"},
		}
	}))
}

// deploymentSelector is the selector of web's deployment rc.
func deploymentSelector(rc string) map[string]string {
	return map[string]string{"app": "web", dcv1.DeploymentConfigSelectorLabel: "web", dcv1.DeploymentSelectorLabel: rc}
}

// waitSelects waits until the Service selects exactly rc's pods and
// carries the label of the Services dc-controller keeps.
func waitSelects(t *testing.T, ns, service, rc string) {
	t.Helper()
	want := deploymentSelector(rc)
	waitFor(t, fmt.Sprintf("service %s to select %s", service, rc), func(ctx context.Context) (bool, string, error) {
		svc := &corev1.Service{}
		if err := cluster.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: service}, svc); err != nil {
			return false, "", err
		}
		ok := maps.Equal(svc.Spec.Selector, want) && svc.Labels[dcv1.ServiceOfLabel] == "web"
		return ok, fmt.Sprintf("selector %v, labels %v", svc.Spec.Selector, svc.Labels), nil
	})
}

// editService changes a Service as a person or a GitOps tool would.
func editService(t *testing.T, ns, name string, change func(*corev1.Service)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		svc := &corev1.Service{}
		if err := cluster.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, svc); err != nil {
			return err
		}
		change(svc)
		return cluster.client.Update(context.Background(), svc)
	})
	if err != nil {
		t.Fatalf("edit service %s: %v", name, err)
	}
}

// TestBlueGreenServicesReassertedOnDrift: dc-controller points a BlueGreen
// DeploymentConfig's Services at the live deployment and puts them back
// when they drift: a selector that lost its deployment key (it selected
// every version's pods) and a Service reset to {app: web} with the
// controller's label gone (as a GitOps tool re-applying its manifest).
func TestBlueGreenServicesReassertedOnDrift(t *testing.T) {
	ns := newNamespace(t)
	blueGreenDC(t, ns)
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	waitSelects(t, ns, "web", "web-1")
	waitSelects(t, ns, "web-preview", "web-1")

	editService(t, ns, "web", func(svc *corev1.Service) { delete(svc.Spec.Selector, dcv1.DeploymentSelectorLabel) })
	waitSelects(t, ns, "web", "web-1")

	editService(t, ns, "web", func(svc *corev1.Service) {
		svc.Spec.Selector = map[string]string{"app": "web"}
		delete(svc.Labels, dcv1.ServiceOfLabel)
	})
	waitSelects(t, ns, "web", "web-1")

	editService(t, ns, "web-preview", func(svc *corev1.Service) {
		svc.Spec.Selector = map[string]string{"app": "web", "deployment": "web-0"}
	})
	waitSelects(t, ns, "web-preview", "web-1")
}

// TestBlueGreenFallBackKeepsASwitchedDeployment: a rollout whose deployer
// switched the active Service for good and then failed (a newer version
// cancelled it during scaleDownDelaySeconds, or it was killed) leaves its
// deployment live: the fall-back keeps it scaled up, scales the version it
// replaced down, and the active Service stays on it.
func TestBlueGreenFallBackKeepsASwitchedDeployment(t *testing.T) {
	ns := newNamespace(t)
	blueGreenDC(t, ns)
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	waitRC(t, ns, "web-1", "scaled up", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 3 })

	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:2"
	})
	pod := waitPod(t, ns, deployment.DeployerPodName("web-2"))
	setPodPhase(t, ns, pod.Name, corev1.PodRunning)
	waitPhase(t, ns, "web-2", dcv1.DeploymentPhaseRunning)
	// What the deployer does up to its final switch: web-2 at full size,
	// marked switched for good, then the active Service on it.
	patchRC(t, ns, "web-2", func(rc *corev1.ReplicationController) {
		rc.Spec.Replicas = ptr(int32(3))
		p := deployment.ProgressOf(rc)
		p.Seq++
		p.Stage, p.Switch = deployment.StageSwitched, deployment.SwitchFinal
		deployment.SetProgress(rc, p)
	})
	editService(t, ns, "web", func(svc *corev1.Service) { svc.Spec.Selector = deploymentSelector("web-2") })

	setPodPhase(t, ns, pod.Name, corev1.PodFailed)
	waitPhase(t, ns, "web-2", dcv1.DeploymentPhaseFailed)
	waitRC(t, ns, "web-1", "scaled down by the fall-back", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 0 })
	if rc, err := getRC(context.Background(), ns, "web-2"); err != nil || deployment.Replicas(rc) != 3 {
		t.Fatalf("web-2 after the fall-back: %v replicas, err %v; want 3", rc.Spec.Replicas, err)
	}
	waitSelects(t, ns, "web", "web-2")
	waitSelects(t, ns, "web-preview", "web-2")
}
