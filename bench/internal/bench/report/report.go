// Package report holds the benchmark's results (saved as JSON) and renders
// them as the Markdown report that bench/README.md explains.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

// Systems compared.
const (
	SystemDC         = "DeploymentConfig"
	SystemDeployment = "Deployment"
)

// Phases of a throughput scenario.
const (
	PhaseFirst  = "first rollout"
	PhaseChange = "template change"
)

// Report is everything one run measured.
type Report struct {
	Started  time.Time        `json:"started"`
	Duration float64          `json:"durationSeconds"`
	Machine  procstat.Machine `json:"machine"`
	Versions Versions         `json:"versions"`
	Settings Settings         `json:"settings"`

	// Throughput and APICost have one entry per repeat; Spreads and
	// WriteSpreads sum them up over the repeats (see Summarize).
	Throughput   []Throughput       `json:"throughput"`
	APICost      []APICost          `json:"apiCost"`
	Spreads      []ThroughputSpread `json:"spreads,omitempty"`
	WriteSpreads []WritesSpread     `json:"writeSpreads,omitempty"`
	Latency      []Latency          `json:"latency"`
	Footprint    []Footprint        `json:"footprint"`
	Reference    *Reference         `json:"reference,omitempty"`
	// Hostile is the hostile scenario's figures.
	Hostile *Hostile `json:"hostile,omitempty"`
	// InFlight is the in-flight scenario's figures, one per
	// size and deployer mode.
	InFlight []InFlight `json:"inFlight,omitempty"`
	// FanOut and FanOutHeld are the fan-out scenario's figures: each case
	// of each size, and what waiting costs under a freeze.
	FanOut     []FanOut     `json:"fanOut,omitempty"`
	FanOutHeld []FanOutHeld `json:"fanOutHeld,omitempty"`
	// BeforeAfter are the figures of the scenarios that measure a
	// baseline build against this one (dashboard, logcache).
	BeforeAfter []BeforeAfter `json:"beforeAfter,omitempty"`
	// CriticalPaths split the throughput phases' rollouts into the steps
	// of their critical path, per size, phase, system and mode.
	CriticalPaths []CriticalPath `json:"criticalPaths,omitempty"`
	// Objective is the published rollout latency objective's figures:
	// trigger → first new pod and → Complete per size, phase, system and
	// mode, pooled over the repeats (see Objective).
	Objective []Objective `json:"objective,omitempty"`
	// Controller is dc-controller's resource use during the rollout
	// scenarios (one process for all of them).
	Controller *procstat.Usage `json:"controller,omitempty"`

	Targets []Target `json:"targets"`
	// Notes are remarks of the run: scenarios skipped, rollouts that
	// failed, anything that qualifies a figure.
	Notes []string `json:"notes,omitempty"`
}

// Versions of what ran.
type Versions struct {
	Go            string `json:"go"`
	Kubernetes    string `json:"kubernetes"`
	Kwok          string `json:"kwok"`
	Etcd          string `json:"etcd"`
	Deployconfig  string `json:"deployconfig"`
	ControllerRun string `json:"controllerRuntime"`
}

// Settings are the knobs of the run.
type Settings struct {
	Sizes             []int   `json:"sizes"`
	Repeat            int     `json:"repeat"`
	Replicas          int32   `json:"replicas"`
	Nodes             int     `json:"nodes"`
	Strategy          string  `json:"strategy"`
	ControllerQPS     float64 `json:"controllerQPS"`
	ControllerBurst   int     `json:"controllerBurst"`
	ControllerWorkers int     `json:"controllerWorkers"`
	ControllerGOGC    string  `json:"controllerGOGC"`
	DeployerQPS       float64 `json:"deployerQPS"`
	DeployerBurst     int     `json:"deployerBurst"`
	// RuntimeQPS and RuntimeBurst are each fake node's kubelet client in
	// the pod runtime (one client per node).
	RuntimeQPS   float64 `json:"runtimeQPS,omitempty"`
	RuntimeBurst int     `json:"runtimeBurst,omitempty"`
	// DCModes are the deployer modes the throughput scenario ran DCs in.
	DCModes  []string `json:"dcModes,omitempty"`
	KCMQPS   float64  `json:"kubeControllerManagerQPS"`
	KCMBurst int      `json:"kubeControllerManagerBurst"`
	// KCMDefaults says KCMQPS and KCMBurst are kube-controller-manager's
	// defaults, which the run left alone.
	KCMDefaults     bool    `json:"kubeControllerManagerDefaults"`
	KCMConcurrency  string  `json:"kubeControllerManagerConcurrency"`
	BenchQPS        float64 `json:"benchClientQPS"`
	LatencySamples  int     `json:"latencyIdleSamples"`
	HostileRollouts int     `json:"hostileRollouts,omitempty"`
	// FanOutSizes and FanOutHold are the fan-out scenario's N and its
	// window under a freeze, in seconds; none when it did not run.
	FanOutSizes        []int   `json:"fanOutSizes,omitempty"`
	FanOutHold         float64 `json:"fanOutHoldSeconds,omitempty"`
	Probes             int     `json:"probes"`
	ProbeInterval      float64 `json:"probeIntervalSeconds"`
	FootprintSizes     []int   `json:"footprintSizes"`
	FootprintRevisions []int   `json:"footprintRevisions"`
	RawCreates         int     `json:"rawCreates"`
	RawConcurrency     int     `json:"rawConcurrency"`
	Audit              string  `json:"audit"`
	Quick              bool    `json:"quick"`
}

