// Package bench runs deployconfig's benchmark: DeploymentConfigs
// against Kubernetes Deployments on one playground cluster in one run,
// with the API server's audit log as the ledger of who wrote what. It
// creates the cluster, runs the scenarios, analyses the audit log and
// writes the report (see bench/README.md).
package bench

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
)

// Scenarios a run can include.
const (
	ScenarioReference  = "reference"
	ScenarioLatency    = "latency"
	ScenarioThroughput = "throughput"
	ScenarioFootprint  = "footprint"
	// ScenarioHostile is not among AllScenarios: its two
	// blocks of rollouts one at a time, each about 5 s for the DC's
	// prescribed pauses, add about two minutes to a run.
	ScenarioHostile = "hostile"
	// ScenarioInFlight is not among AllScenarios either: it
	// rolls out its N DCs twice per deployer mode and holds N rollouts in
	// flight, a scenario of its own.
	ScenarioInFlight = "inflight"
	// ScenarioFanOut is not among AllScenarios either: one ConfigMap
	// change of N DCs, without and with a RolloutPolicy, each with a
	// fresh set of DCs.
	ScenarioFanOut = "fanout"
	// ScenarioDashboard and ScenarioLogCache are not among AllScenarios
	// either: each measures a baseline build (BaselineBin) against this
	// one, which a default run has no build of.
	ScenarioDashboard = "dashboard"
	ScenarioLogCache  = "logcache"
)

// AllScenarios lists the scenarios a run performs by default, in the
// order a run performs them.
func AllScenarios() []string {
	return []string{ScenarioReference, ScenarioLatency, ScenarioThroughput, ScenarioFootprint}
}

// KnownScenarios lists every scenario a run can include: the default ones
// and those run only when asked for.
func KnownScenarios() []string {
	return append(AllScenarios(), ScenarioHostile, ScenarioInFlight, ScenarioFanOut, ScenarioDashboard, ScenarioLogCache, ScenarioCache)
}

