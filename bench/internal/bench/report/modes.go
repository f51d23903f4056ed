package report

import (
	"fmt"
	"strings"
)

// The deployer-mode targets, judged for each deployer mode: a DC rollout's
// writes against a Deployment's, the phases' wall time, and
// dc-controller's memory with 20,000 DCs.
const (
	modeChangeWritesRatio = 1.2
	modeFirstWritesRatio  = 1.3
	modeRSSBytes          = 200 << 20
)

// modeTimeRatio is the most a phase of DCs in a deployer mode may take
// against the Deployment's: in controller mode no longer than it; a
// deployer pod has a pod to start per rollout, so pod mode gets some
// room, most in the first rollout, where that start is a larger share.
func modeTimeRatio(mode, phase string) float64 {
	switch {
	case mode == ModeController:
		return 1.0
	case phase == PhaseFirst:
		return 1.5
	default:
		return 1.2
	}
}

// primaryMode reports whether a row's mode is the one the side-by-side and
// full-cost targets are judged in: pod mode (rows from before deployer modes have none).
func primaryMode(mode string) bool {
	return mode == "" || mode == ModePod
}

// ModeOrPod names a row's deployer mode: pod for rows of none, which
// come from reports made before deployer modes.
func ModeOrPod(mode string) string {
	if mode == "" {
		return ModePod
	}
	return mode
}

// sameMode reports whether a row's mode is mode; rows of no mode (from
// before deployer modes) are pod mode's.
func sameMode(rowMode, mode string) bool {
	return ModeOrPod(rowMode) == mode
}

// modeTargets are the deployer-mode targets' rows: in each deployer mode, controller
// first, the writes per rollout of both phases and the wall time of both
// phases against the Deployment's, judged on the median over repeats at
// the largest N.
func modeTargets(r *Report) []Target {
	var out []Target
	for _, mode := range []string{ModeController, ModePod} {
		out = append(out,
			modeWritesTarget(r, mode, PhaseChange, modeChangeWritesRatio),
			modeWritesTarget(r, mode, PhaseFirst, modeFirstWritesRatio),
			modeTimeTarget(r, mode, PhaseChange),
			modeTimeTarget(r, mode, PhaseFirst),
			modeRSSTarget(r, mode),
		)
	}
	return out
}

// modeRSSTarget judges dc-controller's peak RSS with 20,000 DCs, read
// with it in mode.
func modeRSSTarget(r *Report, mode string) Target {
	t := rssTarget(r, targetLargeDCs, modeRSSBytes, mode)
	t.Name = mode + " mode: " + t.Name
	return t
}

// modeWritesTarget judges the writes of a DC rollout in mode against a
// Deployment's in one phase.
func modeWritesTarget(r *Report, mode, phase string, limit float64) Target {
	t := Target{
		Name: fmt.Sprintf("%s mode: writes per DC rollout, %s", mode, phase),
		Want: fmt.Sprintf("≤ %.1f × a Deployment rollout's", limit),
	}
	var best *WritesSpread
	for i, w := range r.WriteSpreads {
		if w.Phase == phase && sameMode(w.Mode, mode) && (best == nil || w.N > best.N) {
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

// modeTimeTarget judges the wall time of a phase of DCs in mode against
// the Deployment's, at the client QPS the run used.
func modeTimeTarget(r *Report, mode, phase string) Target {
	t := Target{
		Name: fmt.Sprintf("%s mode: DC/Deployment time, %s", mode, phase),
		Want: fmt.Sprintf("≤ %.1f at %d (run's QPS: kcm %.0f, dc-controller %.0f)", modeTimeRatio(mode, phase), targetInFlight, r.Settings.KCMQPS, r.Settings.ControllerQPS),
	}
	var best *ThroughputSpread
	for i, s := range r.Spreads {
		if s.Phase == phase && sameMode(s.Mode, mode) && (best == nil || s.N > best.N) {
			best = &r.Spreads[i]
		}
	}
	if best == nil || best.Ratio.Median == 0 {
		t.Got = "not measured"
		return t
	}
	t.Got = fmt.Sprintf("%s (%.0f s / %.0f s) at %s", spreadText(best.Ratio, "%.2f"), best.DC.Median, best.Deployment.Median, atSize(best.N, targetInFlight, "rollouts"))
	t.Met = new(best.Ratio.Median <= modeTimeRatio(mode, phase) && best.Failed == 0)
	return t
}

// runtimeSetting describes the pod runtime's kubelet clients.
func runtimeSetting(s Settings) string {
	if s.RuntimeQPS == 0 {
		return "one client for all nodes (reports from before deployer modes)"
	}
	return fmt.Sprintf("one client per fake node, as one kubelet per node has: QPS %.0f, burst %d each (the kubelet's kubeAPIQPS and kubeAPIBurst defaults); runs in dc-bench", s.RuntimeQPS, s.RuntimeBurst)
}

// modesSetting describes the DC deployer modes of the throughput scenario.
func modesSetting(s Settings) string {
	if len(s.DCModes) == 0 {
		return "pod"
	}
	parts := make([]string, len(s.DCModes))
	for i, m := range s.DCModes {
		switch m {
		case ModeController:
			parts[i] = m + " (dc-controller --deployer-mode=controller-when-possible)"
		default:
			parts[i] = m + " (dc-controller --deployer-mode=pod)"
		}
	}
	return strings.Join(parts, ", ") + "; each mode's DCs run alongside the Deployment in every repeat, the order rotating by one each repeat; dc-controller is restarted when the mode changes; latency and hostile run in the first mode"
}