// Point is one point of a curve: after Seconds, Count rollouts were done.
type Point struct {
	Seconds float64 `json:"s"`
	Count   int     `json:"n"`
}

// Run is one system's side of a throughput phase.
type Run struct {
	System string `json:"system"`
	// Seconds is from the first create or change to the last rollout's
	// completion.
	Seconds   float64 `json:"seconds"`
	Completed int     `json:"completed"`
	Failed    int     `json:"failed"`
	// Curve is the number of completed rollouts over time.
	Curve []Point `json:"curve"`
	// Complete summarizes each rollout's time from its trigger to its
	// completion, in seconds.
	Complete stats.Summary `json:"complete"`
	// ControlPlaneCPU is the CPU seconds each control-plane process
	// (ControlPlaneProcesses) used from the phase's start until it settled,
	// its probes included.
	ControlPlaneCPU map[string]float64 `json:"controlPlaneCpu,omitempty"`
}

// ControlPlaneProcesses are the processes whose CPU a phase reports: what
// every rollout costs the cluster's own parts, whichever system runs it.
var ControlPlaneProcesses = []string{"kube-apiserver", "etcd", "kube-controller-manager"}

// Throughput is one phase at one size, both systems.
type Throughput struct {
	N     int    `json:"n"`
	Phase string `json:"phase"`
	// Mode is the DCs' deployer mode (ModePod, ModeController).
	Mode string `json:"mode,omitempty"`
	// Repeat numbers the repeat (from 1); First names the system that ran
	// first in it (the order alternates from one repeat to the next).
	Repeat     int     `json:"repeat,omitempty"`
	First      string  `json:"first,omitempty"`
	DC         Run     `json:"dc"`
	Deployment Run     `json:"deployment"`
	Ratio      float64 `json:"ratio"`
}

// APICost is the writes of one system's phase, by actor.
type APICost struct {
	N      int    `json:"n"`
	Phase  string `json:"phase"`
	System string `json:"system"`
	// Mode is a DC cost's deployer mode, "" for the Deployment's.
	Mode string `json:"mode,omitempty"`
	// Repeat numbers the repeat (from 1); pooled costs (PoolCosts) have
	// none and count the Repeats they add up.
	Repeat   int                `json:"repeat,omitempty"`
	Repeats  int                `json:"repeats,omitempty"`
	Rollouts int                `json:"rollouts"`
	Actors   []audit.ActorCount `json:"actors"`
}

// Totals adds up the actors' writes.
func (c APICost) Totals() audit.ActorCount {
	var t audit.ActorCount
	for _, a := range c.Actors {
		t.Objects += a.Objects
		t.AppPods += a.AppPods
		t.DeployerPods += a.DeployerPods
		t.Events += a.Events
		t.Conflicts += a.Conflicts
		t.Reads += a.Reads
	}
	return t
}

// PerRollout divides a count by the number of rollouts.
func (c APICost) PerRollout(n int) float64 {
	return stats.Ratio(float64(n), float64(c.Rollouts))
}

// RolloutWrites is the full-cost targets' measure: writes per rollout of everything
// but the application's pods (their create, binding, status and delete):
// the deployer pod's writes and its kubelet's, events, objects and status.
func (c APICost) RolloutWrites() float64 {
	n := 0
	for _, a := range c.Actors {
		n += a.RolloutWriteCount()
	}
	return c.PerRollout(n)
}

// WritesExclPods is the earlier measure: writes per rollout, pods (the
// application's and the deployers') excluded, events included.
func (c APICost) WritesExclPods() float64 {
	t := c.Totals()
	return c.PerRollout(t.Objects + t.Events)
}

