package security

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// A canary paused at a step waits for `kubectl dc rollout promote`, which
// writes on the rollout's RC: the read-only users get Forbidden from it,
// and the pause goes on; the admin's promote ends it. The rollout itself
// runs under the shipped deployer Role (the annotations of its steps are
// RC patches).
func TestReadOnlyUserCannotPromote(t *testing.T) {
	ctx := t.Context()
	dcs := rollout.NewClient(suite)
	ns := newNamespace(t, dcs)
	bindReadOnlyUsers(t, ns)
	dc := rollout.NewDC(ns, "canary", rollout.Options{Replicas: 2})
	if dc.Spec.Strategy.RollingParams == nil {
		dc.Spec.Strategy.RollingParams = &dcv1.RollingDeploymentStrategyParams{}
	}
	half := int32(50)
	dc.Spec.Strategy.RollingParams.Steps = []dcv1.RollingStep{{SetWeight: &half}, {Pause: &dcv1.RolloutPause{}}}
	if err := dcs.Create(ctx, dc); err != nil {
		t.Fatal(err)
	}
	if _, rc, err := dcs.WaitLatestDone(ctx, ns, dc.Name, 1, rolloutTimeout); err != nil || deployment.Phase(rc) != dcv1.DeploymentPhaseComplete {
		t.Fatalf("the first rollout did not complete: %v", err)
	}
	if out, errOut, err := dcs.KubectlDC(ctx, ns, "rollout", "latest", dc.Name); err != nil {
		t.Fatalf("the admin's rollout latest: %v: %s%s", err, out, errOut)
	}
	rcName := deployment.Name(dc.Name, 2)
	err := rollout.Poll(ctx, rolloutTimeout, func(ctx context.Context) (bool, error) {
		rc, err := suite.Clientset().CoreV1().ReplicationControllers(ns).Get(ctx, rcName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return rollout.PausedAt(rc, 2), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s to pause at step 2: %v", rcName, err)
	}
	for _, user := range []string{reader, viewer} {
		wantForbidden(t, dcs, ns, user, "rollout", "promote", dc.Name)
		wantForbidden(t, dcs, ns, user, "rollout", "promote", "--full", dc.Name)
	}
	if v, ok := getRC(t, ns, rcName).Annotations[dcv1.PromoteRequestAnnotation]; ok {
		t.Errorf("after the read-only users' promote, %s has the promote request %q", rcName, v)
	}
	if out, errOut, err := dcs.KubectlDC(ctx, ns, "rollout", "promote", dc.Name); err != nil {
		t.Fatalf("the admin's promote: %v: %s%s", err, out, errOut)
	}
	if _, rc, err := dcs.WaitLatestDone(ctx, ns, dc.Name, 2, rolloutTimeout); err != nil || deployment.Phase(rc) != dcv1.DeploymentPhaseComplete {
		t.Fatalf("the promoted rollout did not complete: %v", err)
	}
}
