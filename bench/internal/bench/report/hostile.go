package report

import (
	"fmt"
	"strings"

	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

// Hostile is the hostile scenario: an ordinary
// DeploymentConfig's rollouts, one at a time, first with nothing else,
// then with six DeploymentConfigs in another namespace whose analysis
// queries would never end (or fill memory) if executed.
type Hostile struct {
	// Rollouts is the number of rollouts of each block.
	Rollouts int `json:"rollouts"`
	// Without and With are each rollout's trigger → Complete, in seconds,
	// without and with the hostile DeploymentConfigs.
	Without stats.Summary `json:"without"`
	With    stats.Summary `json:"with"`
	// RatioP50 and RatioP99 are With / Without of each percentile: 1 is
	// no effect.
	RatioP50 float64 `json:"ratioP50"`
	RatioP99 float64 `json:"ratioP99"`
	// RestWithout and RestWith are the same less the DC's prescribed
	// pauses, the same in both blocks: the time the controller and the
	// pods take, where a delay would show. RestRatioP50 and RestRatioP99
	// are their ratios.
	RestWithout  stats.Summary `json:"restWithout"`
	RestWith     stats.Summary `json:"restWith"`
	RestRatioP50 float64       `json:"restRatioP50"`
	RestRatioP99 float64       `json:"restRatioP99"`
	// DCs are the hostile DeploymentConfigs, one per place an analysis
	// can be.
	DCs []HostileDC `json:"dcs"`
}

// HostileDC is one hostile DeploymentConfig and how soon dc-controller
// refused it.
type HostileDC struct {
	Name string `json:"name"`
	// Field is where its hostile query is.
	Field string `json:"field"`
	// ToInvalid is from its creation to dc-bench's watch seeing its
	// Progressing condition False with reason InvalidAnalysis, in
	// seconds; Refused is false when that was not seen in time.
	ToInvalid float64 `json:"toInvalidAnalysisSeconds"`
	Refused   bool    `json:"refused"`
}

// NewHostile pairs the two blocks' trigger → Complete figures, whole and
// less the prescribed pauses, and their ratios.
func NewHostile(rollouts int, without, with Latency, dcs []HostileDC) *Hostile {
	return &Hostile{
		Rollouts: rollouts, Without: without.ToComplete, With: with.ToComplete,
		RatioP50:    stats.Ratio(with.ToComplete.P50, without.ToComplete.P50),
		RatioP99:    stats.Ratio(with.ToComplete.P99, without.ToComplete.P99),
		RestWithout: without.Rest, RestWith: with.Rest,
		RestRatioP50: stats.Ratio(with.Rest.P50, without.Rest.P50),
		RestRatioP99: stats.Ratio(with.Rest.P99, without.Rest.P99),
		DCs:          dcs,
	}
}

// Line is the scenario's figures on one line, as dc-bench prints them.
func (h *Hostile) Line() string {
	refused, worst := 0, 0.0
	for _, d := range h.DCs {
		if d.Refused {
			refused++
			worst = max(worst, d.ToInvalid)
		}
	}
	return fmt.Sprintf("hostile: trigger → Complete p50 %.2f s without, %.2f s with (ratio %.2f); p99 %.2f s without, %.2f s with (ratio %.2f); "+
		"less the prescribed pauses p50 %.2f s vs %.2f s (ratio %.2f), p99 %.2f s vs %.2f s (ratio %.2f); %d of %d hostile DCs InvalidAnalysis, the last after %.2f s",
		h.Without.P50, h.With.P50, h.RatioP50, h.Without.P99, h.With.P99, h.RatioP99,
		h.RestWithout.P50, h.RestWith.P50, h.RestRatioP50, h.RestWithout.P99, h.RestWith.P99, h.RestRatioP99,
		refused, len(h.DCs), worst)
}

// writeHostile renders the hostile scenario's section.
func writeHostile(b *strings.Builder, r *Report) {
	h := r.Hostile
	if h == nil {
		return
	}
	b.WriteString("## Hostile analyses\n\n")
	fmt.Fprintf(b, "Template changes of ordinary DeploymentConfigs, one at a time (%d rollouts in each block), first with nothing else, "+
		"then with %d DeploymentConfigs in another namespace whose analysis queries would never end or would fill memory if executed, "+
		"created just before the first rollout of the second block. Trigger → Complete in seconds (nearest-rank; each includes the DC's prescribed pauses); "+
		"ratio = with / without: 1 is no effect.\n\n", h.Rollouts, len(h.DCs))
	b.WriteString("| | rollouts | p50 | p99 | max |\n| --- | ---: | ---: | ---: | ---: |\n")
	for _, row := range []struct {
		name string
		s    stats.Summary
	}{{"without hostile DCs", h.Without}, {"with hostile DCs", h.With}, {"without, less the prescribed pauses", h.RestWithout}, {"with, less the prescribed pauses", h.RestWith}} {
		fmt.Fprintf(b, "| %s | %d | %.2f | %.2f | %.2f |\n", row.name, row.s.Count, row.s.P50, row.s.P99, row.s.Max)
	}
	fmt.Fprintf(b, "| **ratio with / without** | | **%.2f** | **%.2f** | |\n", h.RatioP50, h.RatioP99)
	fmt.Fprintf(b, "| **ratio with / without, less the prescribed pauses** | | **%.2f** | **%.2f** | |\n\n", h.RestRatioP50, h.RestRatioP99)
	b.WriteString("Each hostile DeploymentConfig, from its creation to Progressing=False reason InvalidAnalysis (as dc-bench's watch saw it):\n\n")
	b.WriteString("| DeploymentConfig | hostile query in | → InvalidAnalysis |\n| --- | --- | ---: |\n")
	for _, d := range h.DCs {
		got := "not seen"
		if d.Refused {
			got = fmt.Sprintf("%.2f s", d.ToInvalid)
		}
		fmt.Fprintf(b, "| %s | `%s` | %s |\n", d.Name, d.Field, got)
	}
	b.WriteString("\n")
}
