package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// selectorWatch records every deployment a Service selects, from the
// moment it starts until the test ends.
type selectorWatch struct{ history *rollout.History[string] }

// watchSelector starts recording the `deployment` key of a Service's
// selector ("" when it has none) at each change.
func watchSelector(t *testing.T, ns, service string) *selectorWatch {
	t.Helper()
	w, err := clientset().CoreV1().Services(ns).Watch(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", service).String(),
	})
	if err != nil {
		t.Fatalf("watching service %s: %v", service, err)
	}
	h := rollout.Record(context.Background(), w, func(obj runtime.Object) (string, bool) {
		svc, ok := obj.(*corev1.Service)
		if !ok {
			return "", false
		}
		return svc.Spec.Selector[dcv1.DeploymentSelectorLabel], true
	})
	t.Cleanup(func() { h.Stop() })
	return &selectorWatch{history: h}
}

// since returns what the Service selected from the first time it selected
// rc on.
func (sw *selectorWatch) since(rc string) []string {
	seen := sw.history.Seen()
	if i := slices.Index(seen, rc); i >= 0 {
		return seen[i:]
	}
	return nil
}

// waitSwitched waits until the deployer has switched the active Service
// to rc and waits out scaleDownDelaySeconds before it scales old down,
// and checks that it recorded the switch as final.
func waitSwitched(t *testing.T, ns, rc, old string) {
	t.Helper()
	waitEndpoints(t, ns, "web", rc, 2)
	want := "--> Keeping " + old + " for"
	var log string
	err := poll(t, rolloutTimeout, func(ctx context.Context) (bool, error) {
		log, _ = suite.cluster.DeployerLog(ctx, ns, rc)
		return strings.Contains(log, want), nil
	})
	if err != nil {
		t.Fatalf("waiting for the deployer of %s to keep %s for scaleDownDelaySeconds: %v; log:\n%s", rc, old, err, log)
	}
	got, err := clientset().CoreV1().ReplicationControllers(ns).Get(t.Context(), rc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mark := deployment.ProgressOf(got).Switch; mark != deployment.SwitchFinal {
		t.Errorf("%s is marked switched=%q after the switch, want %q", rc, mark, deployment.SwitchFinal)
	}
}

// waitRCPhase waits until deployment rc is in phase (a rollout newer
// than rc may have started meanwhile).
func waitRCPhase(t *testing.T, ns, rc string, phase dcv1.DeploymentPhase) {
	t.Helper()
	err := poll(t, rolloutTimeout, func(ctx context.Context) (bool, error) {
		got, err := clientset().CoreV1().ReplicationControllers(ns).Get(ctx, rc, metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		return got.Annotations[dcv1.DeploymentPhaseAnnotation] == string(phase), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s to be %s: %v", rc, phase, err)
	}
}

// checkNeverBack fails the test when the active Service selected anything
// but the given deployments, in that order, from the first of them on.
func checkNeverBack(t *testing.T, sw *selectorWatch, order ...string) {
	t.Helper()
	seen := sw.since(order[0])
	if len(seen) == 0 {
		t.Fatalf("the active service never selected %s", order[0])
	}
	k := 0
	for _, s := range seen {
		for k < len(order) && order[k] != s {
			k++
		}
		if k == len(order) {
			t.Fatalf("after the switch to %s the active service selected %v, want only %v in that order", order[0], seen, order)
		}
	}
}

// TestBlueGreenNewVersionDuringScaleDownDelay is the sequence:
// version 2 is promoted and serving, and version 3 arrives during
// scaleDownDelaySeconds (as an image trigger would bring it). Version 2
// stays live and scaled up, version 1 goes to 0, version 3 rolls out from
// version 2, and the active Service never goes back to version 1.
func TestBlueGreenNewVersionDuringScaleDownDelay(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	blueGreenServices(t, ns)
	delay, now := int32(60), int32(0)
	createDC(t, ns, blueGreenDC(2, dcv1.BlueGreenDeploymentStrategyParams{ScaleDownDelaySeconds: &delay, AutoPromotionSeconds: &now}))
	requireComplete(t, ns, "web", 1)
	waitEndpoints(t, ns, "web", "web-1", 2)
	active := watchSelector(t, ns, "web")

	rollNext(t, ns, 2)
	waitSwitched(t, ns, "web-2", "web-1")
	waitEndpoints(t, ns, "web", "web-2", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 2, "web-2": 2})

	// Version 3 arrives during web-1's delay. It waits for promote, so
	// that the test sees web-2 serve beside it, and has no delay, so that
	// the test need not wait one out again.
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		setEnv(dc, "VERSION", "3")
		dc.Spec.Strategy.BlueGreenParams.ScaleDownDelaySeconds = nil
		dc.Spec.Strategy.BlueGreenParams.AutoPromotionSeconds = nil
	})
	waitRCPhase(t, ns, "web-2", dcv1.DeploymentPhaseFailed)
	// The fall-back keeps the version that serves, and the old one goes;
	// version 3 comes up beside version 2.
	waitPausedAt(t, ns, "web-3", 0)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 2, "web-3": 2})
	waitEndpoints(t, ns, "web", "web-2", 2)
	waitEndpoints(t, ns, "web-preview", "web-3", 2)

	mustDC(t, ns, "rollout", "promote", "web")
	requireComplete(t, ns, "web", 3)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 0, "web-3": 2})
	waitEndpoints(t, ns, "web", "web-3", 2)
	waitEndpoints(t, ns, "web-preview", "web-3", 2)
	checkNeverBack(t, active, "web-2", "web-3")
	log, err := suite.cluster.DeployerLog(t.Context(), ns, "web-3")
	if err != nil {
		t.Fatal(err)
	}
	assertInOrder(t, log,
		"--> Service web now selects web-2",
		"--> Scaling web-3 to 2",
		"--> Service web now selects web-3",
		"--> Scaling web-2 down to zero",
		"--> Success")
}

// TestBlueGreenDeployerDeletedAfterSwitch: the deployer pod of a rollout
// that switched the active Service for good is deleted during
// scaleDownDelaySeconds, as a node drain or a person might. The rollout
// fails, and the deployment it switched to stays live: scaled up and
// selected, the old one scaled down.
func TestBlueGreenDeployerDeletedAfterSwitch(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	blueGreenServices(t, ns)
	delay, now := int32(600), int32(0)
	createDC(t, ns, blueGreenDC(2, dcv1.BlueGreenDeploymentStrategyParams{ScaleDownDelaySeconds: &delay, AutoPromotionSeconds: &now}))
	requireComplete(t, ns, "web", 1)
	waitEndpoints(t, ns, "web", "web-1", 2)
	active := watchSelector(t, ns, "web")

	rollNext(t, ns, 2)
	waitSwitched(t, ns, "web-2", "web-1")
	waitEndpoints(t, ns, "web", "web-2", 2)
	zero := int64(0)
	err := clientset().CoreV1().Pods(ns).Delete(t.Context(), "web-2-deploy", metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil {
		t.Fatalf("deleting the deployer pod: %v", err)
	}
	waitRCPhase(t, ns, "web-2", dcv1.DeploymentPhaseFailed)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 2})
	waitEndpoints(t, ns, "web", "web-2", 2)
	waitEndpoints(t, ns, "web-preview", "web-2", 2)
	checkNeverBack(t, active, "web-2")
}
