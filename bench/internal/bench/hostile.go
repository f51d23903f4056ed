package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/internal/controller"
)

// The query templates: executed, the first never ends and the
// second writes 200 MB. dc-controller refuses both without executing them.
const (
	nestedRangeQuery = `{{range 100000}}{{range 100000}}x{{end}}{{end}}`
	hugePrintfQuery  = `{{range 200}}{{printf "%01000000d" 0}}{{end}}`
)

const (
	// hostileNamespace holds the hostile DeploymentConfigs, apart from
	// the ordinary one whose rollouts are measured.
	hostileNamespace = "bench-hostile-analyses"
	// refusalTimeout bounds the wait, after the measured rollouts, for
	// every hostile DC to be refused; one not refused by then is
	// reported as not seen.
	refusalTimeout = 2 * time.Minute
)

// hostileDC is a DeploymentConfig with a hostile query in one place an
// analysis can be; field names that place as dc-controller's
// InvalidAnalysis event does.
type hostileDC struct {
	field string
	dc    *dcv1.DeploymentConfig
}

// hostileAnalysis is an analysis whose one metric has the query.
func hostileAnalysis(query string) *dcv1.Analysis {
	return &dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{{
		Name:             "error-rate",
		Prometheus:       &dcv1.PrometheusMetric{Address: "http://127.0.0.1:9090", Query: query},
		SuccessCondition: "result[0] < 0.05",
	}}}
}

// hostileDCs are the six hostile DeploymentConfigs: a hostile
// query in a pre hook, a canary step, rollingParams' background
// analysis, blue-green's pre- and postPromotionAnalysis and a Recreate
// mid hook, the two queries alternating.
func hostileDCs(namespace string, replicas int32) []hostileDC {
	abort := dcv1.LifecycleHookFailurePolicyAbort
	weight := func(w int32) dcv1.RollingStep { return dcv1.RollingStep{SetWeight: &w} }
	const query = ".metrics[0].prometheus.query"
	placements := []struct {
		name, field string
		strategy    dcv1.DeploymentStrategy
	}{
		{"hostile-pre-hook", "spec.strategy.rollingParams.pre.analysis" + query,
			dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
				Pre: &dcv1.LifecycleHook{FailurePolicy: abort, Analysis: hostileAnalysis(nestedRangeQuery)}}}},
		{"hostile-step", "spec.strategy.rollingParams.steps[1].analysis" + query,
			dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
				Steps: []dcv1.RollingStep{weight(20), {Analysis: hostileAnalysis(hugePrintfQuery)}}}}},
		{"hostile-background", "spec.strategy.rollingParams.analysis" + query,
			dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
				Steps: []dcv1.RollingStep{weight(50)}, Analysis: hostileAnalysis(nestedRangeQuery)}}},
		{"hostile-pre-promotion", "spec.strategy.blueGreenParams.prePromotionAnalysis" + query,
			dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen, BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
				ActiveService: "web", PrePromotionAnalysis: hostileAnalysis(hugePrintfQuery)}}},
		{"hostile-post-promotion", "spec.strategy.blueGreenParams.postPromotionAnalysis" + query,
			dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen, BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
				ActiveService: "web", PostPromotionAnalysis: hostileAnalysis(nestedRangeQuery)}}},
		{"hostile-mid-hook", "spec.strategy.recreateParams.mid.analysis" + query,
			dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRecreate, RecreateParams: &dcv1.RecreateDeploymentStrategyParams{
				Mid: &dcv1.LifecycleHook{FailurePolicy: abort, Analysis: hostileAnalysis(hugePrintfQuery)}}}},
	}
	out := make([]hostileDC, len(placements))
	for i, p := range placements {
		dc := newDC(namespace, p.name, replicas)
		dc.Spec.Strategy = p.strategy
		out[i] = hostileDC{field: p.field, dc: dc}
	}
	return out
}

