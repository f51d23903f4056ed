package clusterenv

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/deployconfig/deployconfig/internal/playground"
)

// The watchdog is the test binary run again as a process of its own before
// the cluster is made. It reads a pipe from the test binary until it
// closes, which the kernel does however the test binary ends; when the
// test binary did not write doneWord first (it panicked, `go test
// -timeout` killed it, someone killed it), the watchdog kills the
// controllers and removes the cluster.
const (
	// watchdogEnv carries the cluster's name to the watchdog.
	watchdogEnv = "DC_CLUSTERENV_WATCHDOG"
	// doneWord tells the watchdog that the cluster is gone.
	doneWord = "done"
	// pidSuffix ends the controllers' PID files.
	pidSuffix = ".pid"
)

// watchdog is the test binary's end of the pipe.
type watchdog struct {
	cmd  *exec.Cmd
	pipe io.WriteCloser
	log  string
}

// startWatchdog starts the watchdog of the cluster o describes, in a
// process group of its own so that a Ctrl-C does not stop it, logging to a
// file so that `go test` does not wait for its output.
func startWatchdog(o playground.Options) (*watchdog, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting the cluster's watchdog: %w", err)
	}
	log, err := os.CreateTemp("", "dc-clusterenv-watchdog-*.log")
	if err != nil {
		return nil, fmt.Errorf("starting the cluster's watchdog: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), watchdogEnv+"="+o.Name, BinEnv+"="+o.BinDir)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the cluster's watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the cluster's watchdog: %w", err)
	}
	return &watchdog{cmd: cmd, pipe: pipe, log: log.Name()}, nil
}

// release tells the watchdog that the cluster is gone and waits for it.
func (w *watchdog) release() {
	_, _ = io.WriteString(w.pipe, doneWord)
	_ = w.pipe.Close()
	if err := w.cmd.Wait(); err == nil {
		_ = os.Remove(w.log)
	}
}

// abandon leaves the cluster to the watchdog.
func (w *watchdog) abandon() {
	_ = w.pipe.Close()
	fmt.Fprintf(os.Stderr, "the watchdog removes the cluster; its log is %s\n", w.log)
}

// runWatchdog is the watchdog process.
func runWatchdog(name string) int {
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	data, _ := io.ReadAll(os.Stdin)
	if strings.TrimSpace(string(data)) == doneWord {
		return 0
	}
	fmt.Printf("the test binary ended without removing cluster %s; removing it\n", name)
	o := playground.Options{Name: name, BinDir: os.Getenv(BinEnv), Log: os.Stdout}
	if dir, err := o.ClusterDir(); err == nil {
		killControllers(filepath.Join(dir, "dc-controllers"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	if err := playground.Delete(ctx, o); err != nil {
		fmt.Printf("removing cluster %s: %v\n", name, err)
		return 1
	}
	fmt.Printf("cluster %s removed\n", name)
	return 0
}

// killControllers kills the process groups of the controllers whose PID
// files are in dir, checking first that each PID still runs a controller
// of this cluster (its command line names dir).
func killControllers(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*"+pidSuffix))
	for _, file := range files {
		pid, err := readPIDFile(file)
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		fmt.Printf("killed %s (pid %d)\n", strings.TrimSuffix(filepath.Base(file), pidSuffix), pid)
	}
}
