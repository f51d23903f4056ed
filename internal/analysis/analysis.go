package analysis

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Defaults of the fields an Analysis may leave out. They follow Argo
// Rollouts, except Count: a hook must end, so an analysis without a count
// takes one measurement.
const (
	DefaultCount                 = 1
	DefaultFailureLimit          = 0
	DefaultConsecutiveErrorLimit = 4
	// DefaultInterval separates measurements when Count > 1 and no interval
	// is given (the API server refuses that; an RC made before the rule
	// could still carry it).
	DefaultInterval = 10 * time.Second
	// DefaultQueryTimeout bounds one query, so that a Prometheus that
	// accepts connections but never answers is an Error, not a hang.
	DefaultQueryTimeout = 10 * time.Second
)

// DryRunAll as a dryRun metricName makes every metric of the analysis a
// dry run.
const DryRunAll = "*"

// Phase is the verdict on a measurement or on a whole analysis.
type Phase string

// The phases of measurements and analyses, named as Argo Rollouts names them.
const (
	// Successful: the measurement met its conditions; for an analysis, every
	// metric was measured Count times without reaching a limit.
	Successful Phase = "Successful"
	// Failed: the failureCondition held (or the successCondition did not);
	// for an analysis, a metric failed more than FailureLimit times.
	Failed Phase = "Failed"
	// Inconclusive: both conditions were set and neither held; it ends the
	// analysis, and a hook treats it like a failure.
	Inconclusive Phase = "Inconclusive"
	// Error: no verdict could be reached (Prometheus unreachable, a query
	// error, a result the conditions cannot judge); for an analysis, a
	// metric had more than ConsecutiveErrorLimit errors in a row.
	Error Phase = "Error"
)

// Vars are the values a query template may use: {{.Namespace}},
// {{.DeploymentConfig}}, {{.Deployment}} (the ReplicationController's name)
// and {{.Version}}.
type Vars struct {
	Namespace        string
	DeploymentConfig string
	Deployment       string
	Version          int64
	// StableService and CanaryService are the Services of
	// rollingParams.trafficRouting, empty without it: a query can then
	// measure the canary's own requests.
	StableService string
	CanaryService string
}

// SampleVars are example values of Vars, for tests and examples.
func SampleVars() Vars {
	return Vars{Namespace: "default", DeploymentConfig: "example", Deployment: "example-1", Version: 1}
}

// Options tune a Run. The zero value works: measurements are discarded and
// the real clock and http.DefaultTransport are used.
type Options struct {
	// Out receives one line per measurement and one for the outcome.
	Out io.Writer
	// Label starts every line, e.g. "pre" gives "--> pre: analysis ...".
	Label string
	// HTTPClient sends the queries; nil uses the one of the context
	// (WithHTTPClient) or else a client without a proxy setting of its own
	// beyond the environment's.
	HTTPClient *http.Client
	// QueryTimeout bounds one query; zero is DefaultQueryTimeout.
	QueryTimeout time.Duration
	// Sleep waits between measurements; nil waits on a timer (tests may
	// shorten it).
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the query time; nil is time.Now.
	Now func() time.Time
}

// Outcome is the verdict of a whole analysis.
type Outcome struct {
	// Phase is Successful, Failed, Inconclusive or Error.
	Phase Phase
	// Metric names the metric that decided a phase other than Successful.
	Metric string
	// Message says why, naming the metric, e.g. `metric "error-rate" failed
	// 1 measurement (failureLimit 0): result [0.5] met failureCondition ...`.
	Message string
	// Measurements is how many measurements were taken, over all metrics.
	Measurements int
}

// String is the outcome as one line: "Failed: metric ...".
func (o Outcome) String() string {
	return string(o.Phase) + ": " + o.Message
}

