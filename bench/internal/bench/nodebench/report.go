package nodebench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

// Systems compared, named as in the kwok benchmark's report.
const (
	SystemDC         = report.SystemDC
	SystemDeployment = report.SystemDeployment
)

// Report is everything one run of the node scenario measured.
type Report struct {
	Started  time.Time        `json:"started"`
	Duration float64          `json:"durationSeconds"`
	Machine  procstat.Machine `json:"machine"`
	Versions Versions         `json:"versions"`
	Settings Settings         `json:"settings"`
	// Samples are the measured rollouts, in the order they ran.
	Samples []Sample `json:"samples"`
	// Notes qualify the figures: failures, load, anything unusual.
	Notes []string `json:"notes,omitempty"`
}

// Versions of what ran.
type Versions struct {
	Go           string `json:"go"`
	Kubernetes   string `json:"kubernetes"`
	Kubelet      string `json:"kubelet"`
	Runtime      string `json:"containerRuntime"`
	Kernel       string `json:"kernel"`
	Deployconfig string `json:"deployconfig"`
}

// Settings are the knobs of the run.
type Settings struct {
	Rollouts            int    `json:"rollouts"`
	Replicas            int32  `json:"replicas"`
	MaxSurge            string `json:"maxSurge"`
	MaxUnavailable      string `json:"maxUnavailable"`
	UpdatePeriodSeconds int64  `json:"updatePeriodSeconds"`
	IntervalSeconds     int64  `json:"intervalSeconds"`
	ReadinessPeriod     int32  `json:"readinessProbePeriodSeconds"`
	Order               string `json:"order"`
	Change              string `json:"change"`
	MemorySampleMillis  int64  `json:"memorySampleIntervalMillis"`
	ControllerReplicas  int32  `json:"controllerReplicas"`
	ApplicationImage    string `json:"applicationImage"`
	DeployerImage       string `json:"deployerImage"`
	// PrescribedPauseSeconds is how long the DC's deployer sleeps by its
	// own settings in one rollout when pods are ready at once.
	PrescribedPauseSeconds float64 `json:"prescribedPauseSeconds"`
	// DeployerMode is dc-controller's --deployer-mode; "" in
	// reports before it, which were all pod mode.
	DeployerMode string `json:"deployerMode,omitempty"`
}

// Mode is the run's deployer mode, pod for reports from before deployer modes.
func (s Settings) Mode() string {
	if s.DeployerMode == "" {
		return dcv1.DeployerModePod
	}
	return s.DeployerMode
}

// Sample is one measured rollout.
type Sample struct {
	System string `json:"system"`
	// Iteration counts from 1; systems share it.
	Iteration int `json:"iteration"`
	// Complete is seconds from the trigger to the rollout complete.
	Complete float64 `json:"completeSeconds"`
	// FirstPod is seconds from the trigger to the watch seeing the first
	// pod of the new version (the DC's pod of the new RC, the
	// Deployment's of the new ReplicaSet); 0 when it was not seen.
	FirstPod float64 `json:"firstNewPodSeconds,omitempty"`
	// DeployerRunning is seconds from the trigger to the deployer pod seen
	// Running (DeploymentConfig only).
	DeployerRunning float64 `json:"deployerRunningSeconds,omitempty"`
	// DeployerDone is seconds from the trigger to the deployer pod seen
	// Succeeded (DeploymentConfig only): what follows it to Complete is the
	// deployer controller's bookkeeping.
	DeployerDone float64 `json:"deployerSucceededSeconds,omitempty"`
	// DeployerExited is seconds from the trigger to the deployer
	// container seen terminated.
	DeployerExited float64 `json:"deployerExitedSeconds,omitempty"`
	// LogFirst and LogLast are seconds from the trigger to the deployer's
	// first and last log lines (its strategy runs between them).
	LogFirst float64 `json:"deployerFirstLogSeconds,omitempty"`
	LogLast  float64 `json:"deployerLastLogSeconds,omitempty"`
	// DeployerPeak is the deployer pod's cgroup memory high-water mark
	// (memory.max_usage_in_bytes), DeployerContainerPeak the deployer
	// container's alone and DeployerRSS the largest RSS sampled
	// (DeploymentConfig only).
	DeployerPeak          uint64 `json:"deployerPeakBytes,omitempty"`
	DeployerContainerPeak uint64 `json:"deployerContainerPeakBytes,omitempty"`
	DeployerRSS           uint64 `json:"deployerRSSBytes,omitempty"`
	// InController marks a DC rollout dc-controller ran itself:
	// it has no deployer pod, so only Complete is measured.
	InController bool `json:"inController,omitempty"`
	// Err says why the rollout was not measured; its figures are zero.
	Err string `json:"error,omitempty"`
}

