package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// createParallelism bounds how many DeploymentConfigs a wave changes at
// once; the rollouts themselves all run together.
const createParallelism = 16

// Scenario b: many DeploymentConfigs roll out at once (created, then each
// changed once) while dc-controller is killed with SIGKILL at random
// moments and restarted each time. Every rollout must end Complete,
// exactly once: latestVersion is the number of rollouts asked for, and no
// deployment had a second deployer pod.
func TestControllerKilled(t *testing.T) {
	ensureControllers(t, defaultControllers())
	runRounds(t, "b controller killed", func(r *round) {
		dcs := names("kill", suite.sizes.rollouts)
		opts := rollout.Options{Replicas: 2, Strategy: dcv1.DeploymentStrategyTypeRolling, MaxSurge: "1", MaxUnavailable: "0"}
		r.killWave(dcs, 1, func(name string) error { return suite.dcs.Create(r.ctx, rollout.NewDC(r.ns, name, opts)) })
		if r.t.Failed() {
			return
		}
		r.killWave(dcs, 2, func(name string) error { return suite.dcs.ChangeConfig(r.ctx, r.ns, name) })
	})
}

// killWave starts a rollout of every DeploymentConfig with start, kills
// dc-controller at random moments meanwhile, and checks that every one
// ends Complete at version.
func (r *round) killWave(dcs []string, version int64, start func(name string) error) {
	ctx, stopKiller := context.WithCancel(r.ctx)
	var wg sync.WaitGroup
	wg.Go(func() { r.killController(ctx, newRand(r.seed, uint64(version)*1000)) })
	r.reportErrors("starting the rollout of", forEach(dcs, createParallelism, start))
	timeout := rolloutTimeout + time.Duration(len(dcs))*time.Second
	errs := forEach(dcs, len(dcs), func(name string) error {
		_, _, err := suite.dcs.WaitLatestDone(r.ctx, r.ns, name, version, timeout)
		return err
	})
	stopKiller()
	wg.Wait()
	r.reportErrors("waiting for", errs)
	r.reportErrors("checking", forEach(dcs, createParallelism, func(name string) error {
		if err := r.checkCompleted(r.ctx, name, version, version); err != nil {
			return err
		}
		dc, err := suite.dcs.Get(r.ctx, r.ns, name)
		if err == nil && dc.Status.LatestVersion != version {
			err = fmt.Errorf("latestVersion %d, want %d: a rollout was lost", dc.Status.LatestVersion, version)
		}
		return err
	}))
}

// killController kills dc-controller with SIGKILL up to -kills times, at
// random moments until ctx ends, and starts it again at once each time.
func (r *round) killController(ctx context.Context, rnd *rand.Rand) {
	for range suite.sizes.kills {
		if pause(ctx, between(rnd, 300*time.Millisecond, 3*time.Second)) != nil {
			return
		}
		replicas := suite.env.Controllers.Replicas()
		if len(replicas) == 0 {
			r.t.Errorf("no dc-controller replica to kill")
			return
		}
		victim := replicas[rnd.IntN(len(replicas))]
		pid, inController := victim.PID(), r.countRunningInController(ctx)
		if err := victim.Kill(context.WithoutCancel(ctx)); err != nil {
			r.t.Errorf("killing %s: %v", victim.Name, err)
			return
		}
		r.fault("SIGKILL %s (pid %d), with %d rollouts running in dc-controller", victim.Name, pid, inController)
		if err := victim.Start(context.WithoutCancel(ctx)); err != nil {
			r.t.Errorf("restarting %s: %v", victim.Name, err)
			return
		}
	}
}

// countRunningInController counts the round's deployments Running in
// dc-controller: the rollouts a kill takes down with the process. -1 when
// they cannot be listed.
func (r *round) countRunningInController(ctx context.Context) int {
	rcs, err := suite.env.Clientset().CoreV1().ReplicationControllers(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return -1
	}
	n := 0
	for i := range rcs.Items {
		rc := &rcs.Items[i]
		if deployment.Phase(rc) == dcv1.DeploymentPhaseRunning && deployment.RunsInController(rc) {
			n++
		}
	}
	return n
}
