//go:build unix

package podruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// outputDrainTimeout bounds how long the output of a process that has
// ended is read: a process that escaped its group (a daemon) may keep the
// pipes open for ever.
const outputDrainTimeout = 2 * time.Second

// processSpec is a local process to run for a container.
type processSpec struct {
	path string
	args []string
	env  []string
	dir  string
	// pidFile records the process while it runs, so that a restarted
	// runtime can stop what its predecessor left behind.
	pidFile string
}

// runProcess runs a process in its own process group until it exits or ctx
// ends; then the group gets SIGTERM, and SIGKILL once grace() has passed.
// When the process has exited, what is left of its group is killed, as a
// container's processes end with it. It returns the exit code (128+N for a
// process killed by signal N), or an error when the process could not be
// started.
func runProcess(ctx context.Context, spec processSpec, stdout, stderr io.Writer, grace func() time.Duration) (int32, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("making the stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		return 0, fmt.Errorf("making the stderr pipe: %w", err)
	}
	cmd := &exec.Cmd{
		Path:        spec.path,
		Args:        spec.args,
		Env:         spec.env,
		Dir:         spec.dir,
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		closeAll(outR, outW, errR, errW)
		return 0, err
	}
	// The child has its own copies; the runtime's must go for EOF to come.
	closeAll(outW, errW)
	pid := cmd.Process.Pid
	writePIDFile(spec.pidFile, pid)
	defer func() { _ = os.Remove(spec.pidFile) }()
	copied := copyOutput(outR, stdout, errR, stderr)

	waitErr := waitOrStop(ctx, cmd, pid, grace)
	killGroup(pid, syscall.SIGKILL)
	select {
	case <-copied:
	case <-time.After(outputDrainTimeout):
		closeAll(outR, errR)
		<-copied
	}
	closeAll(outR, errR)
	return exitCode(cmd.ProcessState, waitErr), nil
}

// waitOrStop waits for the process; when ctx ends first it stops the group
// gracefully, then by force.
func waitOrStop(ctx context.Context, cmd *exec.Cmd, pid int, grace func() time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	killGroup(pid, syscall.SIGTERM)
	timer := time.NewTimer(grace())
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
	}
	killGroup(pid, syscall.SIGKILL)
	return <-done
}

// copyOutput copies both pipes to their writers; the channel closes when
// both have ended.
func copyOutput(outR io.Reader, stdout io.Writer, errR io.Reader, stderr io.Writer) <-chan struct{} {
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(stdout, outR) })
	wg.Go(func() { _, _ = io.Copy(stderr, errR) })
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// exitCode is the container exit code of a finished process, the way
// container runtimes report it.
func exitCode(state *os.ProcessState, waitErr error) int32 {
	if state == nil {
		if waitErr != nil {
			return exitCodeKilled
		}
		return 0
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal())
	}
	return int32(state.ExitCode())
}

// killGroup signals a process group; a group that is gone already is fine.
func killGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// writePIDFile records the process and its start time, which tells it from
// a later process that reuses the PID. Failing to write it only costs the
// clean-up after a crash of the runtime, so errors are ignored.
func writePIDFile(path string, pid int) {
	if path == "" {
		return
	}
	start, err := processStartTime(pid)
	if err != nil {
		return
	}
	_ = os.WriteFile(path, []byte(fmt.Sprintf("%d %s\n", pid, start)), 0o644)
}

// killLeftover kills the process group a pid file records, if that process
// is still the one that was started; it reports whether it killed one.
func killLeftover(pidFile string) bool {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return false
	}
	defer func() { _ = os.Remove(pidFile) }()
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return false
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil || pid <= 0 {
		return false
	}
	start, err := processStartTime(pid)
	if err != nil || start != fields[1] {
		return false
	}
	killGroup(pid, syscall.SIGKILL)
	return true
}

// processStartTime reads when a process started, in clock ticks since boot
// (field 22 of /proc/PID/stat), which with the PID identifies a process.
func processStartTime(pid int) (string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	// The command name (field 2) may hold spaces; it ends at the last ')'.
	end := strings.LastIndexByte(string(data), ')')
	if end < 0 {
		return "", errors.New("unexpected /proc stat format")
	}
	fields := strings.Fields(string(data[end+1:]))
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return "", errors.New("unexpected /proc stat format")
	}
	return fields[19], nil
}

// KillLeftovers kills the processes of pods that a runtime with state
// directory stateDir left running, e.g. when it was killed: the runtime
// records every process it runs until the process ends.
func KillLeftovers(stateDir string) {
	files, err := filepath.Glob(filepath.Join(stateDir, "pods", "*", "*", "*.pid"))
	if err != nil {
		return
	}
	for _, f := range files {
		killLeftover(f)
	}
}