// invalidAnalysis reports whether dc-controller has refused the DC's
// analyses: its Progressing condition is False with reason
// InvalidAnalysis.
func invalidAnalysis(dc *dcv1.DeploymentConfig) bool {
	for _, c := range dc.Status.Conditions {
		if c.Type == dcv1.DeploymentProgressing {
			return c.Status == corev1.ConditionFalse && c.Reason == dcv1.InvalidAnalysisReason
		}
	}
	return false
}

// hostileRecord is what dc-bench saw of the hostile scenario.
type hostileRecord struct {
	// without and with are the ordinary DC's rollouts before and after
	// the hostile DCs were created.
	without, with *phaseRecord
	dcs           []hostileDC
	// created is when each hostile DC's create was answered (dc-bench's
	// clock), used when the audit log lacks the request.
	created  map[string]time.Time
	refusals *refusals
}

// refusals records when dc-bench's watch first saw each DC refused.
type refusals struct {
	mu   sync.Mutex
	seen map[string]time.Time
	// changed is signalled (without blocking) on every new refusal.
	changed chan struct{}
}

func newRefusals() *refusals {
	return &refusals{seen: map[string]time.Time{}, changed: make(chan struct{}, 1)}
}

// observe records the DC's refusal, if it is refused, the first time.
func (f *refusals) observe(dc *dcv1.DeploymentConfig, now time.Time) {
	if !invalidAnalysis(dc) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.seen[dc.Name]; ok {
		return
	}
	f.seen[dc.Name] = now
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// at is when the DC was seen refused.
func (f *refusals) at(name string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.seen[name]
	return t, ok
}

// count is how many DCs have been seen refused.
func (f *refusals) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

// wait waits until n DCs have been seen refused, or timeout passed: a
// DC not refused is a figure of the report, not a failure of the run.
func (f *refusals) wait(ctx context.Context, n int, timeout time.Duration, log io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for f.count() < n {
		select {
		case <-ctx.Done():
			fmt.Fprintf(log, "  hostile: %d of %d DCs seen InvalidAnalysis before the timeout (%s)\n", f.count(), n, timeout)
			return
		case <-f.changed:
		}
	}
}

// watchRefusals feeds f from the namespace's DCs until ctx ends; a watch
// the API server closes is made again.
func (e *env) watchRefusals(ctx context.Context, namespace string, f *refusals) error {
	cfg := rest.CopyConfig(e.cluster.Config)
	cfg.UserAgent = benchUserAgent
	scheme, err := controller.NewScheme()
	if err != nil {
		return err
	}
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("making dc-bench's watch client: %w", err)
	}
	open := func() (watch.Interface, error) {
		return wc.Watch(ctx, &dcv1.DeploymentConfigList{}, client.InNamespace(namespace))
	}
	w, err := open()
	if err != nil {
		return fmt.Errorf("watching %s's DeploymentConfigs: %w", namespace, err)
	}
	go func() {
		for ctx.Err() == nil {
			readRefusals(ctx, w, f)
			next, err := open()
			if err != nil {
				return
			}
			w = next
		}
	}()
	return nil
}

// readRefusals reads one watch until it closes or ctx ends.
func readRefusals(ctx context.Context, w watch.Interface, f *refusals) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if dc, ok := ev.Object.(*dcv1.DeploymentConfig); ok {
				f.observe(dc, time.Now())
			}
		}
	}
}

