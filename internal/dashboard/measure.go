package dashboard

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/analysis"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Chart geometry, in SVG user units.
const (
	chartWidth  = 320
	chartHeight = 80
	chartPad    = 6
)

// measurementLine matches the line the analysis runner logs per
// measurement (internal/analysis): `--> step-2: analysis "error-rate"
// measurement #1: Successful: result [0.02] met successCondition ...`. The
// log is the one place measurements are kept: the RC records outcomes only.
var measurementLine = regexp.MustCompile(`^--> (?:([^:]+): )?analysis "([^"]+)"(?: \(dry run\))? measurement #(\d+): (\w+)(?: \([^)]*\))?: (.*)$`)

// resultValue matches the first number of a measured result.
var resultValue = regexp.MustCompile(`^result \[?\s*(-?[0-9.eE+-]+)`)

// point is one measurement of a metric.
type point struct {
	N     int
	Value float64
	// HasValue is false for a measurement that errored.
	HasValue bool
	Phase    string
	Detail   string
}

// analysisView is one analysis of the latest rollout: where it runs, its
// outcome and a chart per metric.
type analysisView struct {
	Place   string
	Outcome string
	Metrics []metricChart
}

// metricChart is a metric's conditions and its measurements, with the
// chart's coordinates worked out.
type metricChart struct {
	Name, SuccessCondition, FailureCondition string
	Points                                   []chartPoint
	Polyline                                 string
	// Min and Max are the chart's range, thresholds included.
	Min, Max      string
	Thresholds    []threshold
	Width, Height int
}

// chartPoint is a measurement placed on the chart.
type chartPoint struct {
	point
	X, Y float64
}

// parseMeasurements reads the measurements of a deployer log, by place
// ("" for an analysis without one) and metric.
func parseMeasurements(log string) map[string]map[string][]point {
	out := map[string]map[string][]point{}
	for _, line := range strings.Split(log, "\n") {
		m := measurementLine.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if m == nil {
			continue
		}
		place, metric, phase, detail := m[1], m[2], m[4], m[5]
		n, _ := strconv.Atoi(m[3])
		p := point{N: n, Phase: phase, Detail: detail}
		if v := resultValue.FindStringSubmatch(detail); v != nil {
			if f, err := strconv.ParseFloat(v[1], 64); err == nil {
				p.Value, p.HasValue = f, true
			}
		}
		if out[place] == nil {
			out[place] = map[string][]point{}
		}
		out[place][metric] = append(out[place][metric], p)
	}
	return out
}

// hasAnalyses reports whether a deployment's strategy runs analyses, the
// only case where its page reads the deployer log for measurements.
func hasAnalyses(rc *corev1.ReplicationController) bool {
	dc, err := deployment.DecodeConfig(rc)
	return err == nil && len(analysis.Places(&dc.Spec.Strategy)) > 0
}

// buildAnalyses gathers the latest rollout's analyses: the outcomes its RC
// records and the measurements of its deployer log, with the conditions
// of each metric from the strategy it was created with.
func buildAnalyses(rc *corev1.ReplicationController, log string) []analysisView {
	conditions := map[string]dcv1.AnalysisMetric{}
	if dc, err := deployment.DecodeConfig(rc); err == nil {
		for _, place := range analysis.Places(&dc.Spec.Strategy) {
			for _, m := range place.Analysis.Metrics {
				if _, seen := conditions[m.Name]; !seen {
					conditions[m.Name] = m
				}
			}
		}
	}
	measured := parseMeasurements(log)
	places := map[string]bool{}
	outcomes := deployment.AnalysisOutcomes(rc)
	for label := range outcomes {
		places[label] = true
	}
	for place := range measured {
		places[place] = true
	}
	var out []analysisView
	for place := range places {
		v := analysisView{Place: place, Outcome: outcomes[place]}
		if v.Place == "" {
			v.Place = "analysis"
		}
		var names []string
		for name := range measured[place] {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			c := conditions[name]
			v.Metrics = append(v.Metrics, chart(name, c.SuccessCondition, c.FailureCondition, measured[place][name]))
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Place < out[j].Place })
	return out
}

// thresholdCondition matches a condition that compares the first result
// with a number, e.g. "result[0] <= 0.05": the chart draws the number as a
// line. Other conditions are shown in words only.
var thresholdCondition = regexp.MustCompile(`^\s*result\[0\]\s*(<=|<|>=|>)\s*(-?[0-9.eE+-]+)\s*$`)

// threshold is a condition's number, drawn across the chart.
type threshold struct {
	// Kind is "success" or "failure".
	Kind  string
	Value float64
	Y     float64
}

// thresholds reads the numbers of the conditions that compare the first
// result with one.
func thresholds(success, failure string) []threshold {
	var out []threshold
	for _, c := range []struct{ kind, expr string }{{"success", success}, {"failure", failure}} {
		m := thresholdCondition.FindStringSubmatch(c.expr)
		if m == nil {
			continue
		}
		if v, err := strconv.ParseFloat(m[2], 64); err == nil {
			out = append(out, threshold{Kind: c.kind, Value: v})
		}
	}
	return out
}

// chart places a metric's measurements on a small line chart: x is the
// measurement's order, y its value, between the lowest and highest of the
// values and of the conditions' thresholds.
func chart(name, success, failure string, points []point) metricChart {
	c := metricChart{Name: name, SuccessCondition: success, FailureCondition: failure, Width: chartWidth, Height: chartHeight,
		Thresholds: thresholds(success, failure)}
	var values []float64
	for _, p := range points {
		if p.HasValue {
			values = append(values, p.Value)
		}
	}
	for _, th := range c.Thresholds {
		values = append(values, th.Value)
	}
	if len(values) == 0 {
		return c
	}
	lo, hi := slices.Min(values), slices.Max(values)
	span := hi - lo
	if span == 0 {
		span = 1
	}
	y := func(v float64) float64 {
		return chartHeight - chartPad - (v-lo)/span*float64(chartHeight-2*chartPad)
	}
	step := float64(chartWidth - 2*chartPad)
	if len(points) > 1 {
		step /= float64(len(points) - 1)
	}
	var line []string
	for i, p := range points {
		cp := chartPoint{point: p, X: chartPad + float64(i)*step, Y: chartHeight - chartPad}
		if len(points) == 1 {
			cp.X = chartWidth / 2
		}
		if p.HasValue {
			cp.Y = y(p.Value)
			line = append(line, fmt.Sprintf("%.1f,%.1f", cp.X, cp.Y))
		}
		c.Points = append(c.Points, cp)
	}
	for i := range c.Thresholds {
		c.Thresholds[i].Y = y(c.Thresholds[i].Value)
	}
	c.Polyline = strings.Join(line, " ")
	c.Min, c.Max = strconv.FormatFloat(lo, 'g', 4, 64), strconv.FormatFloat(hi, 'g', 4, 64)
	return c
}