// Row is one line of the side-by-side table.
type Row struct {
	Measure    string        `json:"measure"`
	DC         stats.Summary `json:"deploymentConfig"`
	Deployment stats.Summary `json:"deployment"`
	// RatioP50 and RatioP99 are DC / Deployment; 0 when there is no peer.
	RatioP50 float64 `json:"ratioP50"`
	RatioP99 float64 `json:"ratioP99"`
}

// Summary is what the report's tables show.
type Summary struct {
	Rows []Row `json:"rows"`
	// Breakdown splits the DC's trigger → Complete at its deployer pod's
	// Running and Succeeded.
	Breakdown []Row `json:"dcBreakdown"`
	// Rest is the DC's trigger → Complete less its prescribed pauses;
	// RestMet is the full-cost targets' verdict (report.IdleRestMet): Rest within the
	// Deployment's trigger → Complete plus the deployer pod's start
	// (trigger → Running), at the p50 and the p99.
	Rest    stats.Summary `json:"dcRestAfterPrescribed"`
	RestMet bool          `json:"restMet"`
	// RestWithinDeployment is the deployer-mode targets' verdict, in either deployer mode:
	// Rest within the Deployment's trigger → Complete alone, at the p50
	// and the p99.
	RestWithinDeployment bool `json:"restWithinDeployment"`
	// Memory summarizes the deployer pod's peak memory, in MiB.
	PodPeakMiB       stats.Summary `json:"deployerPodPeakMiB"`
	ContainerPeakMiB stats.Summary `json:"deployerContainerPeakMiB"`
	RSSMiB           stats.Summary `json:"deployerRSSMiB"`
	Failed           int           `json:"failed"`
	// Objective is the real node's rows of the rollout latency objective:
	// one idle template change at a time, in the run's deployer mode and
	// for the Deployment.
	Objective []report.Objective `json:"objective"`
}

