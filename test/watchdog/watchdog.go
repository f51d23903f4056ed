// Package watchdog removes a test suite's playground or real-node cluster when the test
// binary ends without removing it: a panic in a test, `go test -timeout`,
// a kill.
//
// The watchdog is the test binary run again as a process of its own before
// the cluster is made. It reads a pipe from the test binary until it
// closes, which the kernel does however the test binary ends; when the
// test binary did not write doneWord first, the watchdog removes the
// cluster. A suite's TestMain calls Run first, so that the second process
// becomes the watchdog instead of running tests.
package watchdog

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/deployconfig/deployconfig/internal/dev/playground"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
)

const (
	// nameEnv and binEnv carry the cluster's name and binaries to the
	// watchdog process.
	nameEnv = "DC_TEST_WATCHDOG_CLUSTER"
	binEnv  = "DC_TEST_WATCHDOG_BIN"
	// realNodeEnv carries the state directory of a real-node cluster
	// (internal/dev/realnode) instead of a playground cluster's name.
	realNodeEnv = "DC_TEST_WATCHDOG_REALNODE"
	// doneWord tells the watchdog that the cluster is gone.
	doneWord = "done"
	// deleteTimeout bounds the removal of the cluster.
	deleteTimeout = 2 * time.Minute
)

// Watchdog is the test binary's end of the pipe.
type Watchdog struct {
	cmd  *exec.Cmd
	pipe io.WriteCloser
	log  string
}

// Start starts the watchdog of the cluster o describes, in a process group
// of its own so that a Ctrl-C does not stop it, logging to a file so that
// `go test` does not wait for its output.
func Start(o playground.Options) (*Watchdog, error) {
	return start(nameEnv+"="+o.Name, binEnv+"="+o.BinDir)
}

// StartRealNode starts the watchdog of the real-node cluster whose state
// directory is dir (internal/dev/realnode); bin holds its kubectl.
func StartRealNode(dir, bin string) (*Watchdog, error) {
	return start(realNodeEnv+"="+dir, binEnv+"="+bin)
}

// start starts the watchdog process with env added to this process's.
func start(env ...string) (*Watchdog, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting the cluster's watchdog: %w", err)
	}
	log, err := os.CreateTemp("", "dc-test-watchdog-*.log")
	if err != nil {
		return nil, fmt.Errorf("starting the cluster's watchdog: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the cluster's watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the cluster's watchdog: %w", err)
	}
	return &Watchdog{cmd: cmd, pipe: pipe, log: log.Name()}, nil
}

// Release tells the watchdog that the cluster is gone and waits for it.
func (w *Watchdog) Release() {
	_, _ = io.WriteString(w.pipe, doneWord)
	_ = w.pipe.Close()
	if err := w.cmd.Wait(); err == nil {
		_ = os.Remove(w.log)
	}
}

// Abandon leaves the cluster to the watchdog.
func (w *Watchdog) Abandon() {
	_ = w.pipe.Close()
	fmt.Fprintf(os.Stderr, "the watchdog removes the cluster; its log is %s\n", w.log)
}

// Run makes this process the watchdog when Start started it, and then
// returns its exit code and true; otherwise it returns false at once.
// beforeDelete, if not nil, runs before the cluster is removed (to stop
// processes of the suite's own that the cluster's removal does not).
func Run(beforeDelete func(o playground.Options)) (int, bool) {
	name, realNode := os.Getenv(nameEnv), os.Getenv(realNodeEnv)
	if name == "" && realNode == "" {
		return 0, false
	}
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	data, _ := io.ReadAll(os.Stdin)
	if strings.TrimSpace(string(data)) == doneWord {
		return 0, true
	}
	if realNode != "" {
		return deleteRealNode(realNode), true
	}
	fmt.Printf("the test binary ended without removing cluster %s; removing it\n", name)
	o := playground.Options{Name: name, BinDir: os.Getenv(binEnv), Log: os.Stdout}
	if beforeDelete != nil {
		beforeDelete(o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	if err := playground.Delete(ctx, o); err != nil {
		fmt.Printf("removing cluster %s: %v\n", name, err)
		return 1, true
	}
	fmt.Printf("cluster %s removed\n", name)
	return 0, true
}

// deleteRealNode removes the real-node cluster whose state is in dir.
func deleteRealNode(dir string) int {
	fmt.Printf("the test binary ended without removing the real node in %s; removing it\n", dir)
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	if err := realnode.Delete(ctx, dir, os.Getenv(binEnv)); err != nil {
		fmt.Printf("removing the real node in %s: %v\n", dir, err)
		return 1
	}
	fmt.Printf("real node in %s removed\n", dir)
	return 0
}