// Run measures the analysis until it has an outcome. Its error is for what
// is not a verdict on the deployment: the context ended, or the spec is
// invalid (a condition that does not compile, a query template that does
// not render), which validation refuses before a rollout starts.
func Run(ctx context.Context, spec dcv1.Analysis, vars Vars, opts Options) (Outcome, error) {
	if opts.HTTPClient == nil {
		opts.HTTPClient = httpClientOf(ctx)
	}
	opts = opts.withDefaults()
	metrics, err := compile(spec, vars, opts)
	if err != nil {
		return Outcome{}, err
	}
	count := int(int32Or(spec.Count, DefaultCount))
	interval := spec.Interval.Duration
	if interval <= 0 {
		interval = DefaultInterval
	}
	r := &run{
		opts:       opts,
		count:      count,
		failLimit:  int(int32Or(spec.FailureLimit, DefaultFailureLimit)),
		errorLimit: int(int32Or(spec.ConsecutiveErrorLimit, DefaultConsecutiveErrorLimit)),
		metrics:    metrics,
		interval:   interval,
	}
	markDryRuns(metrics, spec.DryRun)
	r.logf("analysis started: %d metric(s), %d measurement(s) %s apart", len(metrics), count, interval)
	outcome, err := r.loop(ctx)
	if err != nil {
		return outcome, err
	}
	r.logf("analysis %s", outcome)
	return outcome, nil
}

// httpClientKey is the context key of WithHTTPClient.
type httpClientKey struct{}

// WithHTTPClient returns a context under which an analysis whose Options
// name no HTTPClient sends its queries with c. dc-controller runs the
// rollouts it runs itself under one carrying its dial policy, so that the
// queries a DeploymentConfig's author writes (and their redirects) cannot
// reach addresses the cluster's admin has not allowed, however deep in a
// strategy or hook the analysis is.
func WithHTTPClient(ctx context.Context, c *http.Client) context.Context {
	return context.WithValue(ctx, httpClientKey{}, c)
}

// httpClientOf is the client WithHTTPClient put in ctx, or nil.
func httpClientOf(ctx context.Context) *http.Client {
	c, _ := ctx.Value(httpClientKey{}).(*http.Client)
	return c
}

