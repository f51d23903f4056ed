package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/deployconfig/deployconfig/bench/internal/bench/chart"
	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
)

// runner is one run of the benchmark.
type runner struct {
	e       *env
	o       Options
	records []*phaseRecord
	// footprints are the footprint measurements with their audit windows.
	footprints []footprintRecord
	reference  *report.Reference
	// hostileRun is the hostile scenario's record, nil when it did not run.
	hostileRun *hostileRecord
	// warnings are problems that did not stop the run, for the notes.
	warnings []string
	// ctrl runs dc-controller for the rollout scenarios, in one deployer
	// mode at a time.
	ctrl *controllers
}

// cleanUp deletes a scenario's namespace; a namespace that does not go in
// time is noted, not fatal: the next scenario has a namespace of its own.
func (r *runner) cleanUp(ctx context.Context, ns string) error {
	err := r.e.deleteNamespace(ctx, ns)
	if err != nil && ctx.Err() == nil {
		r.warnings = append(r.warnings, err.Error()+"; the run went on with it still terminating")
		fmt.Fprintf(r.o.Log, "  %v; going on\n", err)
		return nil
	}
	return err
}

// Outputs are the files a run wrote.
type Outputs struct {
	JSON, Markdown, Chart string
}

// Run runs the benchmark on a fresh cluster and writes the report. A
// scenario that fails ends the run early, but the report of what was
// measured is still written, with the failure among its notes; the error
// is returned as well.
func Run(ctx context.Context, o Options) (*report.Report, Outputs, error) {
	if err := o.validate(); err != nil {
		return nil, Outputs{}, err
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, Outputs{}, fmt.Errorf("making %s: %w", o.OutDir, err)
	}
	if o.runs(ScenarioCache) {
		// Before the cluster, so that nothing else is in the heap it reads.
		path, err := cacheScenario(o)
		if err != nil {
			return nil, Outputs{}, err
		}
		fmt.Fprintf(o.Log, "Cache per kind: %s\n", path)
		if len(o.Scenarios) == 1 {
			return nil, Outputs{Markdown: path}, nil
		}
	}
	rep := &report.Report{Started: time.Now(), Machine: procstat.ReadMachine(), Settings: settings(o)}
	loadAtStart := procstat.LoadAverage()
	e, err := newEnv(ctx, o)
	if err != nil {
		return nil, Outputs{}, err
	}
	defer func() {
		if err := e.close(ctx); err != nil {
			fmt.Fprintf(o.Log, "Removing the cluster: %v\n", err)
		}
	}()
	rep.Versions = e.versions(ctx)
	r := &runner{e: e, o: o}
	runErr := r.scenarios(ctx, rep)
	if runErr != nil {
		rep.Notes = append(rep.Notes, "The run stopped early: "+runErr.Error())
	}
	fmt.Fprintln(o.Log, "Reading the audit log...")
	if err := r.analyze(rep); err != nil {
		return rep, Outputs{}, errors.Join(runErr, err)
	}
	rep.Notes = append(rep.Notes, r.notes()...)
	rep.Notes = append(rep.Notes, fmt.Sprintf("Load average (1 min) at the start %s, at the end %s: other work on the machine shows here.", loadAtStart, procstat.LoadAverage()))
	rep.Targets = report.EvaluateTargets(rep)
	rep.Duration = time.Since(rep.Started).Seconds()
	out, err := writeOutputs(o, rep)
	return rep, out, errors.Join(runErr, err)
}

// scenarios runs the scenarios of the run in order.
func (r *runner) scenarios(ctx context.Context, rep *report.Report) error {
	if r.o.runs(ScenarioReference) {
		if err := r.referenceWrites(ctx); err != nil {
			return err
		}
	}
	if r.o.runs(ScenarioLatency) || r.o.runs(ScenarioThroughput) || r.o.runs(ScenarioHostile) {
		if err := r.rollouts(ctx, rep); err != nil {
			return err
		}
	}
	if r.o.runs(ScenarioInFlight) {
		if err := r.inFlight(ctx, rep); err != nil {
			return err
		}
	}
	if r.o.runs(ScenarioFanOut) {
		if err := r.fanOut(ctx, rep); err != nil {
			return err
		}
	}
	if r.o.runs(ScenarioDashboard) {
		if err := r.dashboard(ctx, rep); err != nil {
			return err
		}
	}
	if r.o.runs(ScenarioLogCache) {
		if err := r.logCache(ctx, rep); err != nil {
			return err
		}
	}
	if r.o.runs(ScenarioFootprint) {
		return r.footprint(ctx)
	}
	return nil
}

