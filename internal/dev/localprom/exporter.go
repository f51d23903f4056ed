// Package localprom runs a real Prometheus (the binary hack/tools.sh builds
// from Go modules) on loopback, scraping an Exporter whose series the
// caller controls: the metric source of analysis tests and of the
// playground's analysis rollouts (docs/analysis.md).
package localprom

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RequestsMetric is the counter the Exporter serves: requests a deployment
// answered, by status code, e.g.
// app_requests_total{namespace="shop",deployment="web-2",code="500"} 42.
const RequestsMetric = "app_requests_total"

// Exporter serves RequestsMetric on loopback. Each series is a counter that
// grows at a rate the caller sets, so that PromQL's rate() sees traffic.
type Exporter struct {
	srv *http.Server
	ln  net.Listener
	now func() time.Time

	mu     sync.Mutex
	series map[seriesKey]*counter
}

// seriesKey names one series.
type seriesKey struct{ namespace, deployment, code string }

// counter is a series' value at since and its growth per second after.
type counter struct {
	base   float64
	perSec float64
	since  time.Time
}

// value is the counter's value at t.
func (c *counter) value(t time.Time) float64 {
	return c.base + c.perSec*t.Sub(c.since).Seconds()
}

// StartExporter serves the metrics on 127.0.0.1 at a free port.
func StartExporter() (*Exporter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the exporter: %w", err)
	}
	e := &Exporter{ln: ln, now: time.Now, series: map[seriesKey]*counter{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", e.serveMetrics)
	mux.HandleFunc("/traffic", e.serveTraffic)
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = e.srv.Serve(ln) }()
	return e, nil
}

// Addr is the exporter's host:port, a scrape target.
func (e *Exporter) Addr() string {
	return e.ln.Addr().String()
}

// SetRate makes the series of the deployment (in namespace) and code grow
// by perSecond from now on (0 stops it; the value it reached stays).
func (e *Exporter) SetRate(namespace, deployment, code string, perSecond float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	k := seriesKey{namespace, deployment, code}
	c, ok := e.series[k]
	if !ok {
		e.series[k] = &counter{perSec: perSecond, since: now}
		return
	}
	c.base, c.perSec, c.since = c.value(now), perSecond, now
}

// SetTraffic makes the deployment (in namespace) answer total requests per
// second, errors of them with code 500 and the rest with 200.
func (e *Exporter) SetTraffic(namespace, deployment string, total, errors float64) {
	e.SetRate(namespace, deployment, "200", total-errors)
	e.SetRate(namespace, deployment, "500", errors)
}

// Close stops serving.
func (e *Exporter) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stop the exporter: %w", err)
	}
	return nil
}

// serveMetrics writes every series in Prometheus's text format.
func (e *Exporter) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprint(w, e.render())
}

// serveTraffic sets a deployment's traffic from another process (the
// playground's dc-local up): POST /traffic with the form values namespace,
// deployment, total and errors (requests per second).
func (e *Exporter) serveTraffic(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST namespace, deployment, total and errors", http.StatusMethodNotAllowed)
		return
	}
	ns, dep := r.FormValue("namespace"), r.FormValue("deployment")
	total, terr := strconv.ParseFloat(r.FormValue("total"), 64)
	errs, eerr := strconv.ParseFloat(r.FormValue("errors"), 64)
	if ns == "" || dep == "" || terr != nil || eerr != nil || errs < 0 || errs > total {
		http.Error(w, "want namespace, deployment, total and errors (0 <= errors <= total)", http.StatusBadRequest)
		return
	}
	e.SetTraffic(ns, dep, total, errs)
	w.WriteHeader(http.StatusNoContent)
}

// PostTraffic asks the exporter at addr (host:port) to set a deployment's
// traffic, as SetTraffic does in its own process.
func PostTraffic(ctx context.Context, addr, namespace, deployment string, total, errors float64) error {
	form := url.Values{
		"namespace": {namespace}, "deployment": {deployment},
		"total": {strconv.FormatFloat(total, 'g', -1, 64)}, "errors": {strconv.FormatFloat(errors, 'g', -1, 64)},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/traffic", strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("set the traffic of %s: %w", deployment, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("set the traffic of %s: %w", deployment, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("set the traffic of %s: the exporter answered %s", deployment, resp.Status)
	}
	return nil
}

// render is the exposition of every series, sorted.
func (e *Exporter) render() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	var lines []string
	for k, c := range e.series {
		lines = append(lines, fmt.Sprintf("%s{namespace=%q,deployment=%q,code=%q} %g", RequestsMetric, k.namespace, k.deployment, k.code, c.value(now)))
	}
	sort.Strings(lines)
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP %s Requests answered, by deployment and status code.\n# TYPE %s counter\n", RequestsMetric, RequestsMetric)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// ErrorRateQuery is a query template of the share of a deployment's
// requests that failed with code 500 over the last window, as the
// analyses of the tests and the playground use it.
const ErrorRateQuery = `sum(rate(` + RequestsMetric + `{namespace="{{.Namespace}}",deployment="{{.Deployment}}",code="500"}[5s])) / sum(rate(` + RequestsMetric + `{namespace="{{.Namespace}}",deployment="{{.Deployment}}"}[5s]))`
