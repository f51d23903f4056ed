package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Deployer modes of dc-controller's --deployer-mode, as the in-flight
// scenario runs them: the controller's side first, then its peer.
var inFlightModes = []string{dcv1.DeployerModeControllerWhenPossible, dcv1.DeployerModePod}

const (
	// inFlightReadings is how many readings of dc-controller make one
	// figure (their median): one forced collection can land in the middle
	// of a burst of work.
	inFlightReadings = 3
	// inFlightSettleTimeout bounds the wait for dc-controller to settle
	// before a reading; one that does not settle is read all the same,
	// and the report says so.
	inFlightSettleTimeout = 5 * time.Minute
	// inFlightMetric is dc-controller's gauge of the rollouts it runs.
	inFlightMetric = "deployconfig_controller_rollouts_in_flight"
)

// inFlightDC is a DeploymentConfig of the in-flight scenario: the
// benchmark's, with one canary step, a pause without a duration. Its
// first rollout skips the steps (there is nothing to canary against); each
// later one stops at the pause until promoted, before it scales anything,
// so that it stays in flight as long as the scenario wants at no cost to
// kube-controller-manager.
func inFlightDC(namespace, name string, replicas int32) *dcv1.DeploymentConfig {
	dc := newDC(namespace, name, replicas)
	dc.Spec.Strategy.RollingParams.Steps = []dcv1.RollingStep{{Pause: &dcv1.RolloutPause{}}}
	return dc
}

// pausedRollout reports whether the RC is a deployment Running and waiting
// in a pause step.
func pausedRollout(rc *corev1.ReplicationController) bool {
	return deployment.Phase(rc) == dcv1.DeploymentPhaseRunning && deployment.ProgressOf(rc).Wait != nil
}

// controllerArgs are dc-controller's arguments for a mode with n rollouts
// to hold: pod mode is its default; the other may hold n rollouts at once.
func controllerArgs(mode string, n int) []string {
	if mode == dcv1.DeployerModePod {
		return nil
	}
	// Room for every rollout at once, whatever dc-controller's default.
	return []string{"--deployer-mode=" + mode, "--max-controller-rollouts=" + strconv.Itoa(n)}
}

// medianMemory is the median of each figure of the readings, taken apart:
// the figures of one reading do not move together.
func medianMemory(readings []report.ControllerMemory) report.ControllerMemory {
	if len(readings) == 0 {
		return report.ControllerMemory{}
	}
	median := func(get func(report.ControllerMemory) float64) float64 {
		v := make([]float64, len(readings))
		for i, r := range readings {
			v[i] = get(r)
		}
		slices.Sort(v)
		return v[(len(v)-1)/2]
	}
	out := report.ControllerMemory{
		HeapInuseBytes:   median(func(m report.ControllerMemory) float64 { return m.HeapInuseBytes }),
		RSSBytes:         median(func(m report.ControllerMemory) float64 { return m.RSSBytes }),
		AnonBytes:        median(func(m report.ControllerMemory) float64 { return m.AnonBytes }),
		Goroutines:       median(func(m report.ControllerMemory) float64 { return m.Goroutines }),
		RolloutsInFlight: median(func(m report.ControllerMemory) float64 { return m.RolloutsInFlight }),
	}
	for _, r := range readings {
		out.GaugeSeen = out.GaugeSeen || r.GaugeSeen
	}
	return out
}

// memoryOf is one reading from dc-controller's metrics and its process.
func memoryOf(metrics map[string]float64, rss, anon uint64) report.ControllerMemory {
	g, seen := metrics[inFlightMetric]
	return report.ControllerMemory{
		HeapInuseBytes: metrics["go_memstats_heap_inuse_bytes"], Goroutines: metrics["go_goroutines"],
		RSSBytes: float64(rss), AnonBytes: float64(anon), RolloutsInFlight: g, GaugeSeen: seen,
	}
}

