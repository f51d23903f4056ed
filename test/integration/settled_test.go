package integration

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// reportRC writes the status kube-controller-manager's RC manager would:
// it has seen the RC's spec and runs pods replicas. This suite runs no RC
// manager.
func reportRC(t *testing.T, ns, name string, pods int32) {
	t.Helper()
	setRCStatus(t, ns, name, func(rc *corev1.ReplicationController) {
		rc.Status.ObservedGeneration = rc.Generation
		rc.Status.Replicas = pods
	})
}

// isSettled reports whether an RC carries the settled label.
func isSettled(rc *corev1.ReplicationController) bool {
	return rc.Labels[dcv1.DeploymentSettledLabel] == "true"
}

// rollOutVersions rolls a DeploymentConfig out to versions 1..n, each by a
// template change, and reports each older deployment scaled down once the
// controller has scaled it, so that it settles.
func rollOutVersions(t *testing.T, ns, name string, n int) {
	t.Helper()
	for v := 1; v <= n; v++ {
		if v > 1 {
			updateDC(t, ns, name, func(dc *dcv1.DeploymentConfig) {
				dc.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("registry.example.com/web:%d", v)
			})
		}
		runDeployer(t, ns, fmt.Sprintf("%s-%d", name, v), corev1.PodSucceeded)
		if v == 1 {
			continue
		}
		previous := fmt.Sprintf("%s-%d", name, v-1)
		waitRC(t, ns, previous, "scaled down", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 0 })
		reportRC(t, ns, previous, 0)
		waitRC(t, ns, previous, "labelled settled", isSettled)
	}
}

// Old deployments are labelled settled once a newer one is active and they
// are scaled down, and history cleanup counts them though the controller no
// longer caches them.
func TestSettledDeploymentsAreKeptToTheHistoryLimit(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) { dc.Spec.RevisionHistoryLimit = ptr(int32(2)) }))
	rollOutVersions(t, ns, "web", 5)
	waitFor(t, "history pruned to 2 older deployments", func(ctx context.Context) (bool, string, error) {
		rcs := &corev1.ReplicationControllerList{}
		if err := cluster.client.List(ctx, rcs, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var names []string
		for _, rc := range rcs.Items {
			names = append(names, fmt.Sprintf("%s settled=%t", rc.Name, isSettled(&rc)))
		}
		want := []string{"web-3 settled=true", "web-4 settled=true", "web-5 settled=false"}
		return reflect.DeepEqual(names, want), fmt.Sprintf("%v", names), nil
	})

	// Lowering the limit prunes settled deployments too.
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { dc.Spec.RevisionHistoryLimit = ptr(int32(0)) })
	for _, name := range []string{"web-3", "web-4"} {
		waitGone(t, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
}

// When the active deployment is deleted and the latest rollout fails, the
// fall-back takes the newest settled Complete deployment back and scales it
// up.
func TestFallBackTakesASettledDeploymentBack(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	rollOutVersions(t, ns, "web", 3)

	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:broken"
	})
	waitPhase(t, ns, "web-4", dcv1.DeploymentPhasePending)
	// Background: this suite runs no garbage collector to honour the
	// orphaning that RCs default to.
	active := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-3"}}
	if err := cluster.client.Delete(context.Background(), active, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	runDeployer(t, ns, "web-4", corev1.PodFailed)
	waitRC(t, ns, "web-2", "taken back and scaled up", func(rc *corev1.ReplicationController) bool {
		return !isSettled(rc) && deployment.Replicas(rc) == 3
	})
	waitRC(t, ns, "web-1", "still settled at 0", func(rc *corev1.ReplicationController) bool {
		return isSettled(rc) && deployment.Replicas(rc) == 0
	})
}

// A settled deployment scaled by hand is scaled back to zero, and settles
// again once its pods are gone.
func TestSettledRCScaledByHandIsReverted(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	rollOutVersions(t, ns, "web", 2)

	patchRC(t, ns, "web-1", func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr(int32(2)) })
	reportRC(t, ns, "web-1", 2)
	waitRC(t, ns, "web-1", "scaled back to 0", func(rc *corev1.ReplicationController) bool {
		return !isSettled(rc) && deployment.Replicas(rc) == 0
	})
	reportRC(t, ns, "web-1", 0)
	waitRC(t, ns, "web-1", "settled again", isSettled)
}
