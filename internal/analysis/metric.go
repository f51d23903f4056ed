package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// metric is one compiled metric of an analysis and its counts.
type metric struct {
	name    string
	address string
	query   string
	success *condition
	failure *condition
	api     promv1.API
	// dryRun metrics are measured and recorded but decide nothing.
	dryRun bool

	judged, failures, inconclusive, errors, errorsInRow int
	// verdict is what ended a dry-run metric's measurements, and why.
	verdict        Phase
	verdictMessage string
}

// done reports whether m needs no more measurements: it has count
// verdicts, or it is a dry run that reached a verdict of its own.
func (m *metric) done(count int) bool {
	return m.judged >= count || m.verdict != ""
}

// label names m in the log, marking a dry run.
func (m *metric) label() string {
	if m.dryRun {
		return fmt.Sprintf("%q (dry run)", m.name)
	}
	return fmt.Sprintf("%q", m.name)
}

// markDryRuns marks the metrics that dryRun names (DryRunAll: every one).
func markDryRuns(metrics []*metric, dryRun []dcv1.DryRunMetric) {
	for _, d := range dryRun {
		for _, m := range metrics {
			if d.MetricName == DryRunAll || d.MetricName == m.name {
				m.dryRun = true
			}
		}
	}
}

// condition is a compiled CEL condition and its source, for the log.
type condition struct {
	field string
	expr  string
	prg   cel.Program
}

// measurement is the verdict on one measurement and what the log says of it.
type measurement struct {
	phase  Phase
	detail string
}