// rollouts runs the scenarios that roll out: one dc-controller process
// and the pod runtime serve them all.
func (r *runner) rollouts(ctx context.Context, rep *report.Report) error {
	r.ctrl = &controllers{r: r, start: func(ctx context.Context, e *env, logPath, mode string) (*controllerProcess, error) {
		return startControllerArgs(ctx, e, logPath, r.o.deployerModeArgs(mode)...)
	}}
	if r.o.ProfileDir != "" {
		r.ctrl.start = func(ctx context.Context, e *env, logPath, _ string) (*controllerProcess, error) {
			return startProfiledController(ctx, e, logPath)
		}
		rep.Notes = append(rep.Notes, "Profiling run: dc-controller ran inside dc-bench for the rollout scenarios, so its usage there is dc-bench's.")
	}
	if err := r.ctrl.use(ctx, r.o.primaryMode()); err != nil {
		return err
	}
	stopRuntime, err := startRuntime(ctx, r.e, filepath.Join(r.e.dir, "dc-bench-runtime.log"))
	if err != nil {
		r.ctrl.stop()
		return err
	}
	defer stopRuntime()
	defer func() {
		r.ctrl.stop()
		if u, ok := r.ctrl.total(); ok {
			rep.Controller = &u
		}
		if n := len(r.ctrl.usage); n > 1 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("dc-controller was started %d times, once per switch of deployer mode; its usage is the highest peak and the CPU of all of them.", n))
		}
	}()
	if r.o.runs(ScenarioLatency) {
		if err := r.latency(ctx); err != nil {
			return err
		}
	}
	if r.o.runs(ScenarioThroughput) {
		for _, n := range r.o.Sizes {
			if err := r.throughput(ctx, n); err != nil {
				return err
			}
		}
	}
	if r.o.runs(ScenarioHostile) {
		return r.hostile(ctx)
	}
	return nil
}

// notes remarks on failed rollouts.
func (r *runner) notes() []string {
	notes := append([]string(nil), r.warnings...)
	for _, p := range r.records {
		if len(p.Failed) > 0 {
			notes = append(notes, fmt.Sprintf("%d of %d %s rollouts failed (%s, N=%d).", len(p.Failed), len(p.Names), p.System, p.Phase, p.N))
		}
	}
	return notes
}

// writeOutputs writes <date>.json, .md and .png ("-quick" is added to the
// names of a quick run, so that it never replaces a real one).
func writeOutputs(o Options, rep *report.Report) (Outputs, error) {
	base := rep.Started.Format("2006-01-02")
	if o.Label != "" {
		base += "-" + o.Label
	}
	if o.Quick {
		base += "-quick"
	}
	out := Outputs{
		JSON:     filepath.Join(o.OutDir, base+".json"),
		Markdown: filepath.Join(o.OutDir, base+".md"),
	}
	if panels := chartPanels(rep); len(panels) > 0 {
		out.Chart = filepath.Join(o.OutDir, base+".png")
		if err := chart.WritePNG(out.Chart, panels); err != nil {
			return out, err
		}
	}
	if err := rep.WriteJSON(out.JSON); err != nil {
		return out, err
	}
	chartName := ""
	if out.Chart != "" {
		// filepath.Base("") is ".", which would show as a broken image.
		chartName = filepath.Base(out.Chart)
	}
	return out, writeMarkdownFile(out.Markdown, rep, chartName)
}

// writeMarkdownFile writes the report's Markdown to path; chartName is
// its chart's file name, "" for none.
func writeMarkdownFile(path string, rep *report.Report, chartName string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	err = report.WriteMarkdown(f, rep, chartName)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing the report: %w", cerr)
	}
	return err
}

// Render writes the Markdown report of a run saved as JSON at path
// again, beside it (REPORT.md for REPORT.json), with the chart of the same
// name when there is one, and returns the Markdown's path.
func Render(path string) (string, error) {
	rep, err := report.ReadJSON(path)
	if err != nil {
		return "", err
	}
	rep.Targets = report.EvaluateTargets(rep)
	base := strings.TrimSuffix(path, filepath.Ext(path))
	chartName := ""
	if _, err := os.Stat(base + ".png"); err == nil {
		chartName = filepath.Base(base + ".png")
	}
	out := base + ".md"
	return out, writeMarkdownFile(out, rep, chartName)
}

// chartPanels are the chart's panels: each throughput phase, both systems.
func chartPanels(rep *report.Report) []chart.Panel {
	var panels []chart.Panel
	for _, t := range rep.Throughput {
		panels = append(panels, chart.Panel{
			Title:  fmt.Sprintf("N=%d, %s, %s mode, repeat %d (DC/Deployment %.2f)", t.N, t.Phase, report.ModeOrPod(t.Mode), t.Repeat, t.Ratio),
			Series: []chart.Series{series(t.DC), series(t.Deployment)},
		})
	}
	return panels
}

// series is a run's curve as a chart line.
func series(run report.Run) chart.Series {
	s := chart.Series{Name: run.System}
	for _, p := range run.Curve {
		s.Points = append(s.Points, chart.Point{X: p.Seconds, Y: float64(p.Count)})
	}
	return s
}
