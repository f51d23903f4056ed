package chaos

import (
	"context"
	"testing"
	"time"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/test/clusterenv"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// failoverTimeout bounds how long the standby replica takes to lead after
// the leader is killed: the Lease must expire first (15s in
// controller-runtime), then the standby's next try takes it.
const failoverTimeout = 90 * time.Second

// Scenario c: two dc-controller replicas elect a leader, as the shipped
// Deployment runs them. The leader is killed with SIGKILL in the middle of
// the first rollouts of new DeploymentConfigs, and some of them change
// while no replica leads. The other replica must take over and finish
// everything: every DeploymentConfig ends Complete with its current
// template, no rollout twice.
func TestLeaderFailover(t *testing.T) {
	useControllers(t, clusterenv.ControllerSpec{Replicas: 2, LeaderElect: true})
	runRounds(t, "c leader failover", func(r *round) {
		ctx := r.ctx
		dcs := names("lead", 3+r.rand.IntN(3))
		hook := map[string]*dcv1.LifecycleHook{"pre": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "sleep 1")}
		opts := rollout.Options{Replicas: 3, Strategy: dcv1.DeploymentStrategyTypeRolling, MaxSurge: "1", MaxUnavailable: "0", Hooks: hook}
		leader, err := suite.env.Controllers.WaitLeader(ctx, nil, failoverTimeout)
		if err != nil {
			r.t.Fatal(err)
		}
		r.reportErrors("creating", forEach(dcs, createParallelism, func(name string) error { return suite.dcs.Create(ctx, rollout.NewDC(r.ns, name, opts)) }))
		if err := r.waitAnyRunning(ctx, dcs, 1, rolloutTimeout); err != nil {
			r.t.Fatalf("waiting for a rollout to run: %v", err)
		}
		if err := pause(ctx, between(r.rand, 0, 1500*time.Millisecond)); err != nil {
			r.t.Fatal(err)
		}
		pid := leader.PID()
		if err := leader.Kill(ctx); err != nil {
			r.t.Fatal(err)
		}
		r.fault("SIGKILL the leader %s (pid %d)", leader.Name, pid)
		changed := dcs[:len(dcs)/2+1]
		r.reportErrors("changing while leaderless", forEach(changed, createParallelism, func(name string) error { return suite.dcs.ChangeConfig(ctx, r.ns, name) }))
		successor, err := suite.env.Controllers.WaitLeader(ctx, leader, failoverTimeout)
		if err != nil {
			r.t.Fatalf("no replica took over from %s: %v", leader.Name, err)
		}
		r.t.Logf("%s took over from %s", successor.Name, leader.Name)
		maxVersion := map[string]int64{}
		for _, name := range dcs {
			maxVersion[name] = 1
		}
		for _, name := range changed {
			maxVersion[name] = 2
		}
		r.reportErrors("after the failover,", forEach(dcs, len(dcs), func(name string) error { return r.checkCompleted(ctx, name, 1, maxVersion[name]) }))
		if err := leader.Start(context.WithoutCancel(ctx)); err != nil {
			r.t.Errorf("restarting %s: %v", leader.Name, err)
		}
	})
}
