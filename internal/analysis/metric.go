package analysis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"text/template"

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

	judged, failures, inconclusive, errors, errorsInRow int
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
	client, err := promapi.NewClient(promapi.Config{Address: m.Prometheus.Address, Client: opts.HTTPClient})
	if err != nil {
		return nil, fmt.Errorf("prometheus.address: %w", err)
	}
	c.api = promv1.NewAPI(client)
	return c, nil
}

// RenderQuery renders a query template with vars. Missing keys are an
// error, so that a misspelt {{.Deploymnet}} is refused rather than sent as
// an empty string.
func RenderQuery(query string, vars Vars) (string, error) {
	if strings.TrimSpace(query) == "" {
		return "", errors.New("must not be empty")
	}
	t, err := template.New("query").Option("missingkey=error").Parse(query)
	if err != nil {
		return "", fmt.Errorf("does not parse as a Go template: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, vars); err != nil {
		return "", fmt.Errorf("does not render (it may use {{.Namespace}}, {{.DeploymentConfig}}, {{.Deployment}} and {{.Version}}): %w", err)
	}
	return b.String(), nil
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

// newEnv is the CEL environment of conditions: one variable, result.
func newEnv() (*cel.Env, error) {
	env, err := cel.NewEnv(cel.Variable("result", cel.DynType))
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
	prg, err := env.Program(ast, cel.CostLimit(conditionCostLimit))
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

// formatResult prints a result the way the log shows it: [0.1, 2] or 0.1.
func formatResult(result any) string {
	switch r := result.(type) {
	case []float64:
		parts := make([]string, len(r))
		for i, f := range r {
			parts[i] = formatFloat(f)
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
