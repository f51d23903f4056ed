package report

import (
	"fmt"
	"strings"
)

// FanOut is one case of the fan-out scenario: N DeploymentConfigs follow
// one ConfigMap, whose data changes once; without a policy (the peer) or
// under a RolloutPolicy.
type FanOut struct {
	Case string `json:"case"`
	N    int    `json:"n"`
	// MostAtOnce is the most deployments of the change that existed and
	// had not ended at the same time, as dc-bench's watch saw them.
	MostAtOnce int `json:"mostAtOnce"`
	// FirstDone and AllDone are from the change to the first, and the
	// last, of its rollouts ended, in seconds.
	FirstDone float64 `json:"firstDoneSeconds"`
	AllDone   float64 `json:"allDoneSeconds"`
	Failed    int     `json:"failed"`
	// Reconciles are the DeploymentConfig controller's over the change,
	// every result.
	Reconciles float64 `json:"reconciles"`
	// WaitingDCMinutes is the policy's status.waiting integrated over the
	// change; 0 without a policy.
	WaitingDCMinutes float64 `json:"waitingDCMinutes"`
	// PerWaitingDCMinute is Reconciles / WaitingDCMinutes: every reconcile
	// of the change, the rollouts' own too, so an upper bound of what
	// waiting costs; 0 without waiters.
	PerWaitingDCMinute float64 `json:"reconcilesPerWaitingDCMinute"`
	// Ratio is AllDone over the peer's (the case without a policy).
	Ratio float64 `json:"allDoneRatio"`
}

// SetRatio sets the ratio to the peer and the reconciles per waiting
// DC-minute.
func (f *FanOut) SetRatio(peer FanOut) {
	if peer.AllDone > 0 {
		f.Ratio = f.AllDone / peer.AllDone
	}
	if f.WaitingDCMinutes > 0 {
		f.PerWaitingDCMinute = f.Reconciles / f.WaitingDCMinutes
	}
}

// Line is the case on one line, as dc-bench prints it.
func (f FanOut) Line() string {
	return fmt.Sprintf("fan-out (%s, N=%d): at most %d at once, first done %.1f s, all done %.1f s (%.2f × no policy), %d failed, %.0f reconciles, %.1f waiting DC-minutes",
		f.Case, f.N, f.MostAtOnce, f.FirstDone, f.AllDone, f.Ratio, f.Failed, f.Reconciles, f.WaitingDCMinutes)
}

// FanOutHeld is what waiting alone costs: a change of N DCs held by a
// freeze, all N in line, watched for Seconds.
type FanOutHeld struct {
	N       int     `json:"n"`
	Seconds float64 `json:"seconds"`
	// Reconciles are the DeploymentConfig controller's over the window.
	Reconciles float64 `json:"reconciles"`
	// PerWaitingDCMinute is Reconciles / (N × the window in minutes).
	PerWaitingDCMinute float64 `json:"reconcilesPerWaitingDCMinute"`
}

// NewFanOutHeld computes the reconciles per waiting DC per minute.
func NewFanOutHeld(n int, seconds, reconciles float64) FanOutHeld {
	h := FanOutHeld{N: n, Seconds: seconds, Reconciles: reconciles}
	if n > 0 && seconds > 0 {
		h.PerWaitingDCMinute = reconciles / (float64(n) * seconds / 60)
	}
	return h
}

// Line is the measurement on one line, as dc-bench prints it.
func (h FanOutHeld) Line() string {
	return fmt.Sprintf("fan-out held (N=%d in line for %.0f s): %.0f reconciles, %.3f per waiting DC per minute", h.N, h.Seconds, h.Reconciles, h.PerWaitingDCMinute)
}

// writeFanOut renders the fan-out scenario's section.
func writeFanOut(b *strings.Builder, r *Report) {
	if len(r.FanOut) == 0 {
		return
	}
	b.WriteString("## Fan-out: one ConfigMap change of N DeploymentConfigs, with and without a RolloutPolicy\n\n")
	b.WriteString("N DeploymentConfigs (one replica each, `configSnapshots: {}`, `envFrom` the ConfigMap `shared`, labelled `fleet: a`) are rolled out; " +
		"then, in the policy cases, a RolloutPolicy selecting them is made; then the ConfigMap's data changes once. " +
		"Each case has its own namespace and its own dc-controller process (its defaults: no `--max-rollouts`), so the reconciles are its own. " +
		"**At once**: the most deployments of the change that existed and had not ended, from dc-bench's watch. " +
		"**Ratio**: all done over the case without a policy, in the same run. **Reconciles**: `controller_runtime_reconcile_total{controller=\"deploymentconfig\"}` over the change. " +
		"**Waiting DC-minutes**: the policy's `status.waiting` read every 250 ms and integrated; reconciles per waiting DC-minute divides every reconcile of the change " +
		"(the rollouts' own too) by it, an upper bound of what waiting costs.\n\n")
	b.WriteString("| case | N | **at once** | first done | **all done** | **ratio** | failed | reconciles | waiting DC-minutes | reconciles / waiting DC-minute (upper bound) |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, f := range r.FanOut {
		waiting, per := "-", "-"
		if f.WaitingDCMinutes > 0 {
			waiting, per = fmt.Sprintf("%.1f", f.WaitingDCMinutes), fmt.Sprintf("%.2f", f.PerWaitingDCMinute)
		}
		fmt.Fprintf(b, "| %s | %d | **%d** | %.1f s | **%.1f s** | **%.2f** | %d | %.0f | %s | %s |\n",
			f.Case, f.N, f.MostAtOnce, f.FirstDone, f.AllDone, f.Ratio, f.Failed, f.Reconciles, waiting, per)
	}
	b.WriteString("\n")
	if len(r.FanOutHeld) == 0 {
		return
	}
	b.WriteString("**What waiting costs, apart**: after the last case's change, the policy gets a freeze and the ConfigMap a second change; " +
		"once all N wait in line and dc-controller has settled, its DeploymentConfig reconciles are counted over the window.\n\n")
	b.WriteString("| N in line | window | reconciles | **per waiting DC per minute** |\n| ---: | ---: | ---: | ---: |\n")
	for _, h := range r.FanOutHeld {
		fmt.Fprintf(b, "| %d | %.0f s | %.0f | **%.3f** |\n", h.N, h.Seconds, h.Reconciles, h.PerWaitingDCMinute)
	}
	b.WriteString("\n")
}
