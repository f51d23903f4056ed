// Command dc-bench benchmarks deployconfig against the Kubernetes
// Deployment controller on a playground cluster and, with the
// node scenario, on a real node (bench/internal/bench/nodebench), and
// writes the reports to bench/results; bench/README.md explains how to
// read them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/deployconfig/deployconfig/bench/internal/bench"
	"github.com/deployconfig/deployconfig/bench/internal/bench/nodebench"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
)

// scenarioNode is the real-node scenario, which nodebench runs on a
// cluster of its own after the kwok scenarios.
const scenarioNode = "node"

// config is what the command line asks for: the kwok scenarios' options
// and, when the node scenario is asked for, its options.
type config struct {
	kwok bench.Options
	node *nodebench.Options
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "dc-bench: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) > 1 && os.Args[1] == objectiveCommand {
		return objective(os.Stdout, os.Args[2:])
	}
	if len(os.Args) > 1 && os.Args[1] == renderCommand {
		return render(os.Args[2:])
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		return err
	}
	o := cfg.kwok
	if o.ProfileDir == "" {
		// dc-bench's own controller-runtime client logs nothing worth
		// showing; with --profile the in-process controller sets its logger.
		ctrllog.SetLogger(logr.Discard())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var kwokErr error
	if len(o.Scenarios) > 0 {
		var out bench.Outputs
		_, out, kwokErr = bench.Run(ctx, o)
		if out.Markdown != "" {
			fmt.Printf("Report: %s\nData:   %s\nChart:  %s\n", out.Markdown, out.JSON, out.Chart)
		}
	}
	if cfg.node == nil || ctx.Err() != nil {
		return kwokErr
	}
	out, err := nodebench.Run(ctx, *cfg.node)
	if out.Markdown != "" {
		fmt.Printf("Node report: %s\nNode data:   %s\n", out.Markdown, out.JSON)
	}
	return errors.Join(kwokErr, err)
}

// objectiveCommand is dc-bench's one subcommand: `dc-bench objective
// REPORT.json...` prints the rollout latency objective's table from saved
// reports, the playground's and the real node's, a later file's row
// replacing an earlier one's, so that docs/scaling.md can show the short
// runs of the default bench beside the run of record at N=1000.
const objectiveCommand = "objective"

// renderCommand is `dc-bench render REPORT.json...`: each saved report's
// Markdown written again beside it, with this build's targets and tables,
// so that a run of record made before a target was added or changed
// says whether it is met, with no second run of hours.
const renderCommand = "render"

// render rewrites the Markdown of each saved report in args.
func render(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: dc-bench %s REPORT.json... (writes REPORT.md beside each)", renderCommand)
	}
	for _, path := range args {
		out, err := bench.Render(path)
		if err != nil {
			return err
		}
		fmt.Printf("Report: %s\n", out)
	}
	return nil
}

// objective prints the objective's table merged from the reports in args.
func objective(w io.Writer, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: dc-bench %s REPORT.json... (later files' rows replace earlier ones')", objectiveCommand)
	}
	lists := make([][]report.Objective, 0, len(args))
	for _, path := range args {
		rows, err := report.ReadObjective(path)
		if err != nil {
			return err
		}
		lists = append(lists, rows)
	}
	_, err := fmt.Fprintf(w, "%s\n\n%s", report.ObjectiveDefinition, report.ObjectiveTable(report.MergeObjective(lists...), report.WhereKwok, report.WhereNode))
	return err
}

