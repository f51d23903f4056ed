package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/bench/internal/bench/stats"
)

// WriteMarkdown renders the report; chart is the file name of its PNG
// chart ("" for none). bench/README.md explains how to read it.
func WriteMarkdown(w io.Writer, r *Report, chart string) error {
	var b strings.Builder
	writeHeader(&b, r, chart)
	writeTargets(&b, r)
	writeObjective(&b, r)
	writeThroughput(&b, r)
	writeControlPlaneCPU(&b, r)
	writeAPICost(&b, r)
	writeLatency(&b, r)
	writeCriticalPath(&b, r)
	writeHostile(&b, r)
	writeInFlight(&b, r)
	writeFanOut(&b, r)
	writeBeforeAfter(&b, r)
	writeFootprint(&b, r)
	writeReference(&b, r)
	writeSettings(&b, r)
	writeNotes(&b, r)
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

func writeHeader(b *strings.Builder, r *Report, chart string) {
	fmt.Fprintf(b, "# deployconfig benchmark, %s\n\n", r.Started.UTC().Format("2006-01-02 15:04 MST"))
	m := r.Machine
	fmt.Fprintf(b, "Machine: %d cores (%s), %s memory, %s, kernel %s. Run took %.0f min.\n\n",
		m.Cores, orDash(m.CPUModel), gib(m.MemoryBytes), m.OS, orDash(m.Kernel), r.Duration/60)
	v := r.Versions
	fmt.Fprintf(b, "Versions: deployconfig %s, Kubernetes %s (kube-apiserver, kube-controller-manager, kube-scheduler), etcd %s, kwok %s, controller-runtime %s, %s.\n\n",
		orDash(v.Deployconfig), orDash(v.Kubernetes), orDash(v.Etcd), orDash(v.Kwok), orDash(v.ControllerRun), orDash(v.Go))
	if r.Settings.Quick {
		b.WriteString("**Quick run** (--quick): small sizes, for checking the benchmark itself; not comparable with the targets.\n\n")
	}
	if chart != "" {
		fmt.Fprintf(b, "![rollouts completed over time](%s)\n\n", chart)
	}
}

func writeTargets(b *strings.Builder, r *Report) {
	b.WriteString("## Targets\n\n| target | want | measured | met |\n| --- | --- | --- | --- |\n")
	for _, t := range r.Targets {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", t.Name, t.Want, t.Got, metWord(t.Met))
	}
	b.WriteString("\n")
}

func writeThroughput(b *strings.Builder, r *Report) {
	if len(r.Throughput) == 0 {
		return
	}
	b.WriteString("## 1. Rollout throughput\n\n")
	b.WriteString("Wall time from the first create (or template change) to the last rollout's completion. Ratio = DC / Deployment; below 1 means DeploymentConfigs finished first. " +
		"Each repeat runs both systems one after the other; which goes first alternates from one repeat to the next.\n\n")
	b.WriteString("| N | phase | DC mode | repeat (first) | DC | Deployment | ratio | DC trigger→complete p50 / p99 | Deployment p50 / p99 | failed (DC / Deployment) |\n")
	b.WriteString("| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, t := range r.Throughput {
		fmt.Fprintf(b, "| %d | %s | %s | %s | %.1f s | %.1f s | **%.2f** | %.1f / %.1f s | %.1f / %.1f s | %d / %d |\n",
			t.N, t.Phase, orDash(t.Mode), repeatLabel(t.Repeat, t.First), t.DC.Seconds, t.Deployment.Seconds, t.Ratio,
			t.DC.Complete.P50, t.DC.Complete.P99, t.Deployment.Complete.P50, t.Deployment.Complete.P99,
			t.DC.Failed, t.Deployment.Failed)
	}
	b.WriteString("\n")
	if len(r.Spreads) == 0 {
		return
	}
	b.WriteString("Over the repeats (min / median / max; the targets read the median):\n\n")
	b.WriteString("| N | phase | DC mode | repeats | order (first system per repeat) | DC s | Deployment s | ratio |\n")
	b.WriteString("| ---: | --- | --- | ---: | --- | ---: | ---: | ---: |\n")
	for _, s := range r.Spreads {
		fmt.Fprintf(b, "| %d | %s | %s | %d | %s | %s | %s | %s |\n", s.N, s.Phase, orDash(s.Mode), s.Repeats, orders(s.First),
			spread(s.DC, "%.1f"), spread(s.Deployment, "%.1f"), spread(s.Ratio, "%.2f"))
	}
	b.WriteString("\n")
}

// writeControlPlaneCPU reports what each phase's rollouts cost the
// cluster's own processes: where they share a machine, a system that costs
// the API server more is slower once the CPU runs short, whatever its
// writes.
func writeControlPlaneCPU(b *strings.Builder, r *Report) {
	rows := 0
	for _, t := range r.Throughput {
		if t.DC.ControlPlaneCPU != nil && t.Deployment.ControlPlaneCPU != nil {
			rows++
		}
	}
	if rows == 0 {
		return
	}
	b.WriteString("### Control-plane CPU per rollout\n\n")
	fmt.Fprintf(b, "CPU milliseconds of %s per rollout, from each phase's start until it settled, divided by its rollouts (N and its %d probes). Ratio = DC / Deployment, for the API server.\n\n",
		strings.Join(ControlPlaneProcesses, ", "), r.Settings.Probes)
	b.WriteString("| N | phase | DC mode | repeat (first) | DC: " + strings.Join(ControlPlaneProcesses, " / ") + " | Deployment | API server ratio |\n")
	b.WriteString("| ---: | --- | --- | --- | ---: | ---: | ---: |\n")
	for _, t := range r.Throughput {
		if t.DC.ControlPlaneCPU == nil || t.Deployment.ControlPlaneCPU == nil {
			continue
		}
		dc, dep := cpuPerRollout(t.DC, t.N+r.Settings.Probes), cpuPerRollout(t.Deployment, t.N+r.Settings.Probes)
		ratio := "—"
		if d := dep[0]; d > 0 {
			ratio = fmt.Sprintf("**%.2f**", dc[0]/d)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s |\n", t.N, t.Phase, orDash(t.Mode), repeatLabel(t.Repeat, t.First), msList(dc), msList(dep), ratio)
	}
	b.WriteString("\n")
}

// cpuPerRollout is a run's CPU milliseconds per rollout of each
// control-plane process, in ControlPlaneProcesses' order.
func cpuPerRollout(run Run, rollouts int) []float64 {
	out := make([]float64, len(ControlPlaneProcesses))
	for i, name := range ControlPlaneProcesses {
		out[i] = 1000 * run.ControlPlaneCPU[name] / float64(max(rollouts, 1))
	}
	return out
}

// msList formats milliseconds as "a / b / c".
func msList(ms []float64) string {
	parts := make([]string, len(ms))
	for i, v := range ms {
		parts[i] = fmt.Sprintf("%.0f", v)
	}
	return strings.Join(parts, " / ")
}

// repeatLabel names a repeat and the system that went first in it.
func repeatLabel(repeat int, first string) string {
	if repeat == 0 {
		return "—"
	}
	return fmt.Sprintf("%d (%s first)", repeat, shortSystem(first))
}

// shortSystem abbreviates a system's name for narrow columns.
func shortSystem(s string) string {
	if s == SystemDC {
		return "DC"
	}
	return s
}

// systemLabel names a row's system with a DC's deployer mode, e.g.
// "DeploymentConfig (controller)".
func systemLabel(system, mode string) string {
	if system != SystemDC || mode == "" {
		return system
	}
	return system + " (" + mode + ")"
}

// orders lists the first system of each repeat.
func orders(first []string) string {
	parts := make([]string, len(first))
	for i, f := range first {
		parts[i] = fmt.Sprintf("%d: %s", i+1, shortSystem(f))
	}
	return strings.Join(parts, ", ")
}

// spread formats a min / median / max.
func spread(s stats.Spread, format string) string {
	if s.Count == 0 {
		return "—"
	}
	return fmt.Sprintf(format+" / "+format+" / "+format, s.Min, s.Median, s.Max)
}

func writeAPICost(b *strings.Builder, r *Report) {
	if len(r.APICost) == 0 {
		return
	}
	pooled := PoolCosts(r.APICost)
	b.WriteString("## 2. API cost (audit log)\n\n")
	b.WriteString("Writes (create, update, patch, delete) per rollout in the scenario's namespace, by actor; from the API server's audit log, over all repeats. " +
		"Columns: objects (workload objects, status and scale), app pods (create, binding, status, delete of the application's pods), " +
		"deployer pods (their create, binding, status, their kubelet's writes), events. Conflicts (409) are counted in the writes and shown apart. " +
		"**Writes of the rollout** (the targets' measure) are all of them but the app pods'.\n\n")
	b.WriteString("| N | phase | system | repeats | writes of the rollout / rollout | ratio DC/Deployment | excl. all pods | excl. pods and events | all writes/rollout |\n")
	b.WriteString("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range pooled {
		t := c.Totals()
		ratio := "—"
		if c.System == SystemDC {
			if dep, ok := findPooled(pooled, c.N, c.Phase, SystemDeployment); ok && dep.RolloutWrites() > 0 {
				ratio = fmt.Sprintf("**%.2f**", c.RolloutWrites()/dep.RolloutWrites())
			}
		}
		fmt.Fprintf(b, "| %d | %s | %s | %d | %.2f | %s | %.2f | %.2f | %.2f |\n", c.N, c.Phase, systemLabel(c.System, c.Mode), c.Repeats,
			c.RolloutWrites(), ratio, c.WritesExclPods(), c.PerRollout(t.Objects), c.PerRollout(t.Writes()))
	}
	b.WriteString("\n")
	if len(r.WriteSpreads) > 0 {
		b.WriteString("Writes of the rollout per rollout over the repeats (min / median / max):\n\n")
		b.WriteString("| N | phase | DC mode | DC | Deployment | ratio |\n| ---: | --- | --- | ---: | ---: | ---: |\n")
		for _, w := range r.WriteSpreads {
			fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s |\n", w.N, w.Phase, orDash(w.Mode), spread(w.DC, "%.2f"), spread(w.Deployment, "%.2f"), spread(w.Ratio, "%.2f"))
		}
		b.WriteString("\n")
	}
	for _, c := range pooled {
		fmt.Fprintf(b, "### %s, %s, N=%d (per rollout)\n\n", systemLabel(c.System, c.Mode), c.Phase, c.N)
		b.WriteString("| actor | objects | app pods | deployer pods | events | total | conflicts | reads | top writes (total) |\n")
		b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
		for _, a := range c.Actors {
			if a.Writes() == 0 && a.Reads == 0 {
				continue
			}
			fmt.Fprintf(b, "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s |\n", a.Actor,
				c.PerRollout(a.Objects), c.PerRollout(a.AppPods), c.PerRollout(a.DeployerPods), c.PerRollout(a.Events),
				c.PerRollout(a.Writes()), c.PerRollout(a.Conflicts), c.PerRollout(a.Reads), topWrites(a, 4))
		}
		b.WriteString("\n")
		writePurposes(b, c)
	}
}

// findPooled returns one system's pooled cost of a phase.
func findPooled(pooled []APICost, n int, phase, system string) (APICost, bool) {
	i := slices.IndexFunc(pooled, func(c APICost) bool { return c.N == n && c.Phase == phase && c.System == system })
	if i < 0 {
		return APICost{}, false
	}
	return pooled[i], true
}

// writePurposes lists every write of the rollout (all but the app pods')
// by actor, verb and resource, with what it is for.
func writePurposes(b *strings.Builder, c APICost) {
	b.WriteString("Writes of the rollout, what each is for:\n\n")
	b.WriteString("| actor | verb | resource | per rollout | purpose |\n| --- | --- | --- | ---: | --- |\n")
	for _, a := range c.Actors {
		for _, key := range slices.Sorted(maps.Keys(a.RolloutWrites)) {
			resource, verb := splitKey(key)
			purpose := audit.Purpose(a.Actor, key)
			if purpose == "" {
				purpose = "(unexpected: not a write of this benchmark's rollouts)"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %.2f | %s |\n", a.Actor, verb, resource, c.PerRollout(a.RolloutWrites[key]), purpose)
		}
	}
	b.WriteString("\n")
}

// splitKey splits a WriteKey into its resource (with the deployer pod mark)
// and its verb.
func splitKey(key string) (resource, verb string) {
	mark := ""
	if k, ok := strings.CutSuffix(key, audit.DeployerPodMark); ok {
		key, mark = k, audit.DeployerPodMark
	}
	resource, verb, _ = strings.Cut(key, " ")
	return resource + mark, verb
}

// topWrites lists an actor's most frequent writes.
func topWrites(a audit.ActorCount, n int) string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range a.ByResource {
		all = append(all, kv{k, v})
	}
	// Largest first, then by name, so that the report is stable.
	slices.SortFunc(all, func(x, y kv) int {
		if x.v != y.v {
			return y.v - x.v
		}
		return strings.Compare(x.k, y.k)
	})
	var parts []string
	for i := 0; i < len(all) && i < n; i++ {
		parts = append(parts, fmt.Sprintf("%s %d", all[i].k, all[i].v))
	}
	return strings.Join(parts, ", ")
}

func writeLatency(b *strings.Builder, r *Report) {
	if len(r.Latency) == 0 {
		return
	}
	b.WriteString("## 3. Latency\n\n")
	b.WriteString("From the trigger (the write that changed the template, or created the object) to the deployer pod's creation, to the first pod of the new version the watch saw (a DC's pod of the new RC, a Deployment's of the new ReplicaSet) and to the rollout's completion, in seconds (nearest-rank percentiles). " +
		"\"triggered at once\": the throughput phases, all N triggered together, so the last waits for the writes of all before it. " +
		"\"probes while N in flight\": objects of their own whose templates were changed one at a time once the phase's N rollouts had all started; the target is read from these.\n\n")
	b.WriteString("| system | load | samples | → deployer pod p50 / p90 / p99 / max | → first new pod p50 / p90 / p99 / max | → complete p50 / p90 / p99 / max |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: |\n")
	for _, l := range r.Latency {
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s |\n", systemLabel(l.System, l.Mode), l.Load, l.ToComplete.Count, summary(l.ToDeployerPod), summary(l.ToFirstPod), summary(l.ToComplete))
	}
	b.WriteString("\n")
	writeIdleSplit(b, r)
}

// writeIdleSplit splits the idle rollouts' time into what the DC's own
// settings prescribe and the rest.
func writeIdleSplit(b *strings.Builder, r *Report) {
	var rows []Latency
	for _, l := range r.Latency {
		if l.IsIdle() && l.ToComplete.Count > 0 {
			rows = append(rows, l)
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("One rollout at a time on an idle cluster, split: *prescribed* is what the DC's own settings make its deployer sleep " +
		"(updatePeriodSeconds after each scale-up, intervalSeconds between steps); *rest* is trigger → complete less that; " +
		"*deployer pod start* is trigger → the first status its kubelet wrote. Target: rest ≤ the Deployment's trigger → complete + the deployer pod's start.\n\n")
	b.WriteString("| system | rollouts | trigger → complete p50 / p99 | prescribed | rest p50 / p99 | deployer pod start p50 / p99 |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, l := range rows {
		rest, start := "—", "—"
		if l.Rest.Count > 0 {
			rest = fmt.Sprintf("%.2f / %.2f s", l.Rest.P50, l.Rest.P99)
		}
		if l.ToDeployerStart.Count > 0 {
			start = fmt.Sprintf("%.2f / %.2f s", l.ToDeployerStart.P50, l.ToDeployerStart.P99)
		}
		fmt.Fprintf(b, "| %s | %d | %.2f / %.2f s | %.1f s | %s | %s |\n", l.System, l.ToComplete.Count,
			l.ToComplete.P50, l.ToComplete.P99, l.PrescribedSeconds, rest, start)
	}
	b.WriteString("\n")
}

// summary formats the percentiles of a latency summary.
func summary(s stats.Summary) string {
	if s.Count == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f / %.2f / %.2f / %.2f", s.P50, s.P90, s.P99, s.Max)
}

// rssSplit is the resident set at the end, split into the process's own
// pages and those of files it maps (its executable), where known.
func rssSplit(u procstat.Usage) string {
	if u.AnonBytes+u.FileBytes == 0 {
		return MB(u.RSSBytes)
	}
	return fmt.Sprintf("%s: %s + %s", MB(u.RSSBytes), MB(u.AnonBytes), MB(u.FileBytes))
}

func writeFootprint(b *strings.Builder, r *Report) {
	if len(r.Footprint) == 0 && r.Controller == nil {
		return
	}
	b.WriteString("## 4. dc-controller footprint\n\n")
	if len(r.Footprint) > 0 {
		b.WriteString("dc-controller as its own process, started on a cluster that already holds the DCs, each with its revisions (RCs with the encoded DC) and their deployer pods; measured once its queues were empty and it had settled.\n\n")
		b.WriteString("| DCs | DC mode | revisions | RCs | deployer pods | peak RSS (VmHWM) | RSS at end: anonymous + file | Go heap in use | CPU s | sync s | writes while syncing | RSS per DC | marginal RSS per DC |\n")
		b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
		for i, f := range r.Footprint {
			marginal := "—"
			if prev := previousFootprint(r.Footprint[:i], f.Mode); prev != nil {
				if d := f.DCs - prev.DCs; d > 0 {
					marginal = fmt.Sprintf("%.1f KB", (float64(f.Usage.PeakRSSBytes)-float64(prev.Usage.PeakRSSBytes))/float64(d)/1024)
				}
			}
			fmt.Fprintf(b, "| %d | %s | %d | %d | %d | %s | %s | %s | %.1f | %.0f | %d | %.1f KB | %s |\n", f.DCs, ModeOrPod(f.Mode), f.Revisions, f.RCs, f.DeployerPods,
				MB(f.Usage.PeakRSSBytes), rssSplit(f.Usage), MB(f.HeapBytes), f.Usage.CPUSeconds, f.SyncSeconds, f.Writes,
				float64(f.Usage.PeakRSSBytes)/float64(max(f.DCs, 1))/1024, marginal)
		}
		b.WriteString("\n")
		for _, f := range r.Footprint {
			if f.Writes > 0 {
				fmt.Fprintf(b, "- %d DCs, %s mode: dc-controller's writes while syncing: %s.\n", f.DCs, ModeOrPod(f.Mode), topWrites(f.WriteKinds, 6))
			}
		}
		have := 0
		for _, f := range r.Footprint {
			if f.Created == 0 {
				continue
			}
			fmt.Fprintf(b, "- %d DCs: pod templates cycled from %d of the compat corpus, %d replicas each; the %d DCs added to reach this size keep %d revisions each; dc-bench made %d objects (and status writes) in %.0f s, **%.0f/s**, with %d client(s), each rate-limited on its own.\n",
				f.DCs, f.Templates, f.Replicas, f.DCs-have, f.Revisions, f.Created, f.CreateSeconds, stats.Ratio(float64(f.Created), f.CreateSeconds), f.Clients)
			have = f.DCs
		}
		if f := r.Footprint[0]; f.LogBytes > 0 {
			fmt.Fprintf(b, "- Each DC's latest RC carries a %d-byte in-controller log, as a rollout run by dc-controller leaves it; both modes' readings are over these same objects.\n", f.LogBytes)
		}
		b.WriteString("\n")
	}
	if c := r.Controller; c != nil {
		fmt.Fprintf(b, "During the rollout scenarios (one dc-controller process for all of them): peak RSS %s, CPU %.1f s.\n\n", MB(c.PeakRSSBytes), c.CPUSeconds)
	}
}

// previousFootprint is the last reading in earlier of the same mode: the
// size the marginal cost of a DC is counted from.
func previousFootprint(earlier []Footprint, mode string) *Footprint {
	for i := len(earlier) - 1; i >= 0; i-- {
		if earlier[i].Mode == mode {
			return &earlier[i]
		}
	}
	return nil
}

func writeReference(b *strings.Builder, r *Report) {
	ref := r.Reference
	if ref == nil {
		return
	}
	b.WriteString("## 5. Physical reference\n\n")
	if ref.RCCreates > 0 {
		fmt.Fprintf(b, "Raw write throughput: %d RC creates (0 replicas) from %d concurrent clients without rate limit took %.1f s: **%.0f creates/s**.\n\n",
			ref.RCCreates, ref.Concurrency, ref.Seconds, ref.PerSecond)
	}
	if len(ref.Floors) == 0 {
		return
	}
	b.WriteString("Floor set by kube-controller-manager's RC (or RS) manager: the pod creates and deletes a phase needs ÷ its client QPS. " +
		"The RC manager's measured writes include its RC status updates, which share that QPS. floor/measured near 1 means the system is as fast as that manager lets any rollout be. " +
		"The pod writes needed include those of the probes that ran during the phase (a template change each).\n\n")
	b.WriteString("| N | phase | pod writes needed | QPS | floor | RC manager's writes (DC run) | DC time | floor/DC | Deployment time | floor/Deployment |\n")
	b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, f := range ref.Floors {
		fmt.Fprintf(b, "| %d | %s | %d | %.0f | %.0f s | %d | %.0f s | %.2f | %.0f s | %.2f |\n", f.N, f.Phase, f.PodWrites, f.QPS, f.Seconds,
			f.RCManagerWrites, f.DCSeconds, stats.Ratio(f.Seconds, f.DCSeconds), f.DeploySeconds, stats.Ratio(f.Seconds, f.DeploySeconds))
	}
	b.WriteString("\n")
}

func writeSettings(b *strings.Builder, r *Report) {
	s := r.Settings
	b.WriteString("## Settings\n\n")
	rows := [][2]string{
		{"sizes (N)", ints(s.Sizes)},
		{"repeats", fmt.Sprintf("%d per size, the system that goes first alternating (odd repeats DC first)", s.Repeat)},
		{"replicas per DC / Deployment", fmt.Sprint(s.Replicas)},
		{"strategy (both)", s.Strategy},
		{"fake (kwok) nodes", fmt.Sprint(s.Nodes)},
		{"dc-controller client", fmt.Sprintf("QPS %.0f, burst %d for each of its DC and deployer controllers (a client and one rate limiter each, as each kube-controller-manager controller has), %d workers per controller", s.ControllerQPS, s.ControllerBurst, s.ControllerWorkers)},
		{"dc-controller GC", s.ControllerGOGC},
		{"each deployer's client", fmt.Sprintf("QPS %.0f, burst %d (client-go defaults, as dc-deploy in a deployer pod)", s.DeployerQPS, s.DeployerBurst)},
		{"pod runtime (kubelet of deployer pods)", runtimeSetting(s)},
		{"DC deployer modes", modesSetting(s)},
		{"kube-controller-manager", fmt.Sprintf("QPS %.0f, burst %d (%s); %s", s.KCMQPS, s.KCMBurst, kcmClientOrigin(s.KCMDefaults), s.KCMConcurrency)},
		{"dc-bench's own client", fmt.Sprintf("QPS %.0f", s.BenchQPS)},
		{"latency at idle", fmt.Sprintf("%d rollouts, one at a time", s.LatencySamples)},
		{"probes", probeSetting(s)},
		{"hostile", hostileSetting(s)},
		{"fan-out", fanOutSetting(s)},
		{"footprint", fmt.Sprintf("%s DCs × %s revisions (one value: every DC; one per size: the DCs added to reach it)", ints(s.FootprintSizes), ints(s.FootprintRevisions))},
		{"raw RC creates", fmt.Sprintf("%d with %d concurrent clients", s.RawCreates, s.RawConcurrency)},
		{"audit", s.Audit},
	}
	b.WriteString("| setting | value |\n| --- | --- |\n")
	for _, row := range rows {
		fmt.Fprintf(b, "| %s | %s |\n", row[0], row[1])
	}
	b.WriteString("\n")
}

// fanOutSetting describes the fan-out scenario's DCs.
func fanOutSetting(s Settings) string {
	if len(s.FanOutSizes) == 0 {
		return "not run"
	}
	return fmt.Sprintf("%s DCs of one replica following one ConfigMap (the replicas above do not apply), each case with a dc-controller of its own; reconciles counted %.0f s under a freeze", ints(s.FanOutSizes), s.FanOutHold)
}

// hostileSetting describes the hostile scenario's rollouts.
func hostileSetting(s Settings) string {
	if s.HostileRollouts == 0 {
		return "not run"
	}
	return fmt.Sprintf("%d rollouts one at a time without, then %d with six hostile DCs in another namespace", s.HostileRollouts, s.HostileRollouts)
}

// probeSetting describes the probes of the throughput phases.
func probeSetting(s Settings) string {
	if s.Probes == 0 {
		return "none"
	}
	return fmt.Sprintf("%d per throughput phase and system, one every %.1f s once the phase's rollouts have all started: template changes of objects rolled out beforehand, in a namespace of their own", s.Probes, s.ProbeInterval)
}

func writeNotes(b *strings.Builder, r *Report) {
	if len(r.Notes) == 0 {
		return
	}
	b.WriteString("## Notes\n\n")
	for _, n := range r.Notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
	b.WriteString("\n")
}

func metWord(met *bool) string {
	switch {
	case met == nil:
		return "—"
	case *met:
		return "yes"
	default:
		return "**no**"
	}
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func gib(b uint64) string {
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

func ints(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}

// kcmClientOrigin says where kube-controller-manager's client settings
// came from.
func kcmClientOrigin(defaults bool) string {
	if defaults {
		return "its defaults"
	}
	return "raised by dc-bench's --kcm-qps/--kcm-burst, for both systems alike"
}