// Summarize computes the tables from the samples; failed samples count
// only as failures.
func (r *Report) Summarize() Summary {
	var s Summary
	values := map[string]map[string][]float64{SystemDC: {}, SystemDeployment: {}}
	var pod, container, rss []float64
	for _, smp := range r.Samples {
		if smp.Err != "" {
			s.Failed++
			continue
		}
		v := values[smp.System]
		if v == nil {
			continue
		}
		v["complete"] = append(v["complete"], smp.Complete)
		if smp.FirstPod > 0 {
			v["firstPod"] = append(v["firstPod"], smp.FirstPod)
		}
		if smp.System != SystemDC {
			continue
		}
		v["rest"] = append(v["rest"], smp.Complete-r.Settings.PrescribedPauseSeconds)
		if smp.InController {
			// No deployer pod: none of its parts, nor its memory.
			continue
		}
		v["running"] = append(v["running"], smp.DeployerRunning)
		v["done"] = append(v["done"], smp.DeployerDone)
		v["start"] = append(v["start"], smp.LogFirst-smp.DeployerRunning)
		v["strategy"] = append(v["strategy"], smp.LogLast-smp.LogFirst)
		v["exit"] = append(v["exit"], smp.DeployerExited-smp.LogLast)
		v["terminal"] = append(v["terminal"], smp.DeployerDone-smp.DeployerExited)
		v["after"] = append(v["after"], smp.Complete-smp.DeployerDone)
		if smp.DeployerPeak > 0 {
			pod = append(pod, mib(smp.DeployerPeak))
		}
		if smp.DeployerContainerPeak > 0 {
			container = append(container, mib(smp.DeployerContainerPeak))
		}
		if smp.DeployerRSS > 0 {
			rss = append(rss, mib(smp.DeployerRSS))
		}
	}
	// The rows' order is fixed: the targets read Rows[0] and Rows[1].
	s.Rows = []Row{
		row("trigger → deployer pod Running (s)", values[SystemDC]["running"], nil),
		row("trigger → Complete (s)", values[SystemDC]["complete"], values[SystemDeployment]["complete"]),
		row("trigger → first new pod (s)", values[SystemDC]["firstPod"], values[SystemDeployment]["firstPod"]),
	}
	mode := report.ModePod
	if r.Settings.Mode() == dcv1.DeployerModeControllerWhenPossible {
		mode = report.ModeController
	}
	s.Objective = measured(report.PoolObjective([]report.ObjectiveSamples{
		{Key: report.ObjectiveKey{Where: report.WhereNode, N: 1, Phase: report.PhaseChange, System: SystemDC, Mode: mode},
			FirstPod: values[SystemDC]["firstPod"], Complete: values[SystemDC]["complete"]},
		{Key: report.ObjectiveKey{Where: report.WhereNode, N: 1, Phase: report.PhaseChange, System: SystemDeployment},
			FirstPod: values[SystemDeployment]["firstPod"], Complete: values[SystemDeployment]["complete"]},
	}))
	s.Breakdown = []Row{
		row("trigger → deployer pod Running", values[SystemDC]["running"], nil),
		row("deployer pod Running → its first log line (process start)", values[SystemDC]["start"], nil),
		row("first → last log line (the strategy: scaling, readiness, pauses)", values[SystemDC]["strategy"], nil),
		row("last log line → container seen terminated (exit, the kubelet noticing)", values[SystemDC]["exit"], nil),
		row("container terminated → pod seen Succeeded (the kubelet stopping the pod)", values[SystemDC]["terminal"], nil),
		row("deployer pod Succeeded → Complete", values[SystemDC]["after"], nil),
	}
	s.PodPeakMiB, s.ContainerPeakMiB, s.RSSMiB = stats.Summarize(pod), stats.Summarize(container), stats.Summarize(rss)
	s.Rest = stats.Summarize(values[SystemDC]["rest"])
	s.RestMet, _, _ = report.IdleRestMet(s.Rest, s.Rows[1].Deployment, s.Rows[0].DC)
	s.RestWithinDeployment, _, _ = report.IdleRestMet(s.Rest, s.Rows[1].Deployment, stats.Summary{})
	return s
}

// measured keeps the objective rows that have samples: a system that ran
// no rollout is "not measured" in the table, not a row of dashes.
func measured(rows []report.Objective) []report.Objective {
	out := rows[:0]
	for _, r := range rows {
		if r.Complete.Count > 0 {
			out = append(out, r)
		}
	}
	return out
}

