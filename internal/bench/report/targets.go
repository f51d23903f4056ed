package report

import (
	"fmt"
	"slices"
)

// The targets.
const (
	targetChangeRatio   = 0.8
	targetFirstRatio    = 1.0
	targetWritesRatio   = 1.2
	targetPodP99Seconds = 1.0
	targetRSSBytes      = 100 << 20
	// targetInFlight and targetDCs are the sizes the targets name; a run
	// at other sizes reports against its largest and says so.
	targetInFlight = 1000
	targetDCs      = 5000
)

// EvaluateTargets compares the report's figures with the targets,
// at the largest sizes the run measured.
func EvaluateTargets(r *Report) []Target {
	return []Target{
		ratioTarget(r, PhaseChange, targetChangeRatio),
		ratioTarget(r, PhaseFirst, targetFirstRatio),
		writesTarget(r),
		podLatencyTarget(r),
		podLatencyAtOnce(r),
		rssTarget(r),
	}
}

// largest returns the phase's throughput result at the largest N.
func largest(r *Report, phase string) (Throughput, bool) {
	var best Throughput
	found := false
	for _, t := range r.Throughput {
		if t.Phase == phase && (!found || t.N > best.N) {
			best, found = t, true
		}
	}
	return best, found
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
	tp, ok := largest(r, phase)
	if !ok || tp.Ratio == 0 {
		t.Got = "not measured"
		return t
	}
	t.Got = fmt.Sprintf("%.2f (%.0f s / %.0f s) at %s", tp.Ratio, tp.DC.Seconds, tp.Deployment.Seconds, atSize(tp.N, targetInFlight, "rollouts"))
	t.Met = new(tp.Ratio <= limit && tp.DC.Failed == 0)
	return t
}

func writesTarget(r *Report) Target {
	t := Target{
		Name: "writes per DC rollout, pods excluded",
		Want: fmt.Sprintf("≤ %.1f × a Deployment rollout's", targetWritesRatio),
	}
	tp, ok := largest(r, PhaseChange)
	if !ok {
		t.Got = "not measured"
		return t
	}
	dc, dcOK := findCost(r, tp.N, PhaseChange, SystemDC)
	dep, depOK := findCost(r, tp.N, PhaseChange, SystemDeployment)
	if !dcOK || !depOK || dep.WritesExclPods() == 0 {
		t.Got = "not measured"
		return t
	}
	ratio := dc.WritesExclPods() / dep.WritesExclPods()
	t.Got = fmt.Sprintf("%.2f× (%.1f vs %.1f, template change at N=%d)", ratio, dc.WritesExclPods(), dep.WritesExclPods(), tp.N)
	t.Met = new(ratio <= targetWritesRatio)
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

func rssTarget(r *Report) Target {
	t := Target{
		Name: "dc-controller peak RSS",
		Want: fmt.Sprintf("≤ 100 MB at %d DCs", targetDCs),
	}
	var best *Footprint
	for i, f := range r.Footprint {
		if best == nil || f.DCs > best.DCs {
			best = &r.Footprint[i]
		}
	}
	if best == nil {
		t.Got = "not measured"
		return t
	}
	t.Got = fmt.Sprintf("%s at %s", MB(best.Usage.PeakRSSBytes), atSize(best.DCs, targetDCs, "DCs"))
	t.Met = new(best.Usage.PeakRSSBytes <= targetRSSBytes)
	return t
}

// MB formats a byte count in MiB, which the report calls MB.
func MB(b uint64) string {
	return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
}
