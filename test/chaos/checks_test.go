package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// checkCompleted waits for a DeploymentConfig's rollouts to end, at
// minVersion or later, and checks it: the latest deployment is Complete and
// deploys the current template (no change was lost), latestVersion is at
// most maxVersion (no rollout was started twice), every deployment had at
// most one deployer pod and ran where the deployer mode puts it (none ran
// twice), and the DeploymentConfig settles at its replicas.
func (r *round) checkCompleted(ctx context.Context, name string, minVersion, maxVersion int64) error {
	dc, rc, err := suite.dcs.WaitLatestDone(ctx, r.ns, name, minVersion, rolloutTimeout)
	if err != nil {
		return err
	}
	if phase := deployment.Phase(rc); phase != dcv1.DeploymentPhaseComplete {
		return fmt.Errorf("%s ended %s: %s", rc.Name, phase, rc.Annotations[dcv1.DeploymentStatusReasonAnnotation])
	}
	if !deployment.TemplateMatches(dc, rc) {
		return fmt.Errorf("%s does not deploy %s's current template: a change was lost", rc.Name, name)
	}
	if dc.Status.LatestVersion > maxVersion {
		return fmt.Errorf("%s is at latestVersion %d, but only %d rollouts were asked for", name, dc.Status.LatestVersion, maxVersion)
	}
	if err := r.checkDeployerPods(ctx, name); err != nil {
		return err
	}
	return suite.dcs.WaitSettled(ctx, r.ns, name, rolloutTimeout)
}

// checkDeployerPods checks that no deployment of a DeploymentConfig had
// more than one deployer pod, and that each ran where the deployer mode
// puts it (checkRunner).
func (r *round) checkDeployerPods(ctx context.Context, name string) error {
	rcs, err := suite.dcs.Deployments(ctx, r.ns, name)
	if err != nil {
		return err
	}
	for _, rc := range rcs {
		if n := r.tracker.deployerPods(rc.Name); n > 1 {
			return fmt.Errorf("%s had %d deployer pods: it ran twice", rc.Name, n)
		}
		if err := r.checkRunner(rc); err != nil {
			return err
		}
	}
	return nil
}

// forEach runs fn for every name, at most parallel at once, and returns
// the errors by name.
func forEach(names []string, parallel int, fn func(name string) error) map[string]error {
	var mu sync.Mutex
	errs := map[string]error{}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := fn(name); err != nil {
				mu.Lock()
				errs[name] = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// reportErrors fails the round with every error, in name order.
func (r *round) reportErrors(what string, errs map[string]error) {
	r.t.Helper()
	for _, name := range sortedKeys(errs) {
		r.t.Errorf("%s %s: %v", what, name, errs[name])
	}
}

// waitAnyRunning waits until one of the DeploymentConfigs' deployment of
// version is Running: a moment in the middle of a rollout.
func (r *round) waitAnyRunning(ctx context.Context, names []string, version int64, timeout time.Duration) error {
	return rollout.Poll(ctx, timeout, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			rc, err := suite.env.Clientset().CoreV1().ReplicationControllers(r.ns).Get(ctx, deployment.Name(name, version), metav1.GetOptions{})
			if err == nil && deployment.Phase(rc) == dcv1.DeploymentPhaseRunning {
				return true, nil
			}
		}
		return false, nil
	})
}

// names are n DeploymentConfig names with a prefix.
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}
