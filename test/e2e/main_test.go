package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deployconfig/deployconfig/internal/dev/localprom"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
	"github.com/deployconfig/deployconfig/test/watchdog"
)

const (
	// binEnv names the directory of the cluster binaries.
	binEnv = "DC_BIN"
	// defaultBin is binEnv's default, relative to this package.
	defaultBin = "../../bin"
	// crdDir holds the CRDs the suite installs.
	crdDir = "../../config/crd/bases"
	// samplesDir holds the samples the suite applies.
	samplesDir = "../../config/samples"
	// testNodes is the number of fake nodes of the suite's cluster.
	testNodes = 3
	// setupTimeout bounds creating the cluster and installing the CRDs.
	setupTimeout = 3 * time.Minute
	// teardownTimeout bounds removing the cluster.
	teardownTimeout = 2 * time.Minute
	// serverLogLines is how much of dc-local serve's log a failed run
	// prints.
	serverLogLines = 300
	// parallelTests is how many tests run at once unless -test.parallel
	// says otherwise: the tests mostly wait for the cluster, so more of
	// them than CPUs keeps a run short.
	parallelTests = 8
	// imagePollInterval is dc-controller's --image-poll-interval: short,
	// so that tests see a push to a registry tag roll out soon.
	imagePollInterval = 2 * time.Second
)

// suite is the cluster the tests run against; TestMain sets it.
var suite *environment

// environment is what the tests need to reach the suite's cluster.
type environment struct {
	cluster *playground.Cluster
	binDir  string
	// server is the suite's `dc-local serve`: dc-controller and the local
	// pod runtime; serverCommand starts it.
	server        *playground.Server
	serverCommand []string
	options       playground.Options
	// exporter serves the series analyses measure, which tests set;
	// prometheus scrapes it every second (both on loopback).
	exporter   *localprom.Exporter
	prometheus *localprom.Server
}

func TestMain(m *testing.M) {
	flag.Parse()
	setDefaultParallelism()
	if code, ok := watchdog.Run(nil); ok {
		os.Exit(code)
	}
	os.Exit(runSuite(m))
}

// setDefaultParallelism sets -test.parallel to parallelTests unless it was
// given.
func setDefaultParallelism() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(parallelTests))
	}
}

// runSuite creates the cluster, runs the tests and removes the cluster.
func runSuite(m *testing.M) int {
	o, err := suiteOptions()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	wd, err := watchdog.Start(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	teardown := teardownOnce(o, wd)
	defer teardown()
	go teardownOnSignal(cancel, teardown)

	start := time.Now()
	if suite, err = setUp(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: setting up: %v\n", err)
		printServerLog(o)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: cluster %s ready in %s (kubeconfig %s; dc-local serve pid %d, log %s)\n",
		o.Name, time.Since(start).Round(100*time.Millisecond), suite.cluster.Kubeconfig, suite.server.PID, suite.server.Log)
	defer suite.stopPrometheus()
	code := m.Run()
	if code != 0 {
		printServerLog(o)
	}
	return code
}

// printServerLog prints the end of dc-local serve's log, which tells what
// the controller and the pod runtime did, to explain a failure.
func printServerLog(o playground.Options) {
	path, err := o.ServerLogPath()
	if err != nil {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > serverLogLines {
		fmt.Fprintf(os.Stderr, "e2e: the last %d lines of %s:\n", serverLogLines, path)
		lines = lines[len(lines)-serverLogLines:]
	} else {
		fmt.Fprintf(os.Stderr, "e2e: %s:\n", path)
	}
	fmt.Fprint(os.Stderr, strings.Join(lines, ""))
}

// suiteOptions describes a cluster with a name of its own, so that runs
// and a dc-local playground do not meet.
func suiteOptions() (playground.Options, error) {
	bin := os.Getenv(binEnv)
	if bin == "" {
		bin = defaultBin
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		return playground.Options{}, fmt.Errorf("resolving %s: %w", binEnv, err)
	}
	suffix := make([]byte, 3)
	if _, err := rand.Read(suffix); err != nil {
		return playground.Options{}, fmt.Errorf("naming the cluster: %w", err)
	}
	return playground.Options{
		Name:   "dc-e2e-" + hex.EncodeToString(suffix),
		BinDir: bin,
		Nodes:  testNodes,
		Log:    os.Stderr,
	}, nil
}

// setUp creates the cluster, installs the CRDs and starts `dc-local serve`
// from the binary directory, as `dc-local up` does; removing the cluster
// stops it.
func setUp(ctx context.Context, o playground.Options) (*environment, error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	dcLocal := filepath.Join(o.BinDir, "dc-local")
	if _, err := os.Stat(dcLocal); err != nil {
		return nil, fmt.Errorf("no dc-local in %s: run `make build`", o.BinDir)
	}
	cluster, err := playground.Create(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := cluster.InstallCRDs(ctx, crdDir); err != nil {
		return nil, err
	}
	command := []string{dcLocal, "serve", "--name", o.Name, "--bin", o.BinDir, "--image-poll-interval", imagePollInterval.String()}
	server, err := cluster.StartServer(ctx, command)
	if err != nil {
		return nil, err
	}
	env := &environment{cluster: cluster, binDir: o.BinDir, server: server, serverCommand: command, options: o}
	if err := env.startPrometheus(ctx); err != nil {
		return nil, err
	}
	return env, nil
}

// startPrometheus starts the exporter and a Prometheus scraping it.
func (e *environment) startPrometheus(ctx context.Context) error {
	exporter, err := localprom.StartExporter()
	if err != nil {
		return err
	}
	prom, err := localprom.Start(ctx, localprom.Options{Binary: filepath.Join(e.binDir, "prometheus"), Targets: []string{exporter.Addr()}})
	if err != nil {
		exporter.Close()
		return err
	}
	e.exporter, e.prometheus = exporter, prom
	return nil
}

// stopPrometheus stops what startPrometheus started.
func (e *environment) stopPrometheus() {
	if e == nil || e.prometheus == nil {
		return
	}
	e.prometheus.Close()
	e.exporter.Close()
}

// teardownOnce returns a function that removes the cluster the first time
// it is called, and tells the watchdog it is done only when that worked.
func teardownOnce(o playground.Options, wd *watchdog.Watchdog) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
			defer cancel()
			if err := playground.Delete(ctx, o); err != nil {
				fmt.Fprintf(os.Stderr, "e2e: removing cluster %s: %v (the watchdog will retry)\n", o.Name, err)
				wd.Abandon()
				return
			}
			wd.Release()
		})
	}
}

// teardownOnSignal removes the cluster and exits when the run is
// interrupted; an in-flight setup is cancelled first.
func teardownOnSignal(cancel context.CancelFunc, teardown func()) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	sig := <-signals
	fmt.Fprintf(os.Stderr, "e2e: %v: removing the cluster\n", sig)
	cancel()
	teardown()
	os.Exit(130)
}