func row(measure string, dc, deployment []float64) Row {
	r := Row{Measure: measure, DC: stats.Summarize(dc), Deployment: stats.Summarize(deployment)}
	r.RatioP50 = stats.Ratio(r.DC.P50, r.Deployment.P50)
	r.RatioP99 = stats.Ratio(r.DC.P99, r.Deployment.P99)
	return r
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// WriteJSON saves the report with its summary.
func (r *Report) WriteJSON(path string) error {
	s := r.Summarize()
	data, err := json.MarshalIndent(struct {
		*Report
		Summary Summary `json:"summary"`
		// Objective repeats the summary's rows where report.ReadObjective
		// looks for them, as in the playground's report.
		Objective []report.Objective `json:"objective"`
	}{r, s, s.Objective}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// WriteMarkdown renders the report as bench/README.md describes it.
func (r *Report) WriteMarkdown(w io.Writer) error {
	s := r.Summarize()
	var b strings.Builder
	fmt.Fprintf(&b, "# Real node: DeploymentConfig vs Deployment, %s\n\n", r.Started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "%d rollouts of each, one at a time, on one real node (kubelet, containerd, real containers); %d replicas, Rolling. Ratio = DC / Deployment, measured in the same run. Run took %s.\n\n",
		r.Settings.Rollouts, r.Settings.Replicas, time.Duration(r.Duration*float64(time.Second)).Round(time.Second).String())
	fmt.Fprintf(&b, "Deployer mode: **%s** (%s).\n\n", r.Settings.Mode(), modeMeaning(r.Settings.Mode()))
	b.WriteString("## Rollout time\n\n")
	b.WriteString("| measure | DC p50 | DC p99 | Deployment p50 | Deployment p99 | ratio p50 | ratio p99 | samples DC / Deployment |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, row := range s.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %d / %d |\n", row.Measure,
			seconds(row.DC), p99(row.DC), seconds(row.Deployment), p99(row.Deployment),
			ratio(row.RatioP50), ratio(row.RatioP99), row.DC.Count, row.Deployment.Count)
	}
	inController := r.Settings.Mode() == dcv1.DeployerModeControllerWhenPossible
	writeBreakdown(&b, s, inController)
	fmt.Fprintf(&b, "\nThe DC's own settings (updatePeriodSeconds %d, intervalSeconds %d) make its deployer pause %.0f s in each rollout when every pod is ready at once: that much of its trigger → Complete is prescribed, not work.\n",
		r.Settings.UpdatePeriodSeconds, r.Settings.IntervalSeconds, r.Settings.PrescribedPauseSeconds)
	if s.Rest.Count > 0 && !inController {
		_, p50, p99 := report.IdleRestMet(s.Rest, s.Rows[1].Deployment, s.Rows[0].DC)
		fmt.Fprintf(&b, "\nThe full-cost target, as in the kwok report: the DC's trigger → Complete less the prescribed %.0f s (p50 %.2f s, p99 %.2f s) ≤ the Deployment's trigger → Complete + the deployer pod's start (trigger → Running): %.2f s, %.2f s. Met: %s.\n",
			r.Settings.PrescribedPauseSeconds, s.Rest.P50, s.Rest.P99, p50, p99, yesNo(s.RestMet))
	}
	if s.Rest.Count > 0 {
		dep := s.Rows[1].Deployment
		fmt.Fprintf(&b, "\nThe deployer-mode target (%s mode): the same rest (p50 %.2f s, p99 %.2f s) ≤ the Deployment's trigger → Complete alone: %.2f s, %.2f s. Met: %s.\n",
			r.Settings.Mode(), s.Rest.P50, s.Rest.P99, dep.P50, dep.P99, yesNo(s.RestWithinDeployment))
	}
	writeMemory(&b, s, inController)
	b.WriteString("\n## Objective: rollout latency\n\n" + report.ObjectiveDefinition + "\n\n" + report.ObjectiveTable(s.Objective, report.WhereNode))
	b.WriteString("\n## Every rollout\n\n| # | system | trigger → deployer Running (s) | trigger → deployer Succeeded (s) | trigger → first new pod (s) | trigger → Complete (s) | pod peak MiB | error |\n| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, smp := range r.Samples {
		running, done, peak, first := "", "", "", ""
		if smp.System == SystemDC && smp.Err == "" && !smp.InController {
			running = fmt.Sprintf("%.2f", smp.DeployerRunning)
			done = fmt.Sprintf("%.2f", smp.DeployerDone)
			peak = fmt.Sprintf("%.1f", mib(smp.DeployerPeak))
		}
		if smp.FirstPod > 0 {
			first = fmt.Sprintf("%.2f", smp.FirstPod)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %.2f | %s | %s |\n", smp.Iteration, smp.System, running, done, first, smp.Complete, peak, smp.Err)
	}
	writeSettings(&b, r)
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// modeMeaning says what the deployer mode means for the DC's rollouts.
func modeMeaning(mode string) string {
	if mode == dcv1.DeployerModeControllerWhenPossible {
		return "dc-controller ran each DC rollout itself, with no deployer pod; every sample checked that none was created and that the RC's progress record names the controller as its runner"
	}
	return "each DC rollout ran in a deployer pod, dc-controller's default"
}

// writeBreakdown splits the DC's time at its deployer pod's milestones,
// when it had one.
func writeBreakdown(b *strings.Builder, s Summary, inController bool) {
	if inController {
		b.WriteString("\nNo deployer pod to split the DC's time at: its rollouts ran in dc-controller, and trigger → Complete is all there is.\n")
		return
	}
	b.WriteString("\nWhere the DC's time goes (seconds; each part's percentiles are its own, so they need not add up):\n\n| part | p50 | p99 |\n| --- | ---: | ---: |\n")
	for _, row := range s.Breakdown {
		fmt.Fprintf(b, "| %s | %s | %s |\n", row.Measure, seconds(row.DC), p99(row.DC))
	}
}

// writeMemory is the deployer pod's memory, when there were pods.
func writeMemory(b *strings.Builder, s Summary, inController bool) {
	b.WriteString("\n## Deployer pod memory (DeploymentConfig only)\n\n")
	if inController {
		b.WriteString("None: no deployer pod ran. dc-controller's own memory is what the rollouts cost here (see the kwok report's in-flight section).\n")
		return
	}
	b.WriteString("| cgroup v1 figure | p50 MiB | max MiB | samples |\n| --- | ---: | ---: | ---: |\n")
	for _, m := range []struct {
		name string
		s    stats.Summary
	}{
		{"pod peak (memory.max_usage_in_bytes of the pod: deployer + pause, page cache included)", s.PodPeakMiB},
		{"deployer container peak (its own memory.max_usage_in_bytes)", s.ContainerPeakMiB},
		{"deployer container RSS, largest sampled (memory.stat total_rss)", s.RSSMiB},
	} {
		fmt.Fprintf(b, "| %s | %s | %s | %d |\n", m.name, mib2(m.s.P50, m.s.Count), mib2(m.s.Max, m.s.Count), m.s.Count)
	}
}

// writeSettings is the settings table: everything needed to repeat the run.
func writeSettings(b *strings.Builder, r *Report) {
	st, m, v := r.Settings, r.Machine, r.Versions
	b.WriteString("\n## Settings\n\n| setting | value |\n| --- | --- |\n")
	rows := [][2]string{
		{"machine", fmt.Sprintf("%d cores, %.1f GiB, %s, %s", m.Cores, float64(m.MemoryBytes)/(1<<30), m.CPUModel, m.OS)},
		{"kernel", v.Kernel},
		{"Kubernetes (API server, kubelet)", v.Kubernetes + ", kubelet " + v.Kubelet},
		{"container runtime", v.Runtime},
		{"deployconfig", v.Deployconfig},
		{"Go", v.Go},
		{"rollouts per system", fmt.Sprint(st.Rollouts)},
		{"replicas", fmt.Sprint(st.Replicas)},
		{"strategy", fmt.Sprintf("Rolling, maxSurge %s, maxUnavailable %s (both); DC: updatePeriodSeconds %d, intervalSeconds %d", st.MaxSurge, st.MaxUnavailable, st.UpdatePeriodSeconds, st.IntervalSeconds)},
		{"readiness probe", fmt.Sprintf("HTTP GET /readyz, periodSeconds %d", st.ReadinessPeriod)},
		{"change per rollout", st.Change},
		{"order", st.Order},
		{"application image", st.ApplicationImage},
		{"deployer image", st.DeployerImage},
		{"dc-controller", fmt.Sprintf("%d pods from config/default", st.ControllerReplicas)},
		{"deployer mode", fmt.Sprintf("%s (dc-controller's --deployer-mode)", st.Mode())},
		{"memory sampling", fmt.Sprintf("every %d ms from the deployer pod's creation to the rollout's end", st.MemorySampleMillis)},
	}
	for _, row := range rows {
		fmt.Fprintf(b, "| %s | %s |\n", row[0], row[1])
	}
}

// seconds formats a p50, "–" when there are no samples.
func seconds(s stats.Summary) string {
	if s.Count == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", s.P50)
}

func p99(s stats.Summary) string {
	if s.Count == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", s.P99)
}

func ratio(v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

func mib2(v float64, count int) string {
	if count == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", v)
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "**no**"
}