// hostile measures the claim: six hostile DCs change no other DC's
// rollout time. An ordinary DC's template changes, one at a time, are
// measured first with nothing else, then with the hostile DCs created in
// another namespace just before the first of the second block, and kept
// there until its end.
func (r *runner) hostile(ctx context.Context) error {
	k := r.o.HostileRollouts
	sys := dcSystemIn(r.o.primaryMode())
	ns := namespaceFor(sys.name, "hostile")
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	tr, err := r.watchNamespace(watchCtx, sys, ns)
	if err != nil {
		return err
	}
	names := objectNames(2 * k)
	fmt.Fprintf(r.o.Log, "%s: hostile analyses, %d rollouts one at a time without, then %d with six hostile DCs...\n", sys.name, k, k)
	setup := &phaseRecord{System: sys.name, Phase: "setup", N: 2 * k, Namespace: ns, Version: 1, TriggerVerb: "create", Names: names}
	if err := triggerAll(ctx, setup, tr, func(ctx context.Context, name string) error { return sys.create(ctx, r.e, ns, name) }); err != nil {
		return err
	}
	if err := finish(ctx, r.o, setup, tr); err != nil {
		return err
	}
	rec := &hostileRecord{dcs: hostileDCs(hostileNamespace, r.o.Replicas), created: map[string]time.Time{}, refusals: newRefusals()}
	rec.without = hostilePhase(ns, "without", "without hostile DCs", names[:k])
	rec.with = hostilePhase(ns, "with", "with six hostile DCs in another namespace", names[k:])
	r.hostileRun = rec
	if err := r.sequential(ctx, sys, rec.without, tr); err != nil {
		return err
	}
	if err := r.createHostile(ctx, watchCtx, rec); err != nil {
		return err
	}
	if err := r.sequential(ctx, sys, rec.with, tr); err != nil {
		return err
	}
	rec.refusals.wait(ctx, len(rec.dcs), refusalTimeout, r.o.Log)
	stopWatch()
	if err := r.cleanUp(ctx, hostileNamespace); err != nil {
		return err
	}
	return r.cleanUp(ctx, ns)
}

// hostilePhase is one block of the ordinary DC's rollouts.
func hostilePhase(namespace, block, load string, names []string) *phaseRecord {
	return &phaseRecord{System: report.SystemDC, Phase: "hostile, " + block, N: len(names), Namespace: namespace, Version: 2, TriggerVerb: "patch",
		Names: names, Load: load, InFlight: 1}
}

// createHostile makes the hostile DCs' namespace, watches it for their
// refusals until watchCtx ends, and creates them.
func (r *runner) createHostile(ctx, watchCtx context.Context, rec *hostileRecord) error {
	if err := r.e.createNamespace(ctx, hostileNamespace); err != nil {
		return err
	}
	if err := r.e.watchRefusals(watchCtx, hostileNamespace, rec.refusals); err != nil {
		return err
	}
	for _, h := range rec.dcs {
		if err := r.e.client.Create(ctx, h.dc); err != nil {
			return fmt.Errorf("creating %s/%s: %w", h.dc.Namespace, h.dc.Name, err)
		}
		rec.created[h.dc.Name] = time.Now()
	}
	return nil
}

// hostileOf is the scenario's figures: the blocks' trigger → Complete
// from the audited triggers, and each hostile DC's time from its audited
// create to its refusal.
func (r *runner) hostileOf(l *ledger) *report.Hostile {
	rec := r.hostileRun
	dcs := make([]report.HostileDC, len(rec.dcs))
	for i, h := range rec.dcs {
		name := h.dc.Name
		dcs[i] = report.HostileDC{Name: name, Field: h.field}
		created, ok := l.triggers.Get(hostileNamespace + "/" + name + "/create")
		if !ok {
			created = rec.created[name]
		}
		if refused, ok := rec.refusals.at(name); ok && !created.IsZero() {
			dcs[i].ToInvalid, dcs[i].Refused = refused.Sub(created).Seconds(), true
		}
	}
	return report.NewHostile(r.o.HostileRollouts, r.latencyOf(l, rec.without), r.latencyOf(l, rec.with), dcs)
}

// hostileNotes remarks on the hostile scenario's failed rollouts and
// hostile DCs not seen refused.
func hostileNotes(h *report.Hostile, rec *hostileRecord) []string {
	var notes []string
	for _, p := range []*phaseRecord{rec.without, rec.with} {
		if len(p.Failed) > 0 {
			notes = append(notes, fmt.Sprintf("%d of %d rollouts %s failed (hostile scenario).", len(p.Failed), len(p.Names), p.Load))
		}
	}
	for _, d := range h.DCs {
		if !d.Refused {
			notes = append(notes, fmt.Sprintf("Hostile DC %s was not seen InvalidAnalysis within %s of the last measured rollout.", d.Name, refusalTimeout))
		}
	}
	return notes
}
