package chaos

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
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
// template, no rollout twice. In deployer mode controller-when-possible
// the rollouts live in the leader itself: all but the first
// DeploymentConfig need no container, the kill lands while one of theirs
// runs, and the new leader must resume them from what their RCs record.
func TestLeaderFailover(t *testing.T) {
	useControllers(t, suite.mode.controllers(clusterenv.ControllerSpec{Replicas: 2, LeaderElect: true}))
	runRounds(t, "c leader failover", func(r *round) {
		ctx := r.ctx
		dcs := names("lead", 3+r.rand.IntN(3))
		leader, err := suite.env.Controllers.WaitLeader(ctx, nil, failoverTimeout)
		if err != nil {
			r.t.Fatal(err)
		}
		r.reportErrors("creating", forEach(dcs, createParallelism, func(name string) error {
			return suite.dcs.Create(ctx, rollout.NewDC(r.ns, name, failoverOptions(name == dcs[0])))
		}))
		// The kill must land in a rollout the leader runs when there are
		// such rollouts: those of the DeploymentConfigs without a hook.
		victims := dcs
		if suite.mode.inController() {
			victims = dcs[1:]
		}
		if err := r.waitAnyRunning(ctx, victims, 1, rolloutTimeout); err != nil {
			r.t.Fatalf("waiting for a rollout to run: %v", err)
		}
		if err := pause(ctx, between(r.rand, 0, 1500*time.Millisecond)); err != nil {
			r.t.Fatal(err)
		}
		pid, inLeader := leader.PID(), r.runningInController(ctx, victims, 1)
		if err := leader.Kill(ctx); err != nil {
			r.t.Fatal(err)
		}
		r.fault("SIGKILL the leader %s (pid %d), running the rollouts %v itself", leader.Name, pid, inLeader)
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

// failoverOptions is the shape of scenario c's DeploymentConfigs: a Rolling
// strategy slow enough to be killed in, with a pre hook (a deployer pod in
// either mode) for the first one and, in deployer mode pod, for all.
// Without a hook the rollout has a replica more, to last about as long.
func failoverOptions(first bool) rollout.Options {
	o := rollout.Options{Replicas: 3, Strategy: dcv1.DeploymentStrategyTypeRolling, MaxSurge: "1", MaxUnavailable: "0"}
	if first || !suite.mode.inController() {
		o.Hooks = map[string]*dcv1.LifecycleHook{"pre": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "sleep 1")}
	} else {
		o.Replicas = 4
	}
	return o
}

// runningInController lists the deployments of version of the
// DeploymentConfigs that are Running in dc-controller: the rollouts a
// killed leader takes down with it.
func (r *round) runningInController(ctx context.Context, names []string, version int64) []string {
	var running []string
	for _, name := range names {
		rc, err := suite.env.Clientset().CoreV1().ReplicationControllers(r.ns).Get(ctx, deployment.Name(name, version), metav1.GetOptions{})
		if err == nil && deployment.Phase(rc) == dcv1.DeploymentPhaseRunning &&
			deployment.RunsInController(rc) {
			running = append(running, rc.Name)
		}
	}
	return running
}
