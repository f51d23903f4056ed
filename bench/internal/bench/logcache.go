package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// logCacheNamespace holds the logcache scenario's DCs.
const logCacheNamespace = "bench-logcache"

// logText is an in-controller rollout's log of exactly size bytes: the
// lines a Rolling rollout of the RC logs, repeated (a log that reached
// the runner's bound keeps its tail, which is such lines).
func logText(rc string, size int) string {
	if size <= 0 {
		return ""
	}
	line := fmt.Sprintf("--> Scaling up %s from 0 to 1, scaling down none (keep 1 pods available, don't exceed 2 pods)\n    Scaling %s up to 1\n", rc, rc)
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(line)
	}
	return b.String()[:size]
}

// logCache measures dc-controller's memory with N DeploymentConfigs whose
// rollouts ran in the controller, each leaving its log on its RC: the
// baseline build's and this one's, each a fresh process in
// controller-when-possible mode over the same objects.
//
// The objects are made directly, as they stand after one in-controller
// rollout each (the DC with its status, its RC Complete with the log and
// the encoded DC), since rolling out 5,000 DCs would take long; the DCs
// have 0 replicas, as dc-controller caches no application pods.
func (r *runner) logCache(ctx context.Context, rep *report.Report) error {
	ns := logCacheNamespace
	if err := r.e.createNamespace(ctx, ns); err != nil {
		return err
	}
	makers, err := r.e.makers(r.o.FootprintClients)
	if err != nil {
		return err
	}
	have := 0
	for _, size := range r.o.LogCacheSizes {
		fmt.Fprintf(r.o.Log, "Log cache: making DCs %d..%d, each with a %d-byte in-controller log on its RC...\n", have, size-1, r.o.LogCacheLogBytes)
		var created atomic.Int64
		err := parallel(ctx, size-have, 2*createWorkers, func(ctx context.Context, i int) error {
			n := have + i
			return r.populateLogged(ctx, makers[n%len(makers)], ns, objectName(n), &created)
		})
		if err != nil {
			return err
		}
		have = size
		m, err := r.measureLogCache(ctx, size)
		if err != nil {
			return err
		}
		rep.BeforeAfter = append(rep.BeforeAfter, m)
		fmt.Fprintln(r.o.Log, "  "+m.Line())
	}
	return r.cleanUp(ctx, ns)
}

// populateLogged makes one DC as it stands after one in-controller
// rollout: Complete, its log on the RC.
func (r *runner) populateLogged(ctx context.Context, m maker, ns, name string, created *atomic.Int64) error {
	dc := newDC(ns, name, 0)
	if err := m.client.Create(ctx, dc); err != nil {
		return fmt.Errorf("creating deploymentconfig %s/%s: %w", ns, name, err)
	}
	at := dc.DeepCopy()
	at.Status.LatestVersion = 1
	rc, err := deployment.New(at)
	if err != nil {
		return err
	}
	rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseComplete)
	rc.Annotations[dcv1.DeploymentReplicasAnnotation] = "0"
	for key, value := range deployment.LogPatch(logText(rc.Name, r.o.LogCacheLogBytes)) {
		rc.Annotations[key] = *value
	}
	rcs := m.kube.CoreV1().ReplicationControllers(ns)
	if rc, err = rcs.Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating replicationcontroller %s/%s: %w", ns, deployment.Name(name, 1), err)
	}
	rc.Status.ObservedGeneration = rc.Generation
	if _, err := rcs.UpdateStatus(ctx, rc, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("updating the status of replicationcontroller %s/%s: %w", ns, rc.Name, err)
	}
	dc.Status.LatestVersion = 1
	dc.Status.ObservedGeneration = dc.Generation
	dc.Status.Details = &dcv1.DeploymentDetails{Message: "config change"}
	if err := m.client.Status().Update(ctx, dc); err != nil {
		return fmt.Errorf("updating the status of deploymentconfig %s/%s: %w", ns, name, err)
	}
	created.Add(4)
	return nil
}

// controllerReading is one build's dc-controller measured over the
// scenario's objects.
type controllerReading struct {
	memory report.ControllerMemory
	peak   uint64
}

// measureLogCache runs the baseline's dc-controller and then this one's
// over the same n DCs, one at a time, and compares them.
func (r *runner) measureLogCache(ctx context.Context, n int) (report.BeforeAfter, error) {
	before, err := r.readBuild(ctx, filepath.Join(r.o.BaselineBin, "dc-controller"), "before", n)
	if err != nil {
		return report.BeforeAfter{}, err
	}
	after, err := r.readBuild(ctx, filepath.Join(r.o.BinDir, "dc-controller"), "after", n)
	if err != nil {
		return report.BeforeAfter{}, err
	}
	return report.BeforeAfter{
		Scenario: ScenarioLogCache, Size: strconv.Itoa(n) + " DCs", Baseline: r.o.Baseline,
		Detail: fmt.Sprintf("dc-controller with `--deployer-mode=controller-when-possible` over %d DCs, each with one Complete RC carrying a %d-byte in-controller log; "+
			"a fresh process per build, read once settled after a forced garbage collection (median of three).", n, r.o.LogCacheLogBytes),
		Figures: []report.Versus{
			{Figure: "heap in use", Unit: report.UnitBytes, Before: before.memory.HeapInuseBytes, After: after.memory.HeapInuseBytes},
			{Figure: "RSS", Unit: report.UnitBytes, Before: before.memory.RSSBytes, After: after.memory.RSSBytes},
			{Figure: "anonymous RSS", Unit: report.UnitBytes, Before: before.memory.AnonBytes, After: after.memory.AnonBytes},
			{Figure: "peak RSS", Unit: report.UnitBytes, Before: float64(before.peak), After: float64(after.peak)},
		},
	}, nil
}

// readBuild starts one build's dc-controller in controller mode, waits
// until it has settled and reads it. How long it took to settle is not a
// figure: the first process over new objects makes the first sync's
// writes, and the next finds them made.
func (r *runner) readBuild(ctx context.Context, binary, build string, n int) (controllerReading, error) {
	logPath := filepath.Join(r.e.dir, fmt.Sprintf("dc-controller-logcache-%s-%d.log", build, n))
	c, err := startControllerFrom(ctx, r.e, binary, logPath, "--deployer-mode="+dcv1.DeployerModeControllerWhenPossible)
	if err != nil {
		return controllerReading{}, err
	}
	defer c.stop()
	if err := c.waitIdle(ctx, r.o.PhaseTimeout); err != nil {
		if ctx.Err() != nil {
			return controllerReading{}, err
		}
		r.warnings = append(r.warnings, fmt.Sprintf("logcache, %s with %d DCs: %v; read at that point", build, n, err))
	}
	m, err := r.readController(ctx, c, fmt.Sprintf("%d DCs with logs (%s)", n, build))
	if err != nil {
		return controllerReading{}, err
	}
	u, err := c.usage()
	if err != nil {
		return controllerReading{}, err
	}
	return controllerReading{memory: m, peak: u.PeakRSSBytes}, nil
}