// inFlight measures, for each in-flight size and deployer mode, what
// rollouts held in flight cost dc-controller. The pod runtime
// serves the deployer pods of pod mode.
func (r *runner) inFlight(ctx context.Context, rep *report.Report) error {
	stopRuntime, err := startRuntime(ctx, r.e, filepath.Join(r.e.dir, "dc-bench-runtime-inflight.log"))
	if err != nil {
		return err
	}
	defer stopRuntime()
	for _, n := range r.o.InFlightSizes {
		for _, mode := range inFlightModes {
			f, err := r.inFlightOne(ctx, n, mode)
			if err != nil {
				return err
			}
			rep.InFlight = append(rep.InFlight, f)
			fmt.Fprintln(r.o.Log, "  "+f.Line())
		}
	}
	return nil
}

// inFlightOne measures one size in one mode, with a dc-controller process
// of its own: N DCs rolled out and at rest, then the same N held in flight.
func (r *runner) inFlightOne(ctx context.Context, n int, mode string) (report.InFlight, error) {
	ns := fmt.Sprintf("bench-inflight-%s-%d", mode, n)
	c, err := startControllerArgs(ctx, r.e, filepath.Join(r.e.dir, fmt.Sprintf("dc-controller-inflight-%s-%d.log", mode, n)), controllerArgs(mode, n)...)
	if err != nil {
		return report.InFlight{}, err
	}
	defer c.stop()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := r.e.createNamespace(ctx, ns); err != nil {
		return report.InFlight{}, err
	}
	tr := newTracker()
	if err := watchPauses(watchCtx, r.e.kube, ns, tr); err != nil {
		return report.InFlight{}, err
	}
	names := objectNames(n)
	fmt.Fprintf(r.o.Log, "In flight (%s): %d DCs rolled out, then held in a canary pause...\n", mode, n)
	first := &phaseRecord{System: report.SystemDC, Phase: "in flight, first rollout", N: n, Namespace: ns, Version: 1, TriggerVerb: "create", Names: names}
	create := func(ctx context.Context, name string) error {
		return r.e.client.Create(ctx, inFlightDC(ns, name, r.o.Replicas))
	}
	if err := r.rollOutAtRest(ctx, first, tr, create); err != nil {
		return report.InFlight{}, err
	}
	atRest, err := r.readController(ctx, c, fmt.Sprintf("%d DCs at rest (%s)", n, mode))
	if err != nil {
		return report.InFlight{}, err
	}
	start := time.Now()
	if err := r.holdInFlight(ctx, ns, names, tr); err != nil {
		return report.InFlight{}, err
	}
	toPaused := time.Since(start).Seconds()
	inFlight, err := r.readController(ctx, c, fmt.Sprintf("%d rollouts in flight (%s)", n, mode))
	if err != nil {
		return report.InFlight{}, err
	}
	// The controller goes first: it would otherwise work through the
	// namespace's deletion of N rollouts in flight for nothing.
	c.stop()
	stopWatch()
	return report.NewInFlight(n, mode, toPaused, atRest, inFlight), r.cleanUp(ctx, ns)
}

// rollOutAtRest creates the DCs and waits for their first rollouts to
// complete; a failed one fails the scenario, whose figures would then
// count fewer rollouts than N.
func (r *runner) rollOutAtRest(ctx context.Context, p *phaseRecord, tr *tracker, create func(ctx context.Context, name string) error) error {
	if err := triggerAll(ctx, p, tr, create); err != nil {
		return err
	}
	if err := collect(ctx, r.o, p, tr); err != nil {
		return err
	}
	if len(p.Failed) > 0 {
		return fmt.Errorf("in flight: %d of %d first rollouts failed", len(p.Failed), p.N)
	}
	return nil
}

