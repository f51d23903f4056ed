package report

import (
	"fmt"
	"slices"

	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

// The targets.
const (
	targetChangeRatio      = 0.8
	targetFirstRatio       = 1.0
	targetWritesRatio      = 1.2
	targetFirstWritesRatio = 1.5
	targetPodP99Seconds    = 1.0
	targetRSSBytes         = 100 << 20
	targetLargeRSSBytes    = 256 << 20
	targetInFlight         = 1000
	targetDCs              = 5000
	targetLargeDCs         = 20000
)

// EvaluateTargets compares the report's figures with the issues' targets
// (7 and 18), at the largest sizes the run measured; figures measured in
// several repeats are judged by their median.
func EvaluateTargets(r *Report) []Target {
	r.Summarize()
	return append([]Target{
		ratioTarget(r, PhaseChange, targetChangeRatio),
		ratioTarget(r, PhaseFirst, targetFirstRatio),
		writesTarget(r, PhaseChange, targetWritesRatio),
		writesTarget(r, PhaseFirst, targetFirstWritesRatio),
		podLatencyTarget(r),
		podLatencyAtOnce(r),
		idleTarget(r),
		rssTarget(r, targetDCs, targetRSSBytes, ModePod),
		rssTarget(r, targetLargeDCs, targetLargeRSSBytes, ModePod),
		syncCPU(r),
	}, modeTargets(r)...)
}

// largestSpread returns the phase's spread over repeats at the largest N.
func largestSpread(r *Report, phase string) (ThroughputSpread, bool) {
	var best ThroughputSpread
	found := false
	for _, t := range r.Spreads {
		if t.Phase == phase && primaryMode(t.Mode) && (!found || t.N > best.N) {
			best, found = t, true
		}
	}
	return best, found
}

// spreadText formats a median with its spread, or the one value there is.
func spreadText(s stats.Spread, format string) string {
	if s.Count < 2 {
		return fmt.Sprintf(format, s.Median)
	}
	return fmt.Sprintf("median "+format+" (min "+format+", max "+format+", %d repeats)", s.Median, s.Min, s.Max, s.Count)
}

// atSize names a size, noting when it is not the one the target names.
func atSize(n, want int, unit string) string {
	if n == want {
		return fmt.Sprintf("%d %s", n, unit)
	}
	return fmt.Sprintf("%d %s (target is for %d)", n, unit, want)
}

func ratioTarget(r *Report, phase string, limit float64) Target {
	t := Target{
		Name: fmt.Sprintf("DC/Deployment time, %s", phase),
		Want: fmt.Sprintf("≤ %.2f at %d", limit, targetInFlight),
	}
	if limit == targetFirstRatio {
		t.Want = fmt.Sprintf("no later than Deployments (≤ %.2f) at %d", limit, targetInFlight)
	}
	tp, ok := largestSpread(r, phase)
	if !ok || tp.Ratio.Median == 0 {
		t.Got = "not measured"
		return t
	}
	t.Got = fmt.Sprintf("%s (%.0f s / %.0f s) at %s", spreadText(tp.Ratio, "%.2f"), tp.DC.Median, tp.Deployment.Median, atSize(tp.N, targetInFlight, "rollouts"))
	t.Met = new(tp.Ratio.Median <= limit && tp.Failed == 0)
	return t
}

// writesTarget judges the full-cost targets' writes of a rollout (all but the
// application pods') of one phase at the largest N.
func writesTarget(r *Report, phase string, limit float64) Target {
	t := Target{
		Name: fmt.Sprintf("writes per DC rollout (all but app pods'), %s", phase),
		Want: fmt.Sprintf("≤ %.1f × a Deployment rollout's", limit),
	}
	var best *WritesSpread
	for i, w := range r.WriteSpreads {
		if w.Phase == phase && primaryMode(w.Mode) && (best == nil || w.N > best.N) {
			best = &r.WriteSpreads[i]
		}
	}
	if best == nil || best.Deployment.Median == 0 {
		t.Got = "not measured"
		return t
	}
	t.Got = fmt.Sprintf("%s× (%.1f vs %.1f, medians at N=%d)", spreadText(best.Ratio, "%.2f"), best.DC.Median, best.Deployment.Median, best.N)
	t.Met = new(best.Ratio.Median <= limit)
	return t
}

// findCost returns the API cost of one system's phase.
func findCost(r *Report, n int, phase, system string) (APICost, bool) {
	i := slices.IndexFunc(r.APICost, func(c APICost) bool { return c.N == n && c.Phase == phase && c.System == system })
	if i < 0 {
		return APICost{}, false
	}
	return r.APICost[i], true
}

// podLatencyTarget reads the target from the probes: triggers made one at
// a time while a throughput phase's rollouts were in flight, the target's
// "with 1000 in flight". Of the probe rows of the largest phase size, the
// worst p99 counts.
func podLatencyTarget(r *Report) Target {
	t := Target{
		Name: "trigger → deployer pod created, p99",
		Want: fmt.Sprintf("≤ %.0f s with %d in flight", targetPodP99Seconds, targetInFlight),
	}
	worst, rows := worstRow(r.Latency, true)
	if worst == nil {
		t.Got = "not measured"
		return t
	}
	t.Got = fmt.Sprintf("%.2f s, %d probes with %s", worst.ToDeployerPod.P99, worst.ToDeployerPod.Count, atSize(worst.InFlight, targetInFlight, "in flight"))
	if rows > 1 {
		t.Got += fmt.Sprintf(", worst of %d phases", rows)
	}
	t.Got += fmt.Sprintf("; ≥ %d still in flight at each probe", worst.StillInFlight)
	t.Met = new(worst.ToDeployerPod.P99 <= targetPodP99Seconds)
	return t
}

// worstRow returns, of the DeploymentConfig rows with the most rollouts in
// flight (probe rows, or the others), the one with the highest p99 to the
// deployer pod, and how many such rows there were.
func worstRow(latency []Latency, probes bool) (*Latency, int) {
	var worst *Latency
	rows := 0
	for i, l := range latency {
		// Rollouts one at a time at idle have nothing in flight.
		if l.System != SystemDC || l.Probes != probes || l.ToDeployerPod.Count == 0 || l.InFlight < 2 {
			continue
		}
		switch {
		case worst == nil || l.InFlight > worst.InFlight:
			worst, rows = &latency[i], 1
		case l.InFlight == worst.InFlight:
			rows++
			if l.ToDeployerPod.P99 > worst.ToDeployerPod.P99 {
				worst = &latency[i]
			}
		}
	}
	return worst, rows
}

// podLatencyAtOnce is the same delay when all N rollouts are triggered at
// once, kept next to the target for reference: it is no measure of the
// target, as N simultaneous triggers need at least 2N writes (the DC's
// status and its RC, then the deployer pod and its phase) through
// dc-controller's 20-QPS clients, about N/10 s for the last.
func podLatencyAtOnce(r *Report) Target {
	t := Target{
		Name: "trigger → deployer pod created, p99, all triggered at once",
		Want: "for reference (N at once need ≥ 2N writes at QPS 20)",
	}
	worst, rows := worstRow(r.Latency, false)
	if worst == nil {
		t.Got = "not measured"
		return t
	}
	t.Got = fmt.Sprintf("%.2f s with %d triggered at once", worst.ToDeployerPod.P99, worst.InFlight)
	if rows > 1 {
		t.Got += fmt.Sprintf(", worst of %d phases", rows)
	}
	return t
}

// idleTarget judges a rollout a user feels: one at a time on an
// idle cluster, the DC's time less what its own settings prescribe must be
// no more than the Deployment's time plus the deployer pod's start, at the
// p50 and at the p99.
func idleTarget(r *Report) Target {
	t := Target{
		Name: "idle rollout: DC time less its prescribed pauses",
		Want: "≤ Deployment's + deployer pod start, p50 and p99",
	}
	var dc, dep *Latency
	for i, l := range r.Latency {
		if !l.IsIdle() {
			continue
		}
		switch l.System {
		case SystemDC:
			dc = &r.Latency[i]
		case SystemDeployment:
			dep = &r.Latency[i]
		}
	}
	if dc == nil || dep == nil || dc.Rest.Count == 0 || dep.ToComplete.Count == 0 {
		t.Got = "not measured"
		return t
	}
	met, p50, p99 := IdleRestMet(dc.Rest, dep.ToComplete, dc.ToDeployerStart)
	t.Got = fmt.Sprintf("p50 %.2f s vs %.2f s, p99 %.2f s vs %.2f s (DC %.2f / %.2f s less %.1f s prescribed; Deployment %.2f / %.2f s; deployer pod start %.2f / %.2f s; %d rollouts)",
		dc.Rest.P50, p50, dc.Rest.P99, p99, dc.ToComplete.P50, dc.ToComplete.P99, dc.PrescribedSeconds,
		dep.ToComplete.P50, dep.ToComplete.P99, dc.ToDeployerStart.P50, dc.ToDeployerStart.P99, dc.Rest.Count)
	t.Met = new(met)
	return t
}

// IdleRestMet is the full-cost targets' test of a rollout a user feels, shared by the
// kwok and the real-node reports: the DC's trigger → complete less its
// prescribed pauses (rest) is no more than the Deployment's trigger →
// complete plus the deployer pod's start, at the p50 and at the p99. It
// returns the verdict and the two limits.
func IdleRestMet(rest, deployment, deployerStart stats.Summary) (met bool, p50Limit, p99Limit float64) {
	p50Limit = deployment.P50 + deployerStart.P50
	p99Limit = deployment.P99 + deployerStart.P99
	return rest.P50 <= p50Limit && rest.P99 <= p99Limit, p50Limit, p99Limit
}

// footprintFor returns the footprint measured in mode at dcs DCs, or
// else the largest one measured in mode.
func footprintFor(r *Report, dcs int, mode string) *Footprint {
	var best *Footprint
	for i, f := range r.Footprint {
		if !sameMode(f.Mode, mode) {
			continue
		}
		if f.DCs == dcs {
			return &r.Footprint[i]
		}
		if best == nil || f.DCs > best.DCs {
			best = &r.Footprint[i]
		}
	}
	return best
}

// rssTarget judges dc-controller's peak RSS with dcs DCs in mode.
func rssTarget(r *Report, dcs int, limit uint64, mode string) Target {
	t := Target{
		Name: "dc-controller peak RSS",
		Want: fmt.Sprintf("≤ %d MB at %d DCs", limit>>20, dcs),
	}
	f := footprintFor(r, dcs, mode)
	if f == nil {
		t.Got = "not measured"
		return t
	}
	t.Got = fmt.Sprintf("%s at %s", MB(f.Usage.PeakRSSBytes), atSize(f.DCs, dcs, "DCs"))
	if f.DCs < dcs {
		// The cache grows with the DCs: a smaller run under the limit
		// says nothing about the size the target names.
		return t
	}
	t.Met = new(f.Usage.PeakRSSBytes <= limit)
	return t
}

// syncCPU states the CPU dc-controller took to sync the largest
// footprint: reported, with no limit.
func syncCPU(r *Report) Target {
	t := Target{Name: "dc-controller CPU to sync", Want: fmt.Sprintf("reported at %d DCs", targetLargeDCs)}
	f := footprintFor(r, targetLargeDCs, ModePod)
	if f == nil {
		t.Got = "not measured"
		return t
	}
	t.Got = fmt.Sprintf("%.1f CPU s over %.0f s at %s", f.Usage.CPUSeconds, f.SyncSeconds, atSize(f.DCs, targetLargeDCs, "DCs"))
	return t
}

// MB formats a byte count in MiB, which the report calls MB.
func MB(b uint64) string {
	return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
}
