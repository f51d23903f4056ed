package analysis

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// vectorOf is a Prometheus answer whose vector holds the given sample
// values, as Prometheus writes them ("NaN", "+Inf", "0.5").
func vectorOf(values ...string) string {
	series := make([]string, len(values))
	for i, v := range values {
		series[i] = fmt.Sprintf(`{"metric":{"i":"%d"},"value":[1700000000,%q]}`, i, v)
	}
	return `{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(series, ",") + `]}}`
}

// TestJudgeNaNAndInf: NaN and ±Inf reach the conditions as doubles and are
// judged as Argo Rollouts judges them: an ordering with NaN is false (not
// an error), isNaN and isInf tell them apart, on a double or on a list
// (any element). Ints and doubles compare by value.
func TestJudgeNaNAndInf(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name             string
		success, failure string
		result           any
		want             Phase
	}{
		{name: "NaN does not meet an ordering success condition", success: "result[0] >= 0.95", result: []float64{nan}, want: Failed},
		{name: "NaN does not meet an ordering failure condition", failure: "result[0] < 0.95", result: []float64{nan}, want: Successful},
		{name: "NaN with both conditions is inconclusive", success: "result[0] >= 0.95", failure: "result[0] < 0.5", result: []float64{nan}, want: Inconclusive},
		{name: "isNaN lets NaN pass", success: "isNaN(result[0]) || result[0] >= 0.95", result: []float64{nan}, want: Successful},
		{name: "isNaN of a number", success: "isNaN(result[0])", result: []float64{0.5}, want: Failed},
		{name: "isNaN of a scalar", success: "isNaN(result)", result: nan, want: Successful},
		{name: "isNaN of a list is any element", success: "isNaN(result)", result: []float64{1, nan}, want: Successful},
		{name: "isNaN of an empty list", success: "isNaN(result)", result: []float64{}, want: Failed},
		{name: "NaN in all()", success: "result.all(x, x < 1.0)", result: []float64{0.5, nan}, want: Failed},
		{name: "NaN is not equal to itself", success: "result[0] != result[0]", result: []float64{nan}, want: Successful},
		{name: "NaN compared with an int", success: "result[0] > 0", result: []float64{nan}, want: Failed},
		{name: "an int compared with NaN", success: "0 < result[0]", result: []float64{nan}, want: Failed},
		{name: "NaN <= and >=", success: "result[0] <= 1.0 || result[0] >= 1.0", result: []float64{nan}, want: Failed},
		{name: "+Inf is above everything", success: "result[0] < 1.0", result: []float64{inf}, want: Failed},
		{name: "-Inf is below everything", success: "result[0] < 1.0", result: []float64{-inf}, want: Successful},
		{name: "isInf of +Inf", success: "isInf(result[0])", result: []float64{inf}, want: Successful},
		{name: "isInf of -Inf", success: "isInf(result)", result: -inf, want: Successful},
		{name: "isInf of a list", success: "isInf(result)", result: []float64{1, 2}, want: Failed},
		{name: "an int compares with a double", success: "result[0] < 1", result: []float64{0.5}, want: Successful},
		{name: "a double equals an int", success: "result == 3", result: 3.0, want: Successful},
		{name: "ordering still errs on other types", success: "'a' < result[0]", result: []float64{1}, want: Error},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, err := newEnv()
			if err != nil {
				t.Fatal(err)
			}
			m := &metric{name: "m"}
			if m.success, err = compileCondition(env, "successCondition", tc.success); err != nil {
				t.Fatal(err)
			}
			if m.failure, err = compileCondition(env, "failureCondition", tc.failure); err != nil {
				t.Fatal(err)
			}
			if got := m.judge(tc.result); got.phase != tc.want {
				t.Fatalf("judge(%v) = %s (%s), want %s", tc.result, got.phase, got.detail, tc.want)
			}
		})
	}
}

// TestRunNaNFromPrometheus: a NaN sample as Prometheus sends it is a
// verdict, not an Error.
func TestRunNaNFromPrometheus(t *testing.T) {
	srv := httptest.NewServer(&fakeProm{answers: []string{vectorOf("NaN")}})
	defer srv.Close()
	spec := dcv1.Analysis{ConsecutiveErrorLimit: ptr(0), Metrics: []dcv1.AnalysisMetric{{
		Name: "success-rate", Prometheus: &dcv1.PrometheusMetric{Address: srv.URL, Query: "up"}, SuccessCondition: "result[0] >= 0.95",
	}}}
	got, err := Run(context.Background(), spec, Vars{}, Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got.Phase != Failed || !strings.Contains(got.Message, "result [NaN] did not meet successCondition") {
		t.Fatalf("outcome %+v, want Failed on result [NaN]", got)
	}
}

// queryProm answers each query with its own answer.
type queryProm map[string]string

func (q queryProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	answer, ok := q[r.Form.Get("query")]
	if !ok || answer == unhealthy {
		http.Error(w, "unhealthy", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, answer)
}

// TestRunDryRun: a dry-run metric is measured, logged and counted, and its
// verdict is in the outcome's message, but it never makes the analysis
// Failed, Error or Inconclusive; the other metrics decide as before.
func TestRunDryRun(t *testing.T) {
	prom := queryProm{"good": good, "bad": bad, "down": unhealthy}
	srv := httptest.NewServer(prom)
	defer srv.Close()
	metric := func(name, query, success, failure string) dcv1.AnalysisMetric {
		return dcv1.AnalysisMetric{Name: name, Prometheus: &dcv1.PrometheusMetric{Address: srv.URL, Query: query},
			SuccessCondition: success, FailureCondition: failure}
	}
	tests := []struct {
		name         string
		metrics      []dcv1.AnalysisMetric
		dryRun       []string
		want         Phase
		measurements int
		message      []string
	}{
		{name: "a failing dry-run metric does not fail",
			metrics: []dcv1.AnalysisMetric{metric("a", "good", "result[0] < 0.05", ""), metric("b", "bad", "result[0] < 0.05", "")},
			dryRun:  []string{"b"}, want: Successful, measurements: 3,
			message: []string{`3 measurement(s) of metric "a"`, `dry run: metric "b" Failed: metric "b" failed 1 measurement(s) (failureLimit 0)`}},
		{name: "an erroring dry-run metric does not end in Error",
			metrics: []dcv1.AnalysisMetric{metric("a", "good", "result[0] < 0.05", ""), metric("b", "down", "result[0] < 0.05", "")},
			dryRun:  []string{"b"}, want: Successful, measurements: 4,
			message: []string{`dry run: metric "b" Error: metric "b" had 2 errors in a row (consecutiveErrorLimit 1)`}},
		{name: "an inconclusive dry-run metric does not stop the analysis",
			metrics: []dcv1.AnalysisMetric{metric("a", "good", "result[0] < 0.05", ""), metric("b", "bad", "result[0] < 0.05", "result[0] > 0.9")},
			dryRun:  []string{"b"}, want: Successful, measurements: 3,
			message: []string{`dry run: metric "b" Inconclusive`}},
		{name: "a passing dry-run metric is recorded too",
			metrics: []dcv1.AnalysisMetric{metric("a", "good", "result[0] < 0.05", ""), metric("b", "good", "result[0] < 0.05", "")},
			dryRun:  []string{"b"}, want: Successful, measurements: 4,
			message: []string{`dry run: metric "b" Successful: 2 measurement(s)`}},
		{name: "* makes every metric a dry run",
			metrics: []dcv1.AnalysisMetric{metric("a", "bad", "result[0] < 0.05", ""), metric("b", "down", "result[0] < 0.05", "")},
			dryRun:  []string{"*"}, want: Successful, measurements: 3,
			message: []string{`dry run: metric "a" Failed`, `dry run: metric "b" Error`}},
		{name: "a metric not in dryRun still fails",
			metrics: []dcv1.AnalysisMetric{metric("a", "bad", "result[0] < 0.05", ""), metric("b", "bad", "result[0] < 0.05", "")},
			dryRun:  []string{"b"}, want: Failed, measurements: 1,
			message: []string{`metric "a" failed 1 measurement(s)`}},
		{name: "a dry-run failure recorded before the deciding one",
			metrics: []dcv1.AnalysisMetric{metric("b", "bad", "result[0] < 0.05", ""), metric("a", "bad", "result[0] < 0.05", "")},
			dryRun:  []string{"b"}, want: Failed, measurements: 2,
			message: []string{`metric "a" failed 1 measurement(s)`, `dry run: metric "b" Failed`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := dcv1.Analysis{Count: ptr(2), Interval: metav1.Duration{Duration: time.Second}, ConsecutiveErrorLimit: ptr(1), Metrics: tc.metrics}
			for _, n := range tc.dryRun {
				spec.DryRun = append(spec.DryRun, dcv1.DryRunMetric{MetricName: n})
			}
			if errs := Validate(&spec, field.NewPath("spec")); len(errs) > 0 {
				t.Fatalf("invalid spec: %v", errs.ToAggregate())
			}
			var out bytes.Buffer
			got, err := Run(context.Background(), spec, Vars{}, Options{Out: &out, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			t.Logf("log:\n%s", out.String())
			if got.Phase != tc.want || got.Measurements != tc.measurements {
				t.Fatalf("outcome %+v, want %s after %d measurements", got, tc.want, tc.measurements)
			}
			for _, want := range tc.message {
				if !strings.Contains(got.Message, want) {
					t.Errorf("message %q does not contain %q", got.Message, want)
				}
			}
			if lines := strings.Count(out.String(), "measurement #"); lines != tc.measurements {
				t.Errorf("log has %d measurement lines, want %d", lines, tc.measurements)
			}
			if strings.Contains(got.Message, "dry run:") && !strings.Contains(out.String(), "(dry run) measurement #") {
				t.Errorf("log does not mark the dry-run measurements")
			}
		})
	}
}

// TestValidateDryRun: each dryRun entry names a metric of the analysis or
// is "*".
func TestValidateDryRun(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		field string
	}{
		{name: "a metric", names: []string{"error-rate"}},
		{name: "every metric", names: []string{"*"}},
		{name: "a misspelt metric", names: []string{"error-rte"}, field: "a.dryRun[0].metricName"},
		{name: "the second entry", names: []string{"*", "latency"}, field: "a.dryRun[1].metricName"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{{
				Name: "error-rate", Prometheus: &dcv1.PrometheusMetric{Address: "http://127.0.0.1:9090", Query: "up"}, SuccessCondition: "true",
			}}}
			for _, n := range tc.names {
				spec.DryRun = append(spec.DryRun, dcv1.DryRunMetric{MetricName: n})
			}
			errs := Validate(spec, field.NewPath("a"))
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("refused: %v", errs.ToAggregate())
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != tc.field || !strings.Contains(errs[0].Error(), `"error-rate"`) {
				t.Fatalf("errors %v, want one on %s listing the metrics", errs.ToAggregate(), tc.field)
			}
		})
	}
}

// TestRunBoundsTheResponse: a Prometheus answer over MaxResponseBytes is an
// Error measurement naming the limit, not a read without end.
func TestRunBoundsTheResponse(t *testing.T) {
	huge := vectorOf(strings.Split(strings.Repeat("1,", 200_000)+"1", ",")...)
	if len(huge) <= MaxResponseBytes {
		t.Fatalf("the test's answer is %d bytes, not over the limit", len(huge))
	}
	srv := httptest.NewServer(&fakeProm{answers: []string{huge}})
	defer srv.Close()
	spec := dcv1.Analysis{ConsecutiveErrorLimit: ptr(0), Metrics: []dcv1.AnalysisMetric{{
		Name: "m", Prometheus: &dcv1.PrometheusMetric{Address: srv.URL, Query: "up"}, SuccessCondition: "true",
	}}}
	for _, client := range []*http.Client{nil, {}} {
		got, err := Run(context.Background(), spec, Vars{}, Options{HTTPClient: client})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got.Phase != Error || !strings.Contains(got.Message, "1 MiB") {
			t.Fatalf("outcome %+v, want Error naming the limit of 1 MiB", got)
		}
	}
}

// TestFormatResult: the log shows the first samples of a long vector and
// how many more there are.
func TestFormatResult(t *testing.T) {
	long := make([]float64, 25)
	for i := range long {
		long[i] = float64(i)
	}
	tests := []struct {
		name   string
		result any
		want   string
	}{
		{name: "scalar", result: 0.5, want: "0.5"},
		{name: "empty", result: []float64{}, want: "[]"},
		{name: "NaN and infinities", result: []float64{math.NaN(), math.Inf(1), math.Inf(-1)}, want: "[NaN, +Inf, -Inf]"},
		{name: "ten samples", result: long[:10], want: "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"},
		{name: "more than ten", result: long, want: "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... 15 more]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatResult(tc.result); got != tc.want {
				t.Fatalf("formatResult = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestConditionCostLimit: the comparisons that judge NaN stay counted by
// CEL's cost limit, so a condition whose work grows with the square of the
// vector is an Error rather than a stalled deployer.
func TestConditionCostLimit(t *testing.T) {
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	c, err := compileCondition(env, "successCondition", "result.all(x, result.all(y, x < y + 1.0))")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		size    int
		wantErr bool
	}{
		{name: "within the limit", size: 100},
		{name: "over the limit", size: 1000, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.eval(make([]float64, tc.size))
			if (err != nil) != tc.wantErr {
				t.Fatalf("eval over %d samples: error %v, want error %v", tc.size, err, tc.wantErr)
			}
			if tc.wantErr && !strings.Contains(err.Error(), "cost limit") {
				t.Fatalf("error %v does not name the cost limit", err)
			}
		})
	}
}
