package chaos

import (
	"context"
	"fmt"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// handScales is how many hand scalings a round makes.
const handScales = 3

// Scenario g: someone scales a deployment's RC by hand (kubectl scale rc),
// the active one or an old one. dc-controller scales it back: the active
// deployment to the DeploymentConfig's replicas, every other to zero.
func TestRCScaledByHand(t *testing.T) {
	t.Parallel()
	ensureControllers(t, defaultControllers())
	runRounds(t, "g rc scaled by hand", func(r *round) {
		ctx := r.ctx
		name := "scaled"
		replicas := 1 + r.rand.Int32N(3)
		if err := suite.dcs.Create(ctx, rollout.NewDC(r.ns, name, rollout.Options{Replicas: replicas, Strategy: dcv1.DeploymentStrategyTypeRolling})); err != nil {
			r.t.Fatal(err)
		}
		if err := r.checkCompleted(ctx, name, 1, 1); err != nil {
			r.t.Fatalf("first rollout: %v", err)
		}
		if r.rand.IntN(2) == 0 {
			if err := suite.dcs.ChangeConfig(ctx, r.ns, name); err != nil {
				r.t.Fatal(err)
			}
			if err := r.checkCompleted(ctx, name, 2, 2); err != nil {
				r.t.Fatalf("second rollout: %v", err)
			}
		}
		for range handScales {
			rc, want := r.pickRC(ctx, name, replicas)
			scale := want
			for scale == want {
				scale = r.rand.Int32N(6)
			}
			if err := scaleRC(ctx, r.ns, rc.Name, scale); err != nil {
				r.t.Fatalf("scaling %s by hand: %v", rc.Name, err)
			}
			r.fault("scaled %s by hand from %d to %d", rc.Name, want, scale)
			if err := suite.dcs.WaitSettled(ctx, r.ns, name, rolloutTimeout); err != nil {
				r.t.Errorf("%s was not scaled back to %d: %v", rc.Name, want, err)
				return
			}
		}
	})
}

// pickRC picks one of the DeploymentConfig's RCs at random and says how
// many replicas it should have.
func (r *round) pickRC(ctx context.Context, name string, replicas int32) (*corev1.ReplicationController, int32) {
	r.t.Helper()
	rcs, err := suite.dcs.Deployments(ctx, r.ns, name)
	if err != nil || len(rcs) == 0 {
		r.t.Fatalf("listing the deployments of %s: %v (%d)", name, err, len(rcs))
	}
	rc := rcs[r.rand.IntN(len(rcs))]
	if rc == deployment.Live(rcs, nil) {
		return rc, replicas
	}
	return rc, 0
}

// scaleRC scales an RC through its scale subresource, as kubectl scale
// does.
func scaleRC(ctx context.Context, ns, name string, replicas int32) error {
	rcs := suite.env.Clientset().CoreV1().ReplicationControllers(ns)
	return rollout.Retry(ctx, func() error {
		scale, err := rcs.GetScale(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		scale.Spec = autoscalingv1.ScaleSpec{Replicas: replicas}
		if _, err := rcs.UpdateScale(ctx, name, scale, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating the scale of %s: %w", name, err)
		}
		return nil
	})
}
