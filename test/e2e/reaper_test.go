package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/deployconfig/deployconfig/internal/playground"
)

// The reaper is a copy of the test binary, started before the cluster, that
// removes the cluster if the test binary dies without doing so: a panic in
// a test, `go test -timeout`, a kill. It waits on a pipe from the test
// binary; the kernel closes the pipe however the test binary ends, and
// the test binary writes releaseWord into it first when it has removed the
// cluster itself.
const (
	// reaperEnv carries the cluster's name to the reaper.
	reaperEnv = "DC_E2E_REAPER_CLUSTER"
	// releaseWord tells the reaper that the cluster is gone.
	releaseWord = "released"
)

// reaper is the test binary's handle on its reaper process.
type reaper struct {
	cmd  *exec.Cmd
	pipe io.WriteCloser
	log  string
}

// startReaper starts the reaper of the cluster o describes. It runs in its
// own process group, so that an interrupt from the terminal does not stop
// it, and logs to a file, so that `go test` does not wait for it.
func startReaper(o playground.Options) (*reaper, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting the cluster watchdog: %w", err)
	}
	log, err := os.CreateTemp("", "dc-e2e-watchdog-*.log")
	if err != nil {
		return nil, fmt.Errorf("starting the cluster watchdog: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), reaperEnv+"="+o.Name, binEnv+"="+o.BinDir)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the cluster watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the cluster watchdog: %w", err)
	}
	return &reaper{cmd: cmd, pipe: pipe, log: log.Name()}, nil
}

// release tells the reaper the cluster is gone and waits for it to exit.
func (r *reaper) release() {
	_, _ = io.WriteString(r.pipe, releaseWord)
	_ = r.pipe.Close()
	if err := r.cmd.Wait(); err == nil {
		_ = os.Remove(r.log)
	}
}

// abandon leaves the cluster to the reaper.
func (r *reaper) abandon() {
	_ = r.pipe.Close()
	fmt.Fprintf(os.Stderr, "e2e: the watchdog removes the cluster; its log is %s\n", r.log)
}

// runReaper is the reaper process: it waits until the test binary releases
// it or dies, and in the latter case removes the cluster.
func runReaper(name string) int {
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	data, _ := io.ReadAll(os.Stdin)
	if strings.TrimSpace(string(data)) == releaseWord {
		return 0
	}
	fmt.Printf("the test binary ended without removing cluster %s; removing it\n", name)
	o := playground.Options{Name: name, BinDir: os.Getenv(binEnv), Log: os.Stdout}
	ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	if err := playground.Delete(ctx, o); err != nil {
		fmt.Printf("removing cluster %s: %v\n", name, err)
		return 1
	}
	fmt.Printf("cluster %s removed\n", name)
	return 0
}