// holdInFlight changes every DC's template and waits until every new
// rollout is Running and paused.
func (r *runner) holdInFlight(ctx context.Context, ns string, names []string, tr *tracker) error {
	p := &phaseRecord{System: report.SystemDC, Phase: "in flight", N: len(names), Namespace: ns, Version: 2, TriggerVerb: "patch", Names: names}
	change := func(ctx context.Context, name string) error {
		dc := &dcv1.DeploymentConfig{}
		dc.Namespace, dc.Name = ns, name
		return r.e.client.Patch(ctx, dc, templateChange(2))
	}
	if err := triggerAll(ctx, p, tr, change); err != nil {
		return err
	}
	label := fmt.Sprintf("in flight N=%d, paused", len(names))
	if err := tr.waitStarted(ctx, r.o.PhaseTimeout, r.o.Log, label, names...); err != nil {
		return err
	}
	// A rollout that ended cannot be in flight: the figure would be wrong.
	if done, failed := tr.results(); len(done)+len(failed) > 0 {
		return fmt.Errorf("in flight: %d rollouts ended (%d failed) instead of pausing", len(done)+len(failed), len(failed))
	}
	return nil
}

// readController waits for dc-controller to settle and reads it
// inFlightReadings times, each after a forced garbage collection.
func (r *runner) readController(ctx context.Context, c *controllerProcess, what string) (report.ControllerMemory, error) {
	if err := c.waitIdle(ctx, inFlightSettleTimeout); err != nil {
		if ctx.Err() != nil {
			return report.ControllerMemory{}, err
		}
		r.warnings = append(r.warnings, fmt.Sprintf("in flight, %s: %v; read at that point", what, err))
	}
	var readings []report.ControllerMemory
	for range inFlightReadings {
		if err := c.collectGarbage(ctx); err != nil {
			return report.ControllerMemory{}, err
		}
		metrics, err := c.scrape(ctx)
		if err != nil {
			return report.ControllerMemory{}, err
		}
		u, err := c.usage()
		if err != nil {
			return report.ControllerMemory{}, err
		}
		readings = append(readings, memoryOf(metrics, u.RSSBytes, u.AnonBytes))
	}
	m := medianMemory(readings)
	fmt.Fprintf(r.o.Log, "  %s: heap %s, RSS %s, %.0f goroutines, in-flight gauge %v\n", what,
		report.MB(uint64(m.HeapInuseBytes)), report.MB(uint64(m.RSSBytes)), m.Goroutines, m.RolloutsInFlight)
	return m, nil
}

// collectGarbage makes dc-controller collect its garbage: its pprof heap
// handler does so before a profile when asked with gc=1. The heap then
// holds what is live.
func (c *controllerProcess) collectGarbage(ctx context.Context) error {
	if c.pprof == "" {
		return fmt.Errorf("dc-controller serves no pprof here, so its garbage cannot be collected before a reading")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.pprof+"/heap?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("making dc-controller collect its garbage: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("making dc-controller collect its garbage: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("making dc-controller collect its garbage: %s", resp.Status)
	}
	return nil
}

// watchPauses feeds the tracker from the namespace's RCs: a deployment
// Complete or Failed ends its rollout, one Running and paused has
// "started" (tracker.begin): the in-flight scenario waits for that.
func watchPauses(ctx context.Context, kube kubernetes.Interface, namespace string, t *tracker) error {
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = dcv1.DeploymentConfigLabel }))
	handle := func(obj any) {
		rc, ok := obj.(*corev1.ReplicationController)
		if !ok {
			return
		}
		name, version := rc.Labels[dcv1.DeploymentConfigLabel], deployment.Version(rc)
		switch {
		case pausedRollout(rc):
			t.begin(name, version)
		case deployment.Phase(rc) == dcv1.DeploymentPhaseComplete:
			t.observe(name, version, false)
		case deployment.Phase(rc) == dcv1.DeploymentPhaseFailed:
			t.observe(name, version, true)
		}
	}
	informer := factory.Core().V1().ReplicationControllers().Informer()
	return runInformer(ctx, factory, informer, handle)
}