// Options configure a run.
type Options struct {
	// Root is the deployconfig checkout (for config/crd/bases).
	Root string
	// BinDir holds the cluster's binaries and dc-controller.
	BinDir string
	// OutDir receives <date>.json, .md and .png.
	OutDir string
	// Name is the benchmark cluster's name; Workdir is kwokctl's working
	// directory ("" means kwokctl's default).
	Name    string
	Workdir string
	// Keep leaves the cluster running after the run, for a look around.
	Keep bool
	// Scenarios to run; empty means all.
	Scenarios []string
	// Systems limits the rollout scenarios to some of report.SystemDC and
	// report.SystemDeployment; empty means both.
	Systems []string
	// Label is added to the output files' names (<date>-<label>.*), so
	// that a partial run does not replace a whole one.
	Label string

	// Sizes are the N of the throughput scenario, each run for both
	// systems: first rollout, then a template change.
	Sizes []int
	// Repeat is how many times each size is run; the system that goes
	// first alternates from one repeat to the next (see repeatOrder).
	Repeat int
	// DCModes are the deployer modes (ModePod, ModeController) the
	// throughput scenario runs DeploymentConfigs in, each alongside the
	// Deployment in every repeat; empty means ModePod only.
	DCModes []string
	// Replicas of every DC and Deployment.
	Replicas int32
	// Nodes is the number of fake nodes.
	Nodes int
	// LatencySamples is the number of rollouts, one at a time, of the
	// latency scenario at idle.
	LatencySamples int
	// HostileRollouts is the number of rollouts, one at a time, of each
	// block of the hostile scenario: without, then with the hostile DCs.
	HostileRollouts int
	// InFlightSizes are the N of the in-flight scenario: how many
	// rollouts it holds in flight at once, in each deployer mode.
	InFlightSizes []int
	// FanOutSizes are the N of the fan-out scenario: how many DCs follow
	// its ConfigMap. HoldWindow is how long it counts reconciles while a
	// freeze holds all N in line.
	FanOutSizes []int
	HoldWindow  time.Duration
	// BaselineBin holds kubectl-dc and dc-controller built from
	// Baseline, the commit the dashboard and logcache scenarios measure
	// as "before" against BinDir's "after".
	BaselineBin string
	Baseline    string
	// DashboardDCs and DashboardPods size the dashboard scenario's
	// cluster: DCs, and pods in all (most of them not the DCs').
	// DashboardTabs is how many tabs it opens on each dashboard (each an
	// event stream of the list page and one of a DC page), and
	// DashboardWindow how long it counts requests with and without them.
	DashboardDCs    int
	DashboardPods   int
	DashboardTabs   int
	DashboardWindow time.Duration
	// LogCacheSizes are the DC counts of the logcache scenario, and
	// LogCacheLogBytes the size of the in-controller log on each DC's RC.
	LogCacheSizes    []int
	LogCacheLogBytes int
	// Probes is the number of probe rollouts of each throughput phase:
	// template changes of objects of their own, rolled out beforehand,
	// made one every ProbeInterval once the phase's N rollouts have all
	// started, to measure how soon a rollout starts while N are in
	// flight. 0 runs none.
	Probes        int
	ProbeInterval time.Duration
	// FootprintSizes are the DC counts dc-controller's footprint is
	// measured with; FootprintRevisions the revisions each DC keeps: one
	// value for every size, or one per size, for the DCs added to reach
	// it (fewer at the largest size makes its objects sooner).
	FootprintSizes     []int
	FootprintRevisions []int
	// FootprintReplicas is every footprint DC's replicas (its latest RC's;
	// dc-bench makes the pods for the RC manager to adopt, kwok runs them).
	FootprintReplicas int32
	// FootprintClients is how many clients, each with a rate limiter of
	// its own (BenchQPS), make the footprint's objects: one client is
	// one limiter for all of them.
	FootprintClients int
	// CompatDir is the compat corpus whose pod templates the footprint
	// DCs cycle through ("" means DC_COMPAT_DIR or the checkout's test/testdata/dc-corpus).
	CompatDir string
	// RawCreates RCs are created by RawConcurrency clients for the raw
	// write throughput.
	RawCreates     int
	RawConcurrency int

	// ControllerQPS, ControllerBurst and ControllerWorkers configure
	// dc-controller; the defaults are kube-controller-manager's client
	// settings and dc-controller's own worker count.
	ControllerQPS     float64
	ControllerBurst   int
	ControllerWorkers int
	// KCMQPS and KCMBurst are kube-controller-manager's client settings
	// (--kube-api-qps, --kube-api-burst); 0 leaves its defaults (20, 30).
	// Raising them with ControllerQPS and ControllerBurst moves the floor
	// its RC and RS managers set on both systems alike.
	KCMQPS   float64
	KCMBurst int
	// BenchQPS limits dc-bench's own client (creating and changing
	// objects); it is high so that it is never what is measured.
	BenchQPS float64
	// PhaseTimeout bounds one phase (e.g. 1000 template changes).
	PhaseTimeout time.Duration
	// Settle is how long each phase is watched after its last rollout
	// completed, so that the writes that follow completion (final status
	// updates) count towards it.
	Settle time.Duration
	// ProfileDir, when set, receives CPU and heap profiles of dc-controller
	// (dc-controller then runs inside dc-bench for the rollout scenarios).
	ProfileDir string
	// Quick marks a smoke run with small sizes.
	Quick bool

	// Log receives progress lines.
	Log io.Writer
}