// parseFlags turns the command line into benchmark options.
func parseFlags(args []string) (config, error) {
	o := bench.DefaultOptions()
	nodeOpts := nodebench.DefaultOptions()
	fs := flag.NewFlagSet("dc-bench", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "smoke run: N=20, small footprint sizes; finishes in a few minutes")
	root := fs.String("root", ".", "the deployconfig checkout (config/crd/bases)")
	bin := fs.String("bin", "", "directory of the cluster's binaries and dc-controller (default: ROOT/bin)")
	fs.StringVar(&o.OutDir, "out", "", "where the report goes (default: ROOT/bench/results)")
	fs.StringVar(&o.Name, "name", o.Name, "name of the benchmark's kwok cluster (replaced if it exists)")
	fs.StringVar(&o.Workdir, "workdir", "", "kwokctl's working directory (default: $KWOK_WORKDIR or ~/.kwok)")
	fs.BoolVar(&o.Keep, "keep", false, "leave the cluster running afterwards")
	scenarios := fs.String("scenarios", strings.Join(append(bench.AllScenarios(), scenarioNode), ","), "scenarios to run, comma-separated ("+scenarioNode+": on a real node, as root; "+bench.ScenarioHostile+": six hostile DCs against an ordinary one's rollouts, only when named; "+bench.ScenarioInFlight+": what N rollouts in flight cost dc-controller in each deployer mode, only when named; "+bench.ScenarioFanOut+": one ConfigMap change of N DCs without and with a RolloutPolicy, only when named)")
	fs.IntVar(&nodeOpts.Rollouts, "node-rollouts", nodeOpts.Rollouts, "measured rollouts of each system in the node scenario")
	fs.StringVar(&nodeOpts.DeployerMode, "node-deployer-mode", nodeOpts.DeployerMode, "dc-controller's --deployer-mode in the node scenario: pod (its default, a deployer pod per rollout) or controller-when-possible (the DC's rollouts run in dc-controller)")
	systems := fs.String("systems", "", "limit the rollout scenarios to DeploymentConfig or Deployment (default both)")
	dcModes := fs.String("dc-modes", bench.ModePod+","+bench.ModeController, "deployer modes the throughput scenario runs DeploymentConfigs in, comma-separated: "+bench.ModePod+" (dc-controller --deployer-mode=pod) and/or "+bench.ModeController+" (--deployer-mode=controller-when-possible); each runs alongside the Deployment in every repeat, the order rotating; latency and hostile use the first")
	fs.StringVar(&o.Label, "label", "", "add this to the output files' names (<date>-<label>.*)")
	sizes := fs.String("sizes", joinInts(o.Sizes), "N of the throughput scenario, comma-separated")
	repeat := fs.Int("repeat", o.Repeat, "runs of each size; the system that goes first alternates (--quick: 2)")
	fs.Func("replicas", fmt.Sprintf("replicas of each DC and Deployment (default %d)", o.Replicas), func(s string) error {
		n, err := strconv.ParseInt(s, 10, 32)
		o.Replicas = int32(n)
		return err
	})
	fs.IntVar(&o.Nodes, "nodes", o.Nodes, "fake (kwok) nodes")
	fs.IntVar(&o.LatencySamples, "latency-samples", o.LatencySamples, "rollouts one at a time for the latency at idle")
	hostile := fs.Int("hostile-rollouts", o.HostileRollouts, "rollouts one at a time of each block (without, with the hostile DCs) of the hostile scenario (--quick: 5)")
	inFlight := fs.String("inflight-sizes", joinInts(o.InFlightSizes), "rollouts held in flight at once by the "+bench.ScenarioInFlight+" scenario, in each deployer mode, comma-separated (--quick: 50)")
	fanOut := fs.String("fanout-sizes", joinInts(o.FanOutSizes), "DCs following one ConfigMap in the "+bench.ScenarioFanOut+" scenario, comma-separated (--quick: 50)")
	holdWindow := fs.Duration("fanout-hold", o.HoldWindow, "how long the "+bench.ScenarioFanOut+" scenario counts reconciles while a freeze holds every DC in line (--quick: 20s)")
	fs.StringVar(&o.BaselineBin, "baseline-bin", "", "directory with kubectl-dc and dc-controller built from the baseline commit, measured as \"before\" by the "+bench.ScenarioDashboard+" and "+bench.ScenarioLogCache+" scenarios")
	fs.StringVar(&o.Baseline, "baseline", "", "the baseline commit's name in the report")
	dashDCs := fs.Int("dashboard-dcs", o.DashboardDCs, "DCs of the "+bench.ScenarioDashboard+" scenario (--quick: 50)")
	dashPods := fs.Int("dashboard-pods", o.DashboardPods, "pods in all in the "+bench.ScenarioDashboard+" scenario, most of them other workloads' (--quick: 2000)")
	fs.IntVar(&o.DashboardTabs, "dashboard-tabs", o.DashboardTabs, "tabs opened on each dashboard: each streams the list page and a DC page")
	dashWindow := fs.Duration("dashboard-window", o.DashboardWindow, "how long the "+bench.ScenarioDashboard+" scenario counts API requests, without and then with the tabs (--quick: 30s)")
	logCache := fs.String("logcache-sizes", joinInts(o.LogCacheSizes), "DC counts of the "+bench.ScenarioLogCache+" scenario, comma-separated (--quick: 500)")
	fs.IntVar(&o.LogCacheLogBytes, "logcache-log-bytes", o.LogCacheLogBytes, "bytes of the in-controller log on each RC of the "+bench.ScenarioLogCache+" scenario")
	probes := fs.Int("probes", o.Probes, "probe rollouts in each throughput phase, triggered one at a time once its N rollouts have started (0: none)")
	fs.DurationVar(&o.ProbeInterval, "probe-interval", o.ProbeInterval, "time between two probes' triggers")
	footprint := fs.String("footprint-sizes", joinInts(o.FootprintSizes), "DC counts of the footprint scenario, comma-separated")
	revisions := fs.String("footprint-revisions", joinInts(o.FootprintRevisions), "revisions each DC of the footprint scenario keeps: one value, or one per footprint size for the DCs added to reach it")
	fs.Func("footprint-replicas", fmt.Sprintf("replicas of each footprint DC, whose pods dc-bench makes and kwok runs (default %d; 0: no application pods, which dc-controller never caches, so that 20,000 DCs take minutes to make)", o.FootprintReplicas), func(s string) error {
		n, err := strconv.ParseInt(s, 10, 32)
		o.FootprintReplicas = int32(n)
		return err
	})
	fs.IntVar(&o.FootprintClients, "footprint-clients", o.FootprintClients, "clients (each with its own rate limit) making the footprint's objects; 1 is how it was before the full-cost benchmark")
	fs.StringVar(&o.CompatDir, "compat-dir", "", "the compat corpus whose pod templates the footprint DCs cycle through (default: $DC_COMPAT_DIR or ROOT/test/testdata/dc-corpus)")
	fs.IntVar(&o.RawCreates, "raw-creates", o.RawCreates, "RC creates of the raw write throughput")
	fs.IntVar(&o.RawConcurrency, "raw-concurrency", o.RawConcurrency, "concurrent clients of the raw write throughput")
	fs.Float64Var(&o.ControllerQPS, "controller-qps", o.ControllerQPS, "dc-controller's client QPS (kube-controller-manager's default)")
	fs.IntVar(&o.ControllerBurst, "controller-burst", o.ControllerBurst, "dc-controller's client burst (kube-controller-manager's default)")
	fs.Float64Var(&o.KCMQPS, "kcm-qps", o.KCMQPS, "kube-controller-manager's client QPS (0: its default, 20); raise --controller-qps with it")
	fs.IntVar(&o.KCMBurst, "kcm-burst", o.KCMBurst, "kube-controller-manager's client burst (0: its default, 30)")
	fs.IntVar(&o.ControllerWorkers, "controller-workers", o.ControllerWorkers, "dc-controller's workers per controller")
	fs.Float64Var(&o.BenchQPS, "bench-qps", o.BenchQPS, "dc-bench's own client QPS")
	fs.DurationVar(&o.PhaseTimeout, "phase-timeout", o.PhaseTimeout, "how long one phase may take")
	fs.StringVar(&o.ProfileDir, "profile", "", "write profiles to this directory: dc-controller runs inside dc-bench for the rollout scenarios (CPU and heap profiles), and the footprint scenario saves each size's heap profile")
	fs.DurationVar(&o.Settle, "settle", o.Settle, "how long each phase is watched after its last rollout")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if *quick {
		o = bench.QuickOptions(o)
		nodeOpts.Rollouts = 5
	}
	// Explicit size flags (and --probes) win over --quick's.
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "sizes":
			o.Sizes, err = parseInts(*sizes)
		case "footprint-sizes":
			o.FootprintSizes, err = parseInts(*footprint)
		case "footprint-revisions":
			o.FootprintRevisions, err = parseInts(*revisions)
		case "probes":
			o.Probes = *probes
		case "repeat":
			o.Repeat = *repeat
		case "hostile-rollouts":
			o.HostileRollouts = *hostile
		case "inflight-sizes":
			o.InFlightSizes, err = parseInts(*inFlight)
		case "fanout-sizes":
			o.FanOutSizes, err = parseInts(*fanOut)
		case "dashboard-dcs":
			o.DashboardDCs = *dashDCs
		case "dashboard-pods":
			o.DashboardPods = *dashPods
		case "dashboard-window":
			o.DashboardWindow = *dashWindow
		case "logcache-sizes":
			o.LogCacheSizes, err = parseInts(*logCache)
		case "fanout-hold":
			o.HoldWindow = *holdWindow
		case "node-rollouts":
			nodeOpts.Rollouts, err = strconv.Atoi(fs.Lookup("node-rollouts").Value.String())
		}
	})
	if err != nil {
		return config{}, err
	}
	var runNode bool
	o.Scenarios, runNode = splitScenarios(*scenarios)
	if *systems != "" {
		o.Systems = strings.Split(*systems, ",")
	}
	o.DCModes = strings.Split(*dcModes, ",")
	o.Root, o.BinDir = *root, *bin
	if o.BinDir == "" {
		o.BinDir = filepath.Join(o.Root, "bin")
	}
	if o.OutDir == "" {
		o.OutDir = filepath.Join(o.Root, "bench", "results")
	}
	o.Log = os.Stderr
	if err := absPaths(&o); err != nil {
		return config{}, err
	}
	cfg := config{kwok: o}
	if runNode {
		nodeOpts.Root, nodeOpts.BinDir, nodeOpts.OutDir = o.Root, o.BinDir, o.OutDir
		nodeOpts.Replicas, nodeOpts.Label, nodeOpts.Log = o.Replicas, o.Label, o.Log
		cfg.node = &nodeOpts
	}
	return cfg, nil
}

// splitScenarios separates the node scenario from the kwok ones.
func splitScenarios(list string) (kwok []string, node bool) {
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		switch s {
		case "":
		case scenarioNode:
			node = true
		default:
			kwok = append(kwok, s)
		}
	}
	return kwok, node
}

// absPaths makes the directories absolute: kwokctl and dc-controller run
// elsewhere.
func absPaths(o *bench.Options) error {
	for _, p := range []*string{&o.Root, &o.BinDir, &o.OutDir, &o.ProfileDir, &o.BaselineBin} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	return nil
}

// parseInts parses "200,1000".
func parseInts(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("invalid number %q in a comma-separated list", part)
		}
		out = append(out, n)
	}
	return out, nil
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
