package stats

import (
	"math"
	"slices"
	"testing"
)

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1)
	}
	tests := []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{"one sample is every percentile", []float64{7}, 99, 7},
		{"median of odd count", []float64{1, 2, 3, 4, 5}, 50, 3},
		{"median of even count is the lower middle", []float64{1, 2, 3, 4}, 50, 2},
		{"p90 of 1..100", hundred, 90, 90},
		{"p99 of 1..100", hundred, 99, 99},
		{"p100 is the max", hundred, 100, 100},
		{"p99 of 20 samples is the max", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 99, 20},
		{"tiny p is the min", []float64{3, 4}, 0.1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("Percentile(nil) = %v, want NaN", got)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   Summary
	}{
		{"empty", nil, Summary{}},
		{"unsorted input", []float64{3, 1, 2}, Summary{Count: 3, Min: 1, Mean: 2, P50: 2, P90: 3, P99: 3, Max: 3}},
		{"outlier shows in p99 and max only", []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 100}, Summary{Count: 20, Min: 1, Mean: 5.95, P50: 1, P90: 1, P99: 100, Max: 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.values...)
			got := Summarize(in)
			if math.Abs(got.Mean-tt.want.Mean) > 1e-9 {
				t.Errorf("mean = %v, want %v", got.Mean, tt.want.Mean)
			}
			got.Mean = tt.want.Mean
			if got != tt.want {
				t.Errorf("Summarize(%v) = %+v, want %+v", tt.values, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.values[i] {
					t.Fatalf("Summarize modified its input")
				}
			}
		})
	}
}

func TestRatio(t *testing.T) {
	if got := Ratio(3, 4); got != 0.75 {
		t.Errorf("Ratio(3, 4) = %v", got)
	}
	if got := Ratio(3, 0); got != 0 {
		t.Errorf("Ratio(3, 0) = %v, want 0", got)
	}
}

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   Spread
	}{
		{"none", nil, Spread{}},
		{"one", []float64{4}, Spread{Count: 1, Min: 4, Median: 4, Max: 4}},
		{"three unsorted", []float64{9, 1, 5}, Spread{Count: 3, Min: 1, Median: 5, Max: 9}},
		{"even count takes the middle two's mean", []float64{4, 1, 3, 10}, Spread{Count: 4, Min: 1, Median: 3.5, Max: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.values)
			if got := SpreadOf(tt.values); got != tt.want {
				t.Errorf("SpreadOf(%v) = %+v, want %+v", tt.values, got, tt.want)
			}
			if !slices.Equal(in, tt.values) {
				t.Errorf("values changed to %v", tt.values)
			}
		})
	}
}