// DefaultOptions are the benchmark's sizes, which fit 2 cores and 24 GB.
func DefaultOptions() Options {
	return Options{
		Name: "dc-bench",
		// 1 and 100 are the rollout latency objective's sizes (its
		// 1000 is the run of record's, bench/README.md).
		Sizes:              []int{1, 100, 200, 1000},
		Repeat:             3,
		Replicas:           3,
		Nodes:              3,
		LatencySamples:     20,
		HostileRollouts:    10,
		InFlightSizes:      []int{1000},
		FanOutSizes:        []int{200},
		DashboardDCs:       500,
		DashboardPods:      20000,
		DashboardTabs:      2,
		DashboardWindow:    time.Minute,
		LogCacheSizes:      []int{5000},
		LogCacheLogBytes:   16 << 10,
		HoldWindow:         time.Minute,
		Probes:             20,
		ProbeInterval:      500 * time.Millisecond,
		FootprintSizes:     []int{1000, 5000},
		FootprintRevisions: []int{10},
		FootprintReplicas:  3,
		FootprintClients:   8,
		RawCreates:         3000,
		RawConcurrency:     32,
		ControllerQPS:      20,
		ControllerBurst:    30,
		ControllerWorkers:  5,
		BenchQPS:           500,
		PhaseTimeout:       60 * time.Minute,
		Settle:             10 * time.Second,
	}
}

// QuickOptions shrinks o to a smoke run of a couple of minutes.
func QuickOptions(o Options) Options {
	o.Quick = true
	o.Sizes = []int{20}
	// Two repeats: enough to see the order alternate and a spread.
	o.Repeat = 2
	o.LatencySamples = 5
	o.HostileRollouts = 5
	o.InFlightSizes = []int{50}
	o.FanOutSizes = []int{50}
	o.DashboardDCs, o.DashboardPods = 50, 2000
	o.DashboardWindow = 30 * time.Second
	o.LogCacheSizes = []int{500}
	o.HoldWindow = 20 * time.Second
	o.Probes = 5
	o.FootprintSizes = []int{50, 200}
	o.FootprintRevisions = []int{10}
	o.RawCreates = 300
	o.PhaseTimeout = 10 * time.Minute
	o.Settle = 5 * time.Second
	return o
}

