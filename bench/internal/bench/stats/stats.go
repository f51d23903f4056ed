// Package stats summarizes samples (latencies, durations) the way the
// benchmark report shows them.
package stats

import (
	"math"
	"slices"
)

// Summary describes a set of samples. Percentiles use the nearest-rank
// method: the p-th percentile is the smallest sample that at least p% of
// the samples are less than or equal to, so it is always a measured value
// (with 20 samples, p99 is the largest).
type Summary struct {
	Count int     `json:"count"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Summarize returns the summary of values; the zero Summary when there
// are none. values is not modified.
func Summarize(values []float64) Summary {
	if len(values) == 0 {
		return Summary{}
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	sum := 0.0
	for _, v := range sorted {
		sum += v
	}
	return Summary{
		Count: len(sorted),
		Min:   sorted[0],
		Mean:  sum / float64(len(sorted)),
		P50:   Percentile(sorted, 50),
		P90:   Percentile(sorted, 90),
		P99:   Percentile(sorted, 99),
		Max:   sorted[len(sorted)-1],
	}
}

// Percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of
// sorted, which must be in ascending order; NaN when it is empty.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Ratio is a/b, or 0 when b is 0 (no peer to compare with).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Spread is how a figure varied over the repeats of a run: its smallest,
// median and largest value. With an even count the median is the mean of
// the two middle values (with 2 repeats, their mean).
type Spread struct {
	Count  int     `json:"count"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// SpreadOf returns the spread of values; the zero Spread when there are
// none. values is not modified.
func SpreadOf(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	n := len(sorted)
	median := sorted[n/2]
	if n%2 == 0 {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return Spread{Count: n, Min: sorted[0], Median: median, Max: sorted[n-1]}
}