// withDefaults fills the options left out.
func (o Options) withDefaults() Options {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = DefaultQueryTimeout
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// run is one analysis in progress.
type run struct {
	opts       Options
	count      int
	failLimit  int
	errorLimit int
	interval   time.Duration
	metrics    []*metric
	taken      int
}

// loop takes the measurements, all metrics each round, until a limit is
// reached or every metric was measured count times. Errors do not use up
// the count (as in Argo Rollouts): a Prometheus that comes back in time
// still gets count real verdicts.
func (r *run) loop(ctx context.Context) (Outcome, error) {
	for {
		done := true
		for _, m := range r.metrics {
			if m.done(r.count) {
				continue
			}
			done = false
			if o, end := r.measure(ctx, m); end {
				return o, nil
			}
			if err := ctx.Err(); err != nil {
				return Outcome{Phase: Error, Measurements: r.taken, Message: "the analysis was interrupted"}, fmt.Errorf("analysis interrupted: %w", err)
			}
		}
		if done || r.allJudged() {
			return r.success(), nil
		}
		if err := r.opts.Sleep(ctx, r.interval); err != nil {
			return Outcome{Phase: Error, Measurements: r.taken, Message: "the analysis was interrupted"}, fmt.Errorf("analysis interrupted: %w", err)
		}
	}
}

// allJudged reports whether every metric has its count of verdicts (or,
// for a dry run, reached a verdict of its own).
func (r *run) allJudged() bool {
	for _, m := range r.metrics {
		if !m.done(r.count) {
			return false
		}
	}
	return true
}

// measure takes one measurement of m, logs it and reports whether it ends
// the analysis.
func (r *run) measure(ctx context.Context, m *metric) (Outcome, bool) {
	r.taken++
	mm := m.measure(ctx, r.opts)
	switch mm.phase {
	case Error:
		m.errorsInRow++
		r.logf("analysis %s measurement #%d: Error (%d in a row, consecutiveErrorLimit %d): %s", m.label(), m.judged+m.errors+1, m.errorsInRow, r.errorLimit, mm.detail)
		m.errors++
		if m.errorsInRow > r.errorLimit {
			return r.decide(m, Error, fmt.Sprintf("metric %q had %d errors in a row (consecutiveErrorLimit %d): %s", m.name, m.errorsInRow, r.errorLimit, mm.detail))
		}
		return Outcome{}, false
	case Failed:
		m.failures++
	case Inconclusive:
		m.inconclusive++
	}
	m.errorsInRow = 0
	m.judged++
	r.logf("analysis %s measurement #%d: %s: %s", m.label(), m.judged+m.errors, mm.phase, mm.detail)
	switch {
	case mm.phase == Failed && m.failures > r.failLimit:
		return r.decide(m, Failed, fmt.Sprintf("metric %q failed %d measurement(s) (failureLimit %d): %s", m.name, m.failures, r.failLimit, mm.detail))
	case mm.phase == Inconclusive:
		return r.decide(m, Inconclusive, fmt.Sprintf("metric %q was inconclusive: %s", m.name, mm.detail))
	}
	return Outcome{}, false
}

// decide is metric m reaching verdict p: the end of the analysis, or for
// a dry-run metric the end of its own measurements only, kept for the
// outcome's message.
func (r *run) decide(m *metric, p Phase, msg string) (Outcome, bool) {
	if !m.dryRun {
		return r.end(p, m, msg), true
	}
	m.verdict, m.verdictMessage = p, msg
	r.logf("analysis %s %s; a dry run decides nothing: %s", m.label(), p, msg)
	return Outcome{}, false
}

// end is an outcome decided by metric m.
func (r *run) end(p Phase, m *metric, msg string) Outcome {
	return Outcome{Phase: p, Metric: m.name, Message: msg + r.dryRunSummary(), Measurements: r.taken}
}

// success is the outcome when every metric got its count of verdicts.
func (r *run) success() Outcome {
	names := make([]string, len(r.metrics))
	for i, m := range r.metrics {
		names[i] = fmt.Sprintf("%q", m.name)
	}
	return Outcome{
		Phase:        Successful,
		Message:      fmt.Sprintf("%d measurement(s) of metric %s", r.taken, strings.Join(names, ", ")) + r.dryRunSummary(),
		Measurements: r.taken,
	}
}

// dryRunSummary is what the dry-run metrics measured, for the end of an
// outcome's message: "; dry run: metric "b" Failed: ...". It is where a
// dry run is recorded (the annotation and event of Record carry it).
func (r *run) dryRunSummary() string {
	var b strings.Builder
	for _, m := range r.metrics {
		if !m.dryRun || m.judged+m.errors == 0 {
			continue
		}
		fmt.Fprintf(&b, "; dry run: metric %q ", m.name)
		switch {
		case m.verdict != "":
			fmt.Fprintf(&b, "%s: %s", m.verdict, m.verdictMessage)
		default:
			phase := "Successful"
			if m.judged < r.count {
				phase = "Running"
			}
			fmt.Fprintf(&b, "%s: %d measurement(s)", phase, m.judged)
			if m.failures > 0 {
				fmt.Fprintf(&b, ", %d failed (failureLimit %d)", m.failures, r.failLimit)
			}
			if m.errors > 0 {
				fmt.Fprintf(&b, ", %d error(s)", m.errors)
			}
		}
	}
	return b.String()
}

// logf writes one line of the analysis to the log.
func (r *run) logf(format string, args ...any) {
	prefix := "--> "
	if r.opts.Label != "" {
		prefix += r.opts.Label + ": "
	}
	fmt.Fprintf(r.opts.Out, prefix+format+"\n", args...)
}

// int32Or is *p, or def when p is nil.
func int32Or(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// sleep waits for d unless the context ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
