package bench

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/deployer/strategy"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Client settings of the components dc-bench does not configure, stated
// in the report: kube-controller-manager's defaults (kwokctl passes none
// unless Options.KCMQPS or KCMBurst say otherwise), and what the pod runtime gives each deployer (client-go's defaults, as
// the dc-deploy binary has in a deployer pod).
const (
	kcmDefaultQPS   = 20
	kcmDefaultBurst = 30
	kcmConcurrency  = "--concurrent-rc-syncs, --concurrent-replicaset-syncs and --concurrent-deployment-syncs 5 (defaults)"
	deployerQPS     = 5
	deployerBurst   = 10
)

// ledger is what the audit log says about the run.
type ledger struct {
	tally *audit.Tally
	// triggers are the completion times of dc-bench's creates and
	// patches of DCs and Deployments, keyed namespace/name/verb.
	triggers *audit.Times
	// deployerPods are when dc-controller created each deployer pod,
	// keyed namespace/name.
	deployerPods *audit.Times
	// deployerStarts are when the kubelet of each deployer pod (on kwok
	// the playground's pod runtime) first wrote its status: the pod has
	// been admitted and its container is starting, keyed namespace/name.
	deployerStarts *audit.Times
	// scheduled are when the scheduler bound each deployer pod, and
	// statusWrites when its kubelet wrote its first statuses (critical
	// path), keyed namespace/name.
	scheduled    *audit.Times
	statusWrites *nthTimes
}

