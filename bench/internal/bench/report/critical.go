package report

import (
	"fmt"
	"strings"

	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

// Deployer modes of DeploymentConfig rows: dc-controller with
// --deployer-mode=pod (a deployer pod per rollout) or
// --deployer-mode=controller-when-possible (the rollout runs in
// dc-controller).
const (
	ModePod        = "pod"
	ModeController = "controller"
)

// ModeLabel names a DC mode in tables, e.g. "DC (controller)"; a row of
// no mode (reports from before deployer modes, or the Deployment) is just "DC".
func ModeLabel(mode string) string {
	if mode == "" {
		return "DC"
	}
	return "DC (" + mode + ")"
}

// Steps of a rollout's critical path.
const (
	StepTrigger      = "trigger"
	StepPodCreated   = "deployer pod created"
	StepScheduled    = "scheduled"
	StepPodRunning   = "deployer pod Running"
	StepPhaseRunning = "phase Running"
	StepRSCreated    = "new ReplicaSet created"
	StepFirstScale   = "first scale"
	StepLastScale    = "last scale"
	StepComplete     = "Complete"
	// StepFirstPod is when dc-bench's watch first saw a pod of the new
	// version (a DC's pod of the new RC, a Deployment's of the new
	// ReplicaSet): not a step of the critical path's chain, but the
	// objective's "trigger → first new pod".
	StepFirstPod = "first new pod"
)

// PathSteps is the critical path of a rollout of a system in a mode, in
// order.
func PathSteps(system, mode string) []string {
	switch {
	case system == SystemDeployment:
		return []string{StepTrigger, StepRSCreated, StepFirstScale, StepLastScale, StepComplete}
	case mode == ModeController:
		return []string{StepTrigger, StepPhaseRunning, StepFirstScale, StepLastScale, StepComplete}
	default:
		return []string{StepTrigger, StepPodCreated, StepScheduled, StepPodRunning, StepFirstScale, StepLastScale, StepComplete}
	}
}

// Segment is the time between two steps of the critical path, over the
// rollouts that have both.
type Segment struct {
	From    string        `json:"from"`
	To      string        `json:"to"`
	Seconds stats.Summary `json:"seconds"`
}

// CriticalPath is where the time of one system's rollouts goes in one
// phase and size, over every repeat: each segment between consecutive
// steps, and trigger → Complete.
type CriticalPath struct {
	N        int           `json:"n"`
	Phase    string        `json:"phase"`
	System   string        `json:"system"`
	Mode     string        `json:"mode,omitempty"`
	Rollouts int           `json:"rollouts"`
	Segments []Segment     `json:"segments"`
	Total    stats.Summary `json:"total"`
}

// PathOf summarizes rollouts' step times (seconds since any common origin,
// one map per rollout) along steps: each pair of consecutive steps, and
// the first to the last, over the rollouts that have both.
func PathOf(steps []string, rollouts []map[string]float64) ([]Segment, stats.Summary) {
	segments := make([]Segment, 0, len(steps)-1)
	for i := 1; i < len(steps); i++ {
		segments = append(segments, Segment{From: steps[i-1], To: steps[i], Seconds: stats.Summarize(gaps(rollouts, steps[i-1], steps[i]))})
	}
	return segments, stats.Summarize(gaps(rollouts, steps[0], steps[len(steps)-1]))
}

// gaps are the times from step from to step to of the rollouts that have
// both.
func gaps(rollouts []map[string]float64, from, to string) []float64 {
	var out []float64
	for _, r := range rollouts {
		a, okA := r[from]
		b, okB := r[to]
		if okA && okB {
			out = append(out, b-a)
		}
	}
	return out
}

// Bound is the segment with the longest median: what bounds the
// rollouts' time; false when none was measured.
func (c CriticalPath) Bound() (Segment, bool) {
	var best Segment
	found := false
	for _, s := range c.Segments {
		if s.Seconds.Count > 0 && (!found || s.Seconds.P50 > best.Seconds.P50) {
			best, found = s, true
		}
	}
	return best, found
}

// label names the path's system and mode.
func (c CriticalPath) label() string {
	if c.System == SystemDC {
		return ModeLabel(c.Mode)
	}
	return c.System
}

func writeCriticalPath(b *strings.Builder, r *Report) {
	if len(r.CriticalPaths) == 0 {
		return
	}
	b.WriteString("## Critical path\n\n")
	b.WriteString("Where each rollout's time goes, over every repeat of a throughput phase (nearest-rank p50 / p99 of each segment, over the rollouts that have both steps). " +
		"Trigger, deployer pod created, scheduled (the scheduler's binding) and deployer pod Running (its kubelet's second status write) are from the audit log; " +
		"phase Running, new ReplicaSet, first and last scale (any change of an RC's or RS's spec.replicas of the rollout's object) and Complete are when dc-bench's watch saw them. " +
		"A segment's percentiles do not add up to the total's.\n\n")
	b.WriteString("| N | phase | system | rollouts | segment | p50 | p99 |\n| ---: | --- | --- | ---: | --- | ---: | ---: |\n")
	for _, c := range r.CriticalPaths {
		for _, s := range c.Segments {
			fmt.Fprintf(b, "| %d | %s | %s | %d | %s → %s | %s | %s |\n", c.N, c.Phase, c.label(), c.Rollouts, s.From, s.To, seconds(s.Seconds.P50, s.Seconds.Count), seconds(s.Seconds.P99, s.Seconds.Count))
		}
		fmt.Fprintf(b, "| %d | %s | %s | %d | **%s → %s** | **%s** | **%s** |\n", c.N, c.Phase, c.label(), c.Rollouts, StepTrigger, StepComplete, seconds(c.Total.P50, c.Total.Count), seconds(c.Total.P99, c.Total.Count))
	}
	b.WriteString("\n")
	for _, c := range r.CriticalPaths {
		if c.System != SystemDC {
			continue
		}
		if s, ok := c.Bound(); ok {
			fmt.Fprintf(b, "- N=%d, %s, %s: the DC's time is bounded by %s → %s, p50 %.2f s of %.2f s trigger → Complete (p99 %.2f s of %.2f s).\n",
				c.N, c.Phase, c.label(), s.From, s.To, s.Seconds.P50, c.Total.P50, s.Seconds.P99, c.Total.P99)
		}
	}
	b.WriteString("\n")
}

// seconds formats a percentile, a dash when nothing was measured.
func seconds(v float64, count int) string {
	if count == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f s", v)
}