// validate checks o and sorts its sizes.
func (o *Options) validate() error {
	if o.Root == "" || o.BinDir == "" || o.OutDir == "" {
		return errors.New("the checkout, binary and output directories are required")
	}
	if len(o.Scenarios) == 0 {
		o.Scenarios = AllScenarios()
	}
	for _, s := range o.Scenarios {
		if !slices.Contains(KnownScenarios(), s) {
			return fmt.Errorf("unknown scenario %q (want some of %v)", s, KnownScenarios())
		}
	}
	if len(o.FootprintRevisions) > 1 && !slices.IsSorted(o.FootprintSizes) {
		return errors.New("footprint sizes must be in increasing order when each has its own revisions")
	}
	for _, sizes := range [][]int{o.Sizes, o.FootprintSizes, o.InFlightSizes, o.FanOutSizes, o.LogCacheSizes} {
		for _, n := range sizes {
			if n < 1 {
				return fmt.Errorf("invalid size %d", n)
			}
		}
		slices.Sort(sizes)
	}
	if o.Replicas < 1 || o.Nodes < 1 || o.RawConcurrency < 1 {
		return errors.New("replicas, nodes and concurrency must be at least 1")
	}
	if err := o.validateRevisions(); err != nil {
		return err
	}
	if o.KCMQPS < 0 || o.KCMBurst < 0 {
		return fmt.Errorf("kube-controller-manager QPS and burst must not be negative, got %g and %d", o.KCMQPS, o.KCMBurst)
	}
	if o.FootprintClients < 1 || o.FootprintReplicas < 0 {
		return fmt.Errorf("footprint clients must be at least 1 and replicas not negative, got %d and %d", o.FootprintClients, o.FootprintReplicas)
	}
	if o.CompatDir == "" {
		o.CompatDir = compatDir(o.Root)
	}
	if o.runs(ScenarioHostile) && o.HostileRollouts < 1 {
		return fmt.Errorf("hostile rollouts must be at least 1, got %d", o.HostileRollouts)
	}
	if err := o.validateModes(); err != nil {
		return err
	}
	if o.runs(ScenarioFanOut) && o.HoldWindow <= 0 {
		return fmt.Errorf("the fan-out's hold window must be above 0, got %s", o.HoldWindow)
	}
	if err := o.validateBaseline(); err != nil {
		return err
	}
	if o.Repeat < 1 {
		return fmt.Errorf("repeat must be at least 1, got %d", o.Repeat)
	}
	if o.Probes < 0 || o.Probes > 0 && o.ProbeInterval <= 0 {
		return errors.New("probes must not be negative, and need an interval above 0")
	}
	for _, s := range o.Systems {
		if s != report.SystemDC && s != report.SystemDeployment {
			return fmt.Errorf("unknown system %q (want %s or %s)", s, report.SystemDC, report.SystemDeployment)
		}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// compares reports whether the rollout scenarios include the system.
func (o *Options) compares(system string) bool {
	return len(o.Systems) == 0 || slices.Contains(o.Systems, system)
}

// runs reports whether the scenario is part of the run.
func (o *Options) runs(scenario string) bool {
	return slices.Contains(o.Scenarios, scenario)
}

// validateRevisions checks --footprint-revisions: one value for every
// size or one per size, each at least 1.
func (o *Options) validateRevisions() error {
	if n := len(o.FootprintRevisions); n != 1 && n != len(o.FootprintSizes) {
		return fmt.Errorf("footprint revisions: want one value or one per footprint size (%d), got %d", len(o.FootprintSizes), n)
	}
	for _, r := range o.FootprintRevisions {
		if r < 1 {
			return fmt.Errorf("footprint revisions must be at least 1, got %d", r)
		}
	}
	return nil
}

// RevisionsAt is how many revisions the DCs added to reach the i-th
// footprint size keep.
func (o Options) RevisionsAt(i int) int {
	if len(o.FootprintRevisions) == 1 {
		return o.FootprintRevisions[0]
	}
	return o.FootprintRevisions[i]
}

// kcmArgs are kwokctl's extra arguments for kube-controller-manager's
// client settings, none when they are its defaults.
func (o Options) kcmArgs() []string {
	var args []string
	if o.KCMQPS > 0 {
		args = append(args, "kube-controller-manager=kube-api-qps="+strconv.FormatFloat(o.KCMQPS, 'f', -1, 64))
	}
	if o.KCMBurst > 0 {
		args = append(args, "kube-controller-manager=kube-api-burst="+strconv.Itoa(o.KCMBurst))
	}
	return args
}

// kcmQPS is kube-controller-manager's client QPS in this run.
func (o Options) kcmQPS() float64 {
	if o.KCMQPS > 0 {
		return o.KCMQPS
	}
	return kcmDefaultQPS
}

// kcmBurst is kube-controller-manager's client burst in this run.
func (o Options) kcmBurst() int {
	if o.KCMBurst > 0 {
		return o.KCMBurst
	}
	return kcmDefaultBurst
}

// validateBaseline checks the settings of the scenarios that measure a
// baseline build.
func (o *Options) validateBaseline() error {
	if !o.runs(ScenarioDashboard) && !o.runs(ScenarioLogCache) {
		return nil
	}
	if o.BaselineBin == "" {
		return fmt.Errorf("the %s and %s scenarios need --baseline-bin: a directory with kubectl-dc and dc-controller built from the baseline commit", ScenarioDashboard, ScenarioLogCache)
	}
	if o.Baseline == "" {
		o.Baseline = "baseline"
	}
	if o.runs(ScenarioDashboard) && (o.DashboardDCs < 1 || o.DashboardPods < 2*o.DashboardDCs || o.DashboardTabs < 1 || o.DashboardWindow <= 0) {
		return fmt.Errorf("the dashboard scenario needs at least 1 DC, 2 pods per DC (its app and deployer pods), 1 tab and a window above 0; got %d DCs, %d pods, %d tabs, %s",
			o.DashboardDCs, o.DashboardPods, o.DashboardTabs, o.DashboardWindow)
	}
	if o.runs(ScenarioLogCache) && o.LogCacheLogBytes < 0 {
		return fmt.Errorf("the logcache scenario's log size must not be negative, got %d", o.LogCacheLogBytes)
	}
	return nil
}