// readLedger reads the audit log once, counting each window: first the
// phases' windows, then the footprint measurements'.
func (r *runner) readLedger() (*ledger, error) {
	var windows []audit.Window
	for _, p := range r.records {
		windows = append(windows, audit.Window{Namespace: p.Namespace, From: p.Start, To: p.End})
	}
	for _, f := range r.footprints {
		windows = append(windows, f.window)
	}
	l := newLedger(windows...)
	files, err := r.e.auditLogs()
	if err != nil {
		return nil, err
	}
	for _, path := range files {
		if err := readAuditFile(path, l); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// newLedger returns an empty ledger that counts requests in the windows.
func newLedger(windows ...audit.Window) *ledger {
	return &ledger{
		tally: audit.NewTally(windows...),
		triggers: audit.NewTimes(func(e audit.Event) (string, bool) {
			res := e.Resource()
			ok := audit.Actor(e) == audit.ActorBench && e.Succeeded() && (e.Verb == "create" || e.Verb == "patch") &&
				(res == "deploymentconfigs" || res == "deployments")
			return e.Namespace() + "/" + e.Name() + "/" + e.Verb, ok
		}),
		deployerPods: audit.NewTimes(func(e audit.Event) (string, bool) {
			ok := audit.Actor(e) == audit.ActorDCController && e.Verb == "create" && e.Succeeded() &&
				audit.CategoryOf(e) == audit.CategoryDeployerPods
			return e.Namespace() + "/" + e.Name(), ok
		}),
		deployerStarts: audit.NewTimes(func(e audit.Event) (string, bool) {
			ok := audit.Actor(e) == audit.ActorPodRuntime && e.Succeeded() && e.Resource() == "pods/status" &&
				audit.CategoryOf(e) == audit.CategoryDeployerPods
			return e.Namespace() + "/" + e.Name(), ok
		}),
		scheduled:    audit.NewTimes(deployerScheduled),
		statusWrites: newNthTimes(podRunningWrite, deployerStatusWrite),
	}
}

// add reads one audit event into the ledger.
func (l *ledger) add(e audit.Event) {
	l.tally.Add(e)
	l.triggers.Add(e)
	l.deployerPods.Add(e)
	l.deployerStarts.Add(e)
	l.scheduled.Add(e)
	l.statusWrites.Add(e)
}

// readAuditFile adds one audit log file to the ledger.
func readAuditFile(path string, l *ledger) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening the audit log: %w", err)
	}
	defer f.Close()
	err = audit.Read(f, func(e audit.Event) error {
		l.add(e)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// analyze fills the report's figures from the phases and the audit log.
func (r *runner) analyze(rep *report.Report) error {
	l, err := r.readLedger()
	if err != nil {
		return err
	}
	for i, p := range r.records {
		if p.Phase == report.PhaseFirst || p.Phase == report.PhaseChange {
			rep.APICost = append(rep.APICost, report.APICost{N: p.N, Phase: p.Phase, System: p.System, Mode: p.Mode, Repeat: p.Repeat, Rollouts: len(p.Names), Actors: l.tally.Counts(i)})
		}
		rep.Latency = append(rep.Latency, r.latencyOf(l, p))
	}
	for i, f := range r.footprints {
		fp := f.Footprint
		for _, c := range l.tally.Counts(len(r.records) + i) {
			if c.Actor == audit.ActorDCController {
				fp.Writes, fp.WriteKinds = c.Writes(), c
			}
		}
		rep.Footprint = append(rep.Footprint, fp)
	}
	rep.Throughput = r.throughputs(l)
	rep.CriticalPaths = r.criticalPaths(l)
	rep.Objective = r.objective(l)
	if r.hostileRun != nil {
		rep.Hostile = r.hostileOf(l)
		rep.Notes = append(rep.Notes, hostileNotes(rep.Hostile, r.hostileRun)...)
		fmt.Fprintln(r.o.Log, rep.Hostile.Line())
	}
	if r.reference != nil || len(rep.Throughput) > 0 {
		if rep.Reference == nil {
			rep.Reference = &report.Reference{}
		}
		if r.reference != nil {
			*rep.Reference = *r.reference
		}
		rep.Reference.Floors = r.floors(l)
	}
	return nil
}

// triggerTime is when a rollout was triggered: the audited completion of
// dc-bench's write, or, without it, when dc-bench got the answer.
func (l *ledger) triggerTime(p *phaseRecord, name string) time.Time {
	if t, ok := l.triggers.Get(p.Namespace + "/" + name + "/" + p.TriggerVerb); ok {
		return t
	}
	return p.Triggers[name]
}

// latencyOf summarizes a phase's per-rollout delays.
func (r *runner) latencyOf(l *ledger, p *phaseRecord) report.Latency {
	var toPod, toStart, toDone []float64
	firstPod, _ := l.objectiveSamples(p)
	for _, name := range p.Names {
		trigger := l.triggerTime(p, name)
		if trigger.IsZero() {
			continue
		}
		if done, ok := p.Done[name]; ok {
			toDone = append(toDone, done.Sub(trigger).Seconds())
		}
		pod := p.Namespace + "/" + deployment.DeployerPodName(deployment.Name(name, p.Version))
		if created, ok := l.deployerPods.Get(pod); ok {
			toPod = append(toPod, created.Sub(trigger).Seconds())
		}
		if started, ok := l.deployerStarts.Get(pod); ok {
			toStart = append(toStart, started.Sub(trigger).Seconds())
		}
	}
	lat := report.Latency{System: p.System, Mode: p.Mode, Load: p.Load, InFlight: p.InFlight,
		ToDeployerPod: stats.Summarize(toPod), ToComplete: stats.Summarize(toDone), ToDeployerStart: stats.Summarize(toStart),
		ToFirstPod: stats.Summarize(firstPod)}
	if p.Repeat > 0 && r.o.Repeat > 1 {
		lat.Load += fmt.Sprintf(" [repeat %d, %s first]", p.Repeat, p.First)
	}
	if p.Probe {
		lat.Probes, lat.StillInFlight = true, p.StillInFlight
	}
	if p.System == report.SystemDC && p.InFlight == 1 && !p.Probe {
		lat.PrescribedSeconds = prescribedPause(r.o.Replicas).Seconds()
		lat.Rest = stats.Summarize(less(toDone, lat.PrescribedSeconds))
	}
	return lat
}

// objectiveSamples are a phase's per-rollout seconds from the trigger to
// the first new pod the watch saw and to completion, each over the
// rollouts that have it.
func (l *ledger) objectiveSamples(p *phaseRecord) (firstPod, complete []float64) {
	for _, name := range p.Names {
		trigger := l.triggerTime(p, name)
		if trigger.IsZero() {
			continue
		}
		if seen, ok := p.Steps[name][report.StepFirstPod]; ok {
			firstPod = append(firstPod, seen.Sub(trigger).Seconds())
		}
		if done, ok := p.Done[name]; ok {
			complete = append(complete, done.Sub(trigger).Seconds())
		}
	}
	return firstPod, complete
}

// objective pools the throughput phases' rollouts (triggered at once, not
// the probes) over the repeats, per size, phase, system and mode.
func (r *runner) objective(l *ledger) []report.Objective {
	var samples []report.ObjectiveSamples
	for _, p := range r.records {
		if p.Probe || p.Repeat == 0 || (p.Phase != report.PhaseFirst && p.Phase != report.PhaseChange) {
			continue
		}
		firstPod, complete := l.objectiveSamples(p)
		samples = append(samples, report.ObjectiveSamples{Key: report.ObjectiveKey{Where: report.WhereKwok, N: p.N, Phase: p.Phase, System: p.System, Mode: p.Mode},
			FirstPod: firstPod, Complete: complete})
	}
	return report.PoolObjective(samples)
}

// prescribedPause is how long the benchmark DC's own settings make its
// deployer sleep in a template change (strategy.PrescribedPause of its
// Rolling parameters: updatePeriodSeconds and intervalSeconds defaulted).
func prescribedPause(replicas int32) time.Duration {
	d, err := strategy.PrescribedPause(newDC("", "", replicas).Spec.Strategy.RollingParams, replicas)
	if err != nil {
		// The benchmark's own parameters are valid; a failure here is
		// a bug the report shows as no prescribed time.
		return 0
	}
	return d
}

// less subtracts d from every value.
func less(values []float64, d float64) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		out[i] = v - d
	}
	return out
}

// throughputs pairs the systems' phases of each size and repeat.
func (r *runner) throughputs(l *ledger) []report.Throughput {
	var out []report.Throughput
	for _, n := range r.o.Sizes {
		for k := 1; k <= r.o.Repeat; k++ {
			for _, phase := range []string{report.PhaseFirst, report.PhaseChange} {
				for _, mode := range r.o.DCModes {
					dc, dep := r.record(report.SystemDC, mode, phase, n, k), r.record(report.SystemDeployment, "", phase, n, k)
					if dc == nil || dep == nil {
						continue
					}
					t := report.Throughput{N: n, Phase: phase, Mode: mode, Repeat: k, First: dc.First, DC: dc.run(), Deployment: dep.run()}
					t.DC.Complete = r.latencyOf(l, dc).ToComplete
					t.Deployment.Complete = r.latencyOf(l, dep).ToComplete
					t.Ratio = stats.Ratio(t.DC.Seconds, t.Deployment.Seconds)
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// record finds a throughput phase's record of one repeat; mode is the
// DCs' deployer mode ("" for the Deployment).
func (r *runner) record(system, mode, phase string, n, repeat int) *phaseRecord {
	return r.find(func(p *phaseRecord) bool {
		return !p.Probe && p.System == system && p.Mode == mode && p.Phase == phase && p.N == n && p.Repeat == repeat
	})
}

// probes finds the record of the probes that ran during a throughput phase.
func (r *runner) probes(system, mode, phase string, n, repeat int) *phaseRecord {
	return r.find(func(p *phaseRecord) bool {
		return p.Probe && p.System == system && p.Mode == mode && p.Phase == probePhase(phase) && p.InFlight == n && p.Repeat == repeat
	})
}

// find returns the first record match selects, or nil.
func (r *runner) find(match func(*phaseRecord) bool) *phaseRecord {
	i := slices.IndexFunc(r.records, match)
	if i < 0 {
		return nil
	}
	return r.records[i]
}

// floors computes the RC manager's floor for each throughput phase: a
// first rollout needs N×replicas pod creates, a template change as many
// creates and as many deletes; each probe that ran during the phase, a
// template change, adds as many as one of those.
func (r *runner) floors(l *ledger) []report.Floor {
	var out []report.Floor
	for _, n := range r.o.Sizes {
		for k := 1; k <= r.o.Repeat; k++ {
			for _, phase := range []string{report.PhaseFirst, report.PhaseChange} {
				if f, ok := r.floor(l, n, k, phase); ok {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// floor is the RC manager's floor of one phase of one repeat.
func (r *runner) floor(l *ledger, n, repeat int, phase string) (report.Floor, bool) {
	mode := r.o.primaryMode()
	dc, dep := r.record(report.SystemDC, mode, phase, n, repeat), r.record(report.SystemDeployment, "", phase, n, repeat)
	if dc == nil {
		return report.Floor{}, false
	}
	pods := n * int(r.o.Replicas)
	if phase == report.PhaseChange {
		pods *= 2
	}
	probes := 0
	if p := r.probes(report.SystemDC, mode, phase, n, repeat); p != nil {
		probes = len(p.Triggers)
	}
	pods += probes * 2 * int(r.o.Replicas)
	f := report.Floor{N: n, Phase: phase, Repeat: repeat, PodWrites: pods, Probes: probes, QPS: r.o.kcmQPS(), Seconds: float64(pods) / r.o.kcmQPS(), DCSeconds: dc.Seconds()}
	if dep != nil {
		f.DeploySeconds = dep.Seconds()
	}
	for _, c := range l.tally.Counts(slices.Index(r.records, dc)) {
		if c.Actor == audit.ActorRCManager {
			f.RCManagerWrites = c.Writes()
		}
	}
	return f, true
}

// controllerGOGC states the GOGC of the dc-controller processes dc-bench
// starts: they inherit its environment.
func controllerGOGC() string {
	if v := os.Getenv("GOGC"); v != "" {
		return fmt.Sprintf("GOGC=%s, from the environment", v)
	}
	limit := ", and a memory limit that follows the heap's goal"
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		limit += ", at most GOMEMLIMIT=" + v + " from the environment"
	}
	return fmt.Sprintf("GOGC=%d, falling to %d to keep %d MiB of headroom%s: dc-controller's default",
		controller.DefaultGCPercent, controller.MinGCPercent, controller.GCHeadroom>>20, limit)
}

// settings are the run's settings as the report states them.
func settings(o Options) report.Settings {
	s := report.Settings{
		Sizes: o.Sizes, Repeat: o.Repeat, Replicas: o.Replicas, Nodes: o.Nodes,
		Strategy:      "rolling, maxSurge 25%, maxUnavailable 25% (DC: Rolling with default updatePeriodSeconds 1, intervalSeconds 1, timeoutSeconds 600)",
		ControllerQPS: o.ControllerQPS, ControllerBurst: o.ControllerBurst, ControllerWorkers: o.ControllerWorkers, ControllerGOGC: controllerGOGC(),
		DeployerQPS: deployerQPS, DeployerBurst: deployerBurst, RuntimeQPS: runtimeQPS, RuntimeBurst: runtimeBurst, DCModes: o.DCModes,
		KCMQPS: o.kcmQPS(), KCMBurst: o.kcmBurst(), KCMConcurrency: kcmConcurrency,
		BenchQPS: o.BenchQPS, LatencySamples: o.LatencySamples, Probes: o.Probes, ProbeInterval: o.ProbeInterval.Seconds(),
		FootprintSizes: o.FootprintSizes, FootprintRevisions: o.FootprintRevisions, KCMDefaults: o.KCMQPS == 0 && o.KCMBurst == 0,
		RawCreates: o.RawCreates, RawConcurrency: o.RawConcurrency,
		Audit: "kube-apiserver audit log, every request but watches at level Metadata, stage ResponseComplete",
		Quick: o.Quick,
	}
	if o.runs(ScenarioHostile) {
		s.HostileRollouts = o.HostileRollouts
	}
	if o.runs(ScenarioFanOut) {
		s.FanOutSizes, s.FanOutHold = o.FanOutSizes, o.HoldWindow.Seconds()
	}
	return s
}
