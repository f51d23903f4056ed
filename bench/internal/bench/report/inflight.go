package report

import (
	"fmt"
	"strings"
)

// ControllerMemory is what dc-controller holds at one moment, read after
// a forced garbage collection so that the heap is what is live, not what
// the collector has yet to free.
type ControllerMemory struct {
	// HeapInuseBytes is go_memstats_heap_inuse_bytes.
	HeapInuseBytes float64 `json:"heapInuseBytes"`
	// RSSBytes is the process's resident set (VmRSS); AnonBytes its
	// anonymous part (RssAnon: the Go heap, stacks and runtime, without
	// the executable's pages).
	RSSBytes  float64 `json:"rssBytes"`
	AnonBytes float64 `json:"anonBytes"`
	// Goroutines is go_goroutines.
	Goroutines float64 `json:"goroutines"`
	// RolloutsInFlight is deployconfig_controller_rollouts_in_flight;
	// GaugeSeen is false when the controller does not serve it.
	RolloutsInFlight float64 `json:"rolloutsInFlight"`
	GaugeSeen        bool    `json:"gaugeSeen"`
}

// PerRollout is a cost divided among the rollouts in flight: (in flight −
// at rest) / N.
type PerRollout struct {
	HeapBytes  float64 `json:"heapBytes"`
	RSSBytes   float64 `json:"rssBytes"`
	AnonBytes  float64 `json:"anonBytes"`
	Goroutines float64 `json:"goroutines"`
}

// InFlight is the deployer-mode targets' cost of rollouts in flight to dc-controller: N
// DeploymentConfigs at rest (rolled out, nothing in flight), then the same
// N with a rollout each held in flight by an indefinite canary pause, in
// one dc-controller process per deployer mode.
type InFlight struct {
	N int `json:"n"`
	// Mode is dc-controller's --deployer-mode: in "controller-when-possible"
	// the controller runs the rollouts; in "pod" deployer pods do, and the
	// controller holds only their pods and RCs.
	Mode string `json:"mode"`
	// ToPaused is from the first template change to every rollout seen
	// Running and paused, in seconds.
	ToPaused float64          `json:"toPausedSeconds"`
	AtRest   ControllerMemory `json:"atRest"`
	InFlight ControllerMemory `json:"inFlight"`
	// Per is (InFlight − AtRest) / N.
	Per PerRollout `json:"perRollout"`
}

// NewInFlight computes the cost per rollout in flight from the two
// readings of one controller process.
func NewInFlight(n int, mode string, toPaused float64, atRest, inFlight ControllerMemory) InFlight {
	per := func(at, in float64) float64 {
		if n <= 0 {
			return 0
		}
		return (in - at) / float64(n)
	}
	return InFlight{
		N: n, Mode: mode, ToPaused: toPaused, AtRest: atRest, InFlight: inFlight,
		Per: PerRollout{
			HeapBytes:  per(atRest.HeapInuseBytes, inFlight.HeapInuseBytes),
			RSSBytes:   per(atRest.RSSBytes, inFlight.RSSBytes),
			AnonBytes:  per(atRest.AnonBytes, inFlight.AnonBytes),
			Goroutines: per(atRest.Goroutines, inFlight.Goroutines),
		},
	}
}

// Line is the measurement on one line, as dc-bench prints it.
func (f InFlight) Line() string {
	return fmt.Sprintf("in flight (%s, N=%d): per rollout heap %s, RSS %s (anonymous %s), %.2f goroutines; in-flight gauge %s; all paused %.1f s after the trigger",
		f.Mode, f.N, kib(f.Per.HeapBytes), kib(f.Per.RSSBytes), kib(f.Per.AnonBytes), f.Per.Goroutines, gauge(f.InFlight), f.ToPaused)
}

// kib formats bytes as KiB with one decimal, keeping the sign.
func kib(b float64) string {
	return fmt.Sprintf("%.1f KiB", b/1024)
}

// gauge is the in-flight gauge as read, "not served" when absent.
func gauge(m ControllerMemory) string {
	if !m.GaugeSeen {
		return "not served"
	}
	return fmt.Sprintf("%.0f", m.RolloutsInFlight)
}

// writeInFlight renders the in-flight scenario's section.
func writeInFlight(b *strings.Builder, r *Report) {
	if len(r.InFlight) == 0 {
		return
	}
	b.WriteString("## Rollouts in flight: what each costs dc-controller\n\n")
	b.WriteString("N DeploymentConfigs (Rolling, one canary step: `pause: {}`, which waits for `kubectl dc rollout promote`) are created and rolled out " +
		"(a first rollout skips the steps), then read **at rest**; then every template is changed and, once every rollout is Running and paused, " +
		"read **in flight**. One fresh dc-controller process per mode, started with `--deployer-mode=controller-when-possible` and `--max-controller-rollouts` " +
		"N, or in pod mode with neither (pod is its default); both readings of a mode come from its process. " +
		"Each reading forces a garbage collection first (its pprof heap handler with `gc=1`) and is the median of three. " +
		"Per rollout = (in flight − at rest) / N. In pod mode the rollouts run in deployer pods (on kwok, in-process in dc-bench), " +
		"so the figure is the controller's side only: the unfinished deployer pods and RCs its caches hold.\n\n")
	b.WriteString("| mode | N | trigger → all paused | heap at rest | heap in flight | **heap / rollout** | RSS at rest | RSS in flight | **RSS / rollout** | anon RSS / rollout | goroutines at rest | in flight | **goroutines / rollout** | in-flight gauge |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, f := range r.InFlight {
		fmt.Fprintf(b, "| %s | %d | %.1f s | %s | %s | **%s** | %s | %s | **%s** | %s | %.0f | %.0f | **%.2f** | %s |\n",
			f.Mode, f.N, f.ToPaused, MB(uint64(max(f.AtRest.HeapInuseBytes, 0))), MB(uint64(max(f.InFlight.HeapInuseBytes, 0))), kib(f.Per.HeapBytes),
			MB(uint64(max(f.AtRest.RSSBytes, 0))), MB(uint64(max(f.InFlight.RSSBytes, 0))), kib(f.Per.RSSBytes), kib(f.Per.AnonBytes),
			f.AtRest.Goroutines, f.InFlight.Goroutines, f.Per.Goroutines, gauge(f.InFlight))
	}
	b.WriteString("\n")
}