// compile prepares every metric: renders its query, compiles its
// conditions and builds its Prometheus client.
func compile(spec dcv1.Analysis, vars Vars, opts Options) ([]*metric, error) {
	if len(spec.Metrics) == 0 {
		return nil, errors.New("the analysis has no metrics")
	}
	env, err := newEnv()
	if err != nil {
		return nil, err
	}
	out := make([]*metric, 0, len(spec.Metrics))
	for i, m := range spec.Metrics {
		c, err := compileMetric(env, m, vars, opts)
		if err != nil {
			return nil, fmt.Errorf("metrics[%d] (%q): %w", i, m.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// compileMetric prepares one metric.
func compileMetric(env *cel.Env, m dcv1.AnalysisMetric, vars Vars, opts Options) (*metric, error) {
	if m.Prometheus == nil {
		return nil, errors.New("prometheus: required")
	}
	if err := checkAddress(m.Prometheus.Address); err != nil {
		return nil, fmt.Errorf("prometheus.address: %w", err)
	}
	query, err := RenderQuery(m.Prometheus.Query, vars)
	if err != nil {
		return nil, fmt.Errorf("prometheus.query: %w", err)
	}
	if m.SuccessCondition == "" && m.FailureCondition == "" {
		return nil, errors.New("at least one of successCondition or failureCondition is required")
	}
	c := &metric{name: m.Name, address: m.Prometheus.Address, query: query}
	if c.success, err = compileCondition(env, "successCondition", m.SuccessCondition); err != nil {
		return nil, fmt.Errorf("successCondition: %w", err)
	}
	if c.failure, err = compileCondition(env, "failureCondition", m.FailureCondition); err != nil {
		return nil, fmt.Errorf("failureCondition: %w", err)
	}
	client, err := promapi.NewClient(promapi.Config{Address: m.Prometheus.Address, Client: limitResponses(opts.HTTPClient)})
	if err != nil {
		return nil, fmt.Errorf("prometheus.address: %w", err)
	}
	c.api = promv1.NewAPI(client)
	return c, nil
}

// checkAddress requires an absolute http(s) URL with a host.
func checkAddress(address string) error {
	u, err := url.Parse(address)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q must be an http:// or https:// URL with a host", address)
	}
	return nil
}

// conditionCostLimit bounds the work of one evaluation of a condition, so
// that a condition over a large vector cannot stall the deployer.
const conditionCostLimit = 1_000_000

// conditionNestingLimit bounds how deeply a condition may nest. CEL's
// type checker takes time that grows much faster than the depth of nested
// literals: at its default limit a 1024-character condition of nested maps
// took 14 s to compile, and dc-controller compiles every condition of a
// DeploymentConfig before it creates a deployment. At 24 levels the worst
// 1024-character condition found compiles in tens of milliseconds, and a
// condition as Argo Rollouts users write them nests a few levels.
const conditionNestingLimit = 24

// newEnv is the CEL environment of conditions: one variable, result, and
// the functions isNaN and isInf (cel.go).
func newEnv() (*cel.Env, error) {
	opts := append(conditionFunctions(), cel.Variable("result", cel.DynType), cel.ParserRecursionLimit(conditionNestingLimit))
	env, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, fmt.Errorf("build the CEL environment: %w", err)
	}
	return env, nil
}

// compileCondition compiles a condition; an empty one is nil.
func compileCondition(env *cel.Env, field, expr string) (*condition, error) {
	if expr == "" {
		return nil, nil
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("does not compile as CEL: %w", iss.Err())
	}
	if t := ast.OutputType(); t != cel.BoolType && t != cel.DynType {
		return nil, fmt.Errorf("must be a bool expression, %q is a %s", expr, t)
	}
	prg, err := env.Program(ast, cel.CostLimit(conditionCostLimit), cel.CustomDecoratorV2(nanOrdering))
	if err != nil {
		return nil, fmt.Errorf("does not compile as CEL: %w", err)
	}
	return &condition{field: field, expr: expr, prg: prg}, nil
}

// eval evaluates the condition on result.
func (c *condition) eval(result any) (bool, error) {
	v, _, err := c.prg.Eval(map[string]any{"result": result})
	if err != nil {
		return false, fmt.Errorf("%s %q cannot judge result %s: %w", c.field, c.expr, formatResult(result), err)
	}
	b, ok := v.(types.Bool)
	if !ok {
		return false, fmt.Errorf("%s %q gave %v, not a bool, for result %s", c.field, c.expr, v, formatResult(result))
	}
	return bool(b), nil
}

// measure queries Prometheus once and judges the result.
func (m *metric) measure(ctx context.Context, opts Options) measurement {
	qctx, cancel := context.WithTimeout(ctx, opts.QueryTimeout)
	defer cancel()
	value, _, _, err := m.api.Query(qctx, m.query, opts.Now())
	if err != nil {
		return measurement{phase: Error, detail: fmt.Sprintf("query %s: %v", m.address, err)}
	}
	result, err := resultOf(value)
	if err != nil {
		return measurement{phase: Error, detail: err.Error()}
	}
	return m.judge(result)
}

// judge applies the conditions to a result.
func (m *metric) judge(result any) measurement {
	shown := "result " + formatResult(result)
	if m.failure != nil {
		failed, err := m.failure.eval(result)
		if err != nil {
			return measurement{phase: Error, detail: err.Error()}
		}
		if failed {
			return measurement{phase: Failed, detail: fmt.Sprintf("%s met failureCondition %s", shown, m.failure.expr)}
		}
	}
	if m.success == nil {
		return measurement{phase: Successful, detail: fmt.Sprintf("%s did not meet failureCondition %s", shown, m.failure.expr)}
	}
	ok, err := m.success.eval(result)
	switch {
	case err != nil:
		return measurement{phase: Error, detail: err.Error()}
	case ok:
		return measurement{phase: Successful, detail: fmt.Sprintf("%s met successCondition %s", shown, m.success.expr)}
	case m.failure != nil:
		return measurement{phase: Inconclusive, detail: fmt.Sprintf("%s met neither successCondition %s nor failureCondition %s", shown, m.success.expr, m.failure.expr)}
	}
	return measurement{phase: Failed, detail: fmt.Sprintf("%s did not meet successCondition %s", shown, m.success.expr)}
}

// resultOf turns a query's value into `result`: a vector is a list of
// doubles, a scalar a double.
func resultOf(v model.Value) (any, error) {
	switch r := v.(type) {
	case model.Vector:
		out := make([]float64, len(r))
		for i, s := range r {
			out[i] = float64(s.Value)
		}
		return out, nil
	case *model.Scalar:
		return float64(r.Value), nil
	case nil:
		return nil, errors.New("the query returned no result")
	}
	return nil, fmt.Errorf("the query returned a %s; only vector and scalar results can be judged", v.Type())
}

// maxShownSamples bounds the samples of a vector that the log and the
// outcome's message show: a query may return thousands of series.
const maxShownSamples = 10

// formatResult prints a result the way the log shows it: [0.1, 2] or 0.1;
// a long vector as its first samples and "... N more".
func formatResult(result any) string {
	switch r := result.(type) {
	case []float64:
		shown := r[:min(len(r), maxShownSamples)]
		parts := make([]string, len(shown), len(shown)+1)
		for i, f := range shown {
			parts[i] = formatFloat(f)
		}
		if more := len(r) - len(shown); more > 0 {
			parts = append(parts, fmt.Sprintf("... %d more", more))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case float64:
		return formatFloat(r)
	}
	return fmt.Sprint(result)
}

// formatFloat prints a float briefly; NaN and infinities by name.
func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Sprint(f)
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}
