package chaos

import (
	"syscall"
	"testing"
	"time"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// Scenario d: the kube-apiserver is restarted (gracefully or killed) while
// rollouts run. dc-controller, the deployers and the hooks lose the API
// server for a few seconds; every rollout must still end Complete, once.
func TestAPIServerRestart(t *testing.T) {
	ensureControllers(t, defaultControllers())
	runRounds(t, "d apiserver restart", func(r *round) {
		ctx := r.ctx
		dcs := names("api", 2+r.rand.IntN(3))
		sig := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}[r.rand.IntN(2)]
		if testing.Short() {
			// A crash: a graceful stop takes its grace period more.
			dcs, sig = dcs[:2], syscall.SIGKILL
		}
		opts := func(i int) rollout.Options {
			o := rollout.Options{Replicas: 4, Strategy: dcv1.DeploymentStrategyTypeRolling, MaxSurge: "1", MaxUnavailable: "0"}
			if i%2 == 1 {
				o.Strategy = dcv1.DeploymentStrategyTypeRecreate
				o.Hooks = map[string]*dcv1.LifecycleHook{"mid": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "sleep 2")}
			}
			return o
		}
		for i, name := range dcs {
			if err := suite.dcs.Create(ctx, rollout.NewDC(r.ns, name, opts(i))); err != nil {
				r.t.Fatal(err)
			}
		}
		r.reportErrors("first rollout of", forEach(dcs, len(dcs), func(name string) error { return r.checkCompleted(ctx, name, 1, 1) }))
		if r.t.Failed() {
			return
		}
		r.reportErrors("changing", forEach(dcs, createParallelism, func(name string) error { return suite.dcs.ChangeConfig(ctx, r.ns, name) }))
		if err := r.waitAnyRunning(ctx, dcs, 2, rolloutTimeout); err != nil {
			r.t.Fatalf("waiting for a rollout to run: %v", err)
		}
		if err := pause(ctx, between(r.rand, 0, 2*time.Second)); err != nil {
			r.t.Fatal(err)
		}
		restart, err := suite.env.RestartAPIServer(ctx, sig)
		if err != nil {
			r.t.Fatalf("restarting the kube-apiserver: %v", err)
		}
		r.fault("kube-apiserver stopped by %v and started again, away %s", restart.Signal, restart.Away.Round(100*time.Millisecond))
		r.reportErrors("after the restart,", forEach(dcs, len(dcs), func(name string) error { return r.checkCompleted(ctx, name, 2, 2) }))
	})
}
