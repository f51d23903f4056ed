package clusterenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	mathrand "math/rand/v2"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/deployconfig/deployconfig/internal/dev/playground"
	"github.com/deployconfig/deployconfig/test/watchdog"
)

const (
	// BinEnv names the directory of the binaries (make build, make tools);
	// default: the checkout's bin/.
	BinEnv = "DC_BIN"
	// LogsEnv, when set, keeps client-go's log of the test process.
	LogsEnv = "DC_TEST_LOGS"
	// KeepEnv, when set, keeps the cluster of a failed run for a look.
	KeepEnv = "DC_KEEP_CLUSTER"
	// setupTimeout bounds creating the cluster and starting its parts.
	setupTimeout = 5 * time.Minute
	// teardownTimeout bounds removing it.
	teardownTimeout = 2 * time.Minute
	// logTail is how much of each log a failed run prints.
	logTail = 80
	// testNodes is the number of fake nodes.
	testNodes = 3
)

// Main runs a test binary's tests against a new Env and returns the exit
// code, for TestMain: os.Exit(clusterenv.Main(m, "dc-chaos", set)). set
// receives the Env before the tests run. The cluster is named prefix plus
// a random suffix, so that runs do not meet. When the run fails, the ends
// of the controllers' and the pod runtime's logs are printed.
//
// Listing tests (go test -list, as hack/fuzz.sh does) needs no cluster.
func Main(m *testing.M, prefix string, set func(*Env)) int {
	if code, ok := watchdog.Run(killControllers); ok {
		return code
	}
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		return m.Run()
	}
	// client-go's own log (the tests' watches retrying while the API
	// server is away, or ending) drowns the tests' output.
	if os.Getenv(LogsEnv) == "" {
		klog.SetLogger(logr.Discard())
	}
	o, root, err := options(prefix)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", prefix, err)
		return 1
	}
	wd, err := watchdog.Start(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", prefix, err)
		return 1
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	setupCtx, setupCancel := context.WithTimeout(ctx, setupTimeout)
	start := time.Now()
	env, err := Setup(setupCtx, o, root)
	setupCancel()
	code := 1
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: setting up cluster %s: %v\n", prefix, o.Name, err)
	} else {
		logf(o.Log, "cluster %s ready in %s (kubeconfig %s)", o.Name, time.Since(start).Round(100*time.Millisecond), env.Cluster.Kubeconfig)
		set(env)
		code = m.Run()
	}
	if code != 0 && env != nil {
		env.printLogs()
		if os.Getenv(KeepEnv) != "" {
			fmt.Fprintf(os.Stderr, "%s: %s is set: keeping cluster %s (KUBECONFIG=%s); remove it with: kwokctl delete cluster --name %s, and kill the dc-controller processes of %s\n",
				prefix, KeepEnv, o.Name, env.Cluster.Kubeconfig, o.Name, env.dir)
			wd.Release()
			return code
		}
	}
	teardownCtx, teardownCancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer teardownCancel()
	if env == nil {
		env = &Env{Options: o}
	}
	if err := env.Teardown(teardownCtx); err != nil {
		fmt.Fprintf(os.Stderr, "%s: removing cluster %s: %v (the watchdog retries)\n", prefix, o.Name, err)
		wd.Abandon()
		return code
	}
	wd.Release()
	return code
}

// options describes a new cluster from the environment.
func options(prefix string) (playground.Options, string, error) {
	root, err := findRoot()
	if err != nil {
		return playground.Options{}, "", err
	}
	bin := os.Getenv(BinEnv)
	if bin == "" {
		bin = filepath.Join(root, "bin")
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return playground.Options{}, "", fmt.Errorf("resolving %s: %w", BinEnv, err)
	}
	suffix := make([]byte, 3)
	if _, err := rand.Read(suffix); err != nil {
		return playground.Options{}, "", fmt.Errorf("naming the cluster: %w", err)
	}
	port, err := apiServerPort()
	if err != nil {
		return playground.Options{}, "", err
	}
	return playground.Options{
		Name:          prefix + "-" + hex.EncodeToString(suffix),
		BinDir:        bin,
		Nodes:         testNodes,
		Log:           os.Stderr,
		APIServerPort: port,
	}, root, nil
}

// Ports the kube-apiserver may get: below the kernel's ephemeral ports
// (32768 and up) and far below where kwokctl hands out ports (down from
// 32767), so that no other cluster takes it while RestartAPIServer has
// the kube-apiserver down.
const (
	minAPIServerPort = 20000
	maxAPIServerPort = 30000
)

// apiServerPort picks a free port for the kube-apiserver at random.
func apiServerPort() (int, error) {
	for range 100 {
		port := minAPIServerPort + mathrand.IntN(maxAPIServerPort-minAPIServerPort)
		if portFree(port) {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port for the kube-apiserver in [%d, %d)", minAPIServerPort, maxAPIServerPort)
}

// portFree reports whether nothing listens on port, on any address.
func portFree(port int) bool {
	for _, host := range []string{"127.0.0.1", ""} {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}

// findRoot walks up from the working directory (the test's package) to the
// checkout's go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// printLogs prints the end of the pod runtime's and each controller's log.
func (e *Env) printLogs() {
	paths := []string{e.RuntimeLog()}
	if e.Controllers != nil {
		paths = append(paths, e.Controllers.Logs()...)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		lines := strings.SplitAfter(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > logTail {
			lines = lines[len(lines)-logTail:]
		}
		fmt.Fprintf(os.Stderr, "--- the last %d lines of %s:\n%s\n", len(lines), path, strings.Join(lines, ""))
	}
}
