package node

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// dc-controller runs as config/default installs it: two replicas electing
// a leader. When the leader's pod is killed in the middle of a rollout,
// the other replica takes over and the rollout completes; the Deployment
// then brings the killed replica back.
func TestRolloutCompletesWhenTheLeaderIsKilled(t *testing.T) {
	ns := namespace(t)
	create(t, appDC(ns, "web", rollout.Options{Replicas: 2, Strategy: dcv1.DeploymentStrategyTypeRecreate,
		Hooks: map[string]*dcv1.LifecycleHook{"pre": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "echo waiting for the failover; sleep 8")}}))
	err := rollout.Poll(context.Background(), rolloutTimeout, func(ctx context.Context) (bool, error) {
		_, rc, err := suite.dcs.Latest(ctx, ns, "web")
		return rc != nil && deployment.Phase(rc) == dcv1.DeploymentPhaseRunning, err
	})
	if err != nil {
		t.Fatalf("waiting for web-1 to run: %v", err)
	}
	leader := leaderPod(t)
	err = suite.clientset.CoreV1().Pods(realnode.ControllerNamespace).Delete(context.Background(), leader,
		metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	if err != nil {
		t.Fatal(err)
	}
	requireComplete(t, ns, "web", 1)
	if next := leaderPod(t); next == leader {
		t.Errorf("the leader is still %s, which was killed", leader)
	}
	if err := suite.cluster.WaitControllerReady(context.Background(), rolloutTimeout); err != nil {
		t.Fatal(err)
	}
}

// leaderPod is the pod that holds dc-controller's leader Lease (its
// holder identity starts with the pod's name).
func leaderPod(t *testing.T) string {
	t.Helper()
	var holder string
	err := rollout.Poll(context.Background(), rolloutTimeout, func(ctx context.Context) (bool, error) {
		lease, err := suite.clientset.CoordinationV1().Leases(realnode.ControllerNamespace).Get(ctx, controller.LeaderElectionID, metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			return false, nil
		}
		holder = *lease.Spec.HolderIdentity
		pods, err := suite.clientset.CoreV1().Pods(realnode.ControllerNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if strings.HasPrefix(holder, p.Name) && p.DeletionTimestamp == nil {
				holder = p.Name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for a live leader of dc-controller (holder %q): %v", holder, err)
	}
	return holder
}
