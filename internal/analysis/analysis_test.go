package analysis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Answers of the fake Prometheus.
const (
	good      = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"0.01"]}]}}`
	bad       = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"0.5"]}]}}`
	empty     = `{"status":"success","data":{"resultType":"vector","result":[]}}`
	scalar    = `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"3"]}}`
	matrix    = `{"status":"success","data":{"resultType":"matrix","result":[]}}`
	badQuery  = `{"status":"error","errorType":"bad_data","error":"parse error at char 3"}`
	unhealthy = "HTTP 500"
)

// fakeProm answers /api/v1/query with the scripted answers in turn (the
// last one again when they run out) and records the queries it got.
type fakeProm struct {
	mu      sync.Mutex
	answers []string
	queries []string
}

func (f *fakeProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.URL.Path != "/api/v1/query" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.queries = append(f.queries, r.Form.Get("query"))
	answer := f.answers[0]
	if len(f.answers) > 1 {
		f.answers = f.answers[1:]
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch answer {
	case unhealthy:
		http.Error(w, "unhealthy", http.StatusInternalServerError)
	case badQuery:
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, answer)
	default:
		fmt.Fprint(w, answer)
	}
}

func ptr(v int32) *int32 { return &v }

func TestRun(t *testing.T) {
	tests := []struct {
		name         string
		answers      []string
		count        *int32
		failureLimit *int32
		errorLimit   *int32
		success      string
		failure      string
		want         Phase
		measurements int
		message      string
	}{
		{name: "good vector passes every measurement", answers: []string{good}, count: ptr(3), success: "result[0] < 0.05", want: Successful, measurements: 3},
		{name: "count defaults to one", answers: []string{good}, success: "result[0] < 0.05", want: Successful, measurements: 1},
		{name: "bad vector fails at once with failureLimit 0", answers: []string{bad}, count: ptr(3), success: "result[0] < 0.05", want: Failed, measurements: 1,
			message: `metric "error-rate" failed 1 measurement(s) (failureLimit 0): result [0.5] did not meet successCondition result[0] < 0.05`},
		{name: "one more failure than failureLimit fails", answers: []string{bad, good, bad}, count: ptr(5), failureLimit: ptr(1), success: "result[0] < 0.05", want: Failed, measurements: 3},
		{name: "failures within failureLimit pass", answers: []string{bad, good, good}, count: ptr(3), failureLimit: ptr(1), success: "result[0] < 0.05", want: Successful, measurements: 3},
		{name: "failureCondition true fails", answers: []string{bad}, failure: "result[0] >= 0.1", want: Failed, measurements: 1,
			message: `metric "error-rate" failed 1 measurement(s) (failureLimit 0): result [0.5] met failureCondition result[0] >= 0.1`},
		{name: "failureCondition false passes", answers: []string{good}, failure: "result[0] >= 0.1", want: Successful, measurements: 1},
		{name: "neither condition holds: inconclusive", answers: []string{bad}, success: "result[0] < 0.05", failure: "result[0] > 0.9", want: Inconclusive, measurements: 1},
		{name: "scalar result is a double", answers: []string{scalar}, success: "result == 3.0", want: Successful, measurements: 1},
		{name: "errors up to the limit then fail", answers: []string{unhealthy}, count: ptr(3), errorLimit: ptr(2), success: "result[0] < 0.05", want: Error, measurements: 3,
			message: `metric "error-rate" had 3 errors in a row (consecutiveErrorLimit 2)`},
		{name: "errors below the limit are forgiven", answers: []string{unhealthy, unhealthy, good}, count: ptr(2), errorLimit: ptr(2), success: "result[0] < 0.05", want: Successful, measurements: 4},
		{name: "consecutiveErrorLimit defaults to four", answers: []string{unhealthy}, success: "result[0] < 0.05", want: Error, measurements: 5},
		{name: "an empty vector cannot be judged by result[0]", answers: []string{empty}, errorLimit: ptr(0), success: "result[0] < 0.05", want: Error, measurements: 1,
			message: `successCondition "result[0] < 0.05" cannot judge result []`},
		{name: "an empty vector can be judged by size", answers: []string{empty}, success: "size(result) == 0 || result[0] < 0.05", want: Successful, measurements: 1},
		{name: "a query error is an error", answers: []string{badQuery}, errorLimit: ptr(0), success: "result[0] < 0.05", want: Error, measurements: 1, message: "parse error at char 3"},
		{name: "a matrix cannot be judged", answers: []string{matrix}, errorLimit: ptr(0), success: "true", want: Error, measurements: 1, message: "only vector and scalar results"},
		{name: "a non-bool value is an error", answers: []string{good}, errorLimit: ptr(0), success: "result", want: Error, measurements: 1, message: "not a bool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prom := &fakeProm{answers: tc.answers}
			srv := httptest.NewServer(prom)
			defer srv.Close()
			spec := dcv1.Analysis{
				Interval: metav1.Duration{Duration: time.Second}, Count: tc.count,
				FailureLimit: tc.failureLimit, ConsecutiveErrorLimit: tc.errorLimit,
				Metrics: []dcv1.AnalysisMetric{{
					Name:             "error-rate",
					Prometheus:       &dcv1.PrometheusMetric{Address: srv.URL, Query: `rate{deployment="{{.Deployment}}"}`},
					SuccessCondition: tc.success, FailureCondition: tc.failure,
				}},
			}
			var out bytes.Buffer
			got, err := Run(context.Background(), spec, Vars{Namespace: "ns", DeploymentConfig: "web", Deployment: "web-2", Version: 2},
				Options{Out: &out, Label: "pre", Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			t.Logf("log:\n%s", out.String())
			if got.Phase != tc.want || got.Measurements != tc.measurements {
				t.Fatalf("outcome %+v, want phase %s after %d measurements", got, tc.want, tc.measurements)
			}
			if tc.want != Successful && got.Metric != "error-rate" {
				t.Errorf("outcome names metric %q, want error-rate", got.Metric)
			}
			if !strings.Contains(got.Message, tc.message) {
				t.Errorf("message %q does not contain %q", got.Message, tc.message)
			}
			if lines := strings.Count(out.String(), "measurement #"); lines != tc.measurements {
				t.Errorf("log has %d measurement lines, want %d", lines, tc.measurements)
			}
			if !strings.Contains(out.String(), "--> pre: analysis "+string(tc.want)) {
				t.Errorf("log does not end with the outcome %s", tc.want)
			}
			for _, q := range prom.queries {
				if q != `rate{deployment="web-2"}` {
					t.Errorf("Prometheus got query %q, want the rendered template", q)
				}
			}
		})
	}
}

func TestRunUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	spec := dcv1.Analysis{ConsecutiveErrorLimit: ptr(1), Metrics: []dcv1.AnalysisMetric{{
		Name: "up", Prometheus: &dcv1.PrometheusMetric{Address: addr, Query: "up"}, SuccessCondition: "true",
	}}}
	got, err := Run(context.Background(), spec, Vars{}, Options{Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got.Phase != Error || got.Measurements != 2 || !strings.Contains(got.Message, addr) {
		t.Fatalf("outcome %+v, want Error after 2 measurements naming %s", got, addr)
	}
}

// TestRunInterrupted checks what a user sees of an analysis whose deployer
// stops (a cancel) between two measurements: an error that says so and
// wraps the context's, an Error outcome counting the measurement taken, a
// log with that measurement and no verdict on the deployment.
func TestRunInterrupted(t *testing.T) {
	srv := httptest.NewServer(&fakeProm{answers: []string{good}})
	defer srv.Close()
	spec := dcv1.Analysis{Count: ptr(2), Interval: metav1.Duration{Duration: time.Minute}, Metrics: []dcv1.AnalysisMetric{{
		Name: "up", Prometheus: &dcv1.PrometheusMetric{Address: srv.URL, Query: "up"}, SuccessCondition: "true",
	}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	sleeps := 0
	got, err := Run(ctx, spec, Vars{}, Options{Out: &out, Label: "step-2", Sleep: func(ctx context.Context, _ time.Duration) error {
		sleeps++
		cancel()
		return ctx.Err()
	}})
	if err == nil || !errors.Is(err, context.Canceled) || err.Error() != "analysis interrupted: context canceled" {
		t.Fatalf("err = %v, want \"analysis interrupted: context canceled\" wrapping context.Canceled", err)
	}
	if got.Phase != Error || got.Measurements != 1 || got.Message != "the analysis was interrupted" {
		t.Errorf("outcome = %+v, want Error after 1 measurement, \"the analysis was interrupted\"", got)
	}
	if sleeps != 1 {
		t.Errorf("%d waits between measurements, want 1", sleeps)
	}
	log := out.String()
	for _, want := range []string{
		"--> step-2: analysis started: 1 metric(s), 2 measurement(s) 1m0s apart\n",
		"--> step-2: analysis \"up\" measurement #1: Successful",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "measurement #2") || strings.Contains(log, "--> step-2: analysis Successful") {
		t.Errorf("log goes on after the cancel:\n%s", log)
	}
}