// Latency is a distribution of per-rollout delays under one load.
type Latency struct {
	System string `json:"system"`
	// Mode is a DC row's deployer mode, "" for the Deployment's.
	Mode string `json:"mode,omitempty"`
	// Load says what else was going on, e.g. "idle (one at a time)" or
	// "1000 triggered at once".
	Load string `json:"load"`
	// InFlight is the number of rollouts triggered together, or, for
	// probes, the N of the throughput phase they ran during.
	InFlight int `json:"inFlight"`
	// Probes marks rollouts triggered one at a time while InFlight others
	// were under way; StillInFlight is the fewest of those not yet ended
	// at any probe's trigger.
	Probes        bool `json:"probes,omitempty"`
	StillInFlight int  `json:"stillInFlight,omitempty"`
	// ToDeployerPod is from the trigger to the deployer pod's creation
	// (DeploymentConfigs only), in seconds.
	ToDeployerPod stats.Summary `json:"toDeployerPod"`
	// ToComplete is from the trigger to the rollout's completion.
	ToComplete stats.Summary `json:"toComplete"`
	// ToFirstPod is from the trigger to dc-bench's watch seeing the first
	// pod of the new version (a DC's pod of the new RC, a Deployment's of
	// the new ReplicaSet): when the user's change first runs.
	ToFirstPod stats.Summary `json:"toFirstPod"`
	// ToDeployerStart is from the trigger to the deployer pod's start: the
	// first status its kubelet (on kwok the pod runtime) wrote for it.
	ToDeployerStart stats.Summary `json:"toDeployerStart"`
	// PrescribedSeconds is how long the DC's own settings make its deployer
	// sleep (updatePeriodSeconds after each scale-up, intervalSeconds
	// between steps), and Rest each rollout's ToComplete less that: the
	// time the user waits for deployconfig rather than for the settings.
	PrescribedSeconds float64       `json:"prescribedSeconds,omitempty"`
	Rest              stats.Summary `json:"rest"`
}

// IsIdle reports whether the row is the latency scenario's, one rollout
// at a time on an otherwise idle cluster. A throughput phase of N=1 also
// has one rollout in flight, but it is not what the idle target reads:
// its rollouts follow the phase's setup and run beside its probes.
func (l Latency) IsIdle() bool {
	return !l.Probes && strings.HasPrefix(l.Load, "idle")
}

// Footprint is dc-controller's resource use with a number of DCs.
type Footprint struct {
	// Mode is dc-controller's deployer mode for this reading (ModePod or
	// ModeController; "" in reports from before the footprint had modes).
	Mode         string `json:"mode,omitempty"`
	DCs          int    `json:"dcs"`
	Revisions    int    `json:"revisions"`
	RCs          int    `json:"rcs"`
	DeployerPods int    `json:"deployerPods"`
	// SyncSeconds is from the controller's start until its queues were
	// empty and it had settled.
	SyncSeconds float64        `json:"syncSeconds"`
	Usage       procstat.Usage `json:"usage"`
	// HeapBytes is the Go heap in use at the end (go_memstats_heap_inuse_bytes).
	HeapBytes uint64 `json:"heapBytes"`
	// Writes is what the controller wrote while it synced; WriteKinds
	// its writes by resource and verb.
	Writes     int              `json:"writes"`
	WriteKinds audit.ActorCount `json:"writeKinds"`
	// Templates is the number of compat-corpus pod templates the DCs
	// cycle through; Replicas each DC's.
	Templates int   `json:"templates,omitempty"`
	Replicas  int32 `json:"replicas"`
	// Created is the objects dc-bench made for this size (DCs, RCs,
	// pods, their status writes), CreateSeconds how long that took and
	// Clients how many rate-limited clients made them.
	Created       int     `json:"created,omitempty"`
	CreateSeconds float64 `json:"createSeconds,omitempty"`
	Clients       int     `json:"clients,omitempty"`
	// LogBytes is the in-controller log each DC's latest RC carries (0:
	// none), as a rollout run by dc-controller leaves it.
	LogBytes int `json:"logBytes,omitempty"`
}

// Reference is what the cluster itself can do.
type Reference struct {
	RCCreates   int     `json:"rcCreates"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	PerSecond   float64 `json:"perSecond"`
	Floors      []Floor `json:"floors"`
}

// Floor is the least time kube-controller-manager's RC (or RS) manager
// needs for a phase: the pod writes it must make divided by its client QPS.
type Floor struct {
	N      int    `json:"n"`
	Phase  string `json:"phase"`
	Repeat int    `json:"repeat,omitempty"`
	// PodWrites is the pod creates and deletes the phase needs, with
	// those of the Probes probe rollouts that ran during it.
	PodWrites int     `json:"podWrites"`
	Probes    int     `json:"probes,omitempty"`
	QPS       float64 `json:"qps"`
	Seconds   float64 `json:"seconds"`
	// MeasuredPodWrites counts the pod writes the RC manager actually made
	// in the DC run (with its RC status updates, which share its QPS).
	RCManagerWrites int     `json:"rcManagerWrites"`
	DCSeconds       float64 `json:"dcSeconds"`
	DeploySeconds   float64 `json:"deploymentSeconds"`
}

// Target is one of the targets and what was measured.
type Target struct {
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"`
	// Met is nil when the run did not measure it.
	Met *bool `json:"met"`
}

// ReadJSON reads a report that WriteJSON saved.
func ReadJSON(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return &r, nil
}

// WriteJSON saves the report.
func (r *Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
