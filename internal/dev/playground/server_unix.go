//go:build unix

package playground

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/deployconfig/deployconfig/internal/dev/podruntime"
)

const (
	// serverStartTimeout bounds how long a new server gets to take its lock.
	serverStartTimeout = 30 * time.Second
	// serverStopTimeout is how long a server gets to stop after SIGTERM
	// before it is killed.
	serverStopTimeout = 30 * time.Second
	// serverPoll is how often the server's lock is looked at.
	serverPoll = 100 * time.Millisecond
)

// StartServer starts the cluster's server, command (dc-local serve with
// its arguments), detached from the caller: in a session of its own, so
// that neither the caller's end nor a Ctrl-C in its terminal stops it,
// with its output appended to the server log. A server that runs already
// is reused. It returns once the server holds its lock, or fails when the
// server exits first (its log says why).
func (c *Cluster) StartServer(ctx context.Context, command []string) (*Server, error) {
	return StartServer(ctx, c.opts, command)
}

// StartServer is (*Cluster).StartServer for a cluster given by its options.
func StartServer(ctx context.Context, o Options, command []string) (*Server, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(command) == 0 {
		return nil, errors.New("no server command given")
	}
	logPath := filepath.Join(o.clusterDir(), serverLogFile)
	if pid, running := serverRunning(o); running {
		if !runsBinary(pid, command[0]) {
			logf(o.Log, "dc-local serve (pid %d) runs another build of %s; restarting it", pid, command[0])
			if err := StopServer(ctx, o); err != nil {
				return nil, err
			}
		} else {
			return &Server{PID: pid, Log: logPath, Reused: true}, nil
		}
	}
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the server log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), workdirEnv+"="+o.Workdir)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pid, err := waitServerUp(ctx, o, exited)
	if err != nil {
		return nil, fmt.Errorf("%w (see %s)", err, logPath)
	}
	logf(o.Log, "Started dc-local serve (pid %d, log %s)", pid, logPath)
	return &Server{PID: pid, Log: logPath, Reused: pid != cmd.Process.Pid}, nil
}

// runsBinary reports whether process pid runs the binary at path as it is
// now: a binary rebuilt since the process started shows as "(deleted)".
// Where /proc cannot tell, it assumes so.
func runsBinary(pid int, path string) bool {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || pid <= 0 {
		return true
	}
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		return true
	}
	return exe == want
}

// waitServerUp waits until a server holds the lock: the one just started,
// or one that another caller started meanwhile (then the new one exits).
func waitServerUp(ctx context.Context, o Options, exited <-chan error) (int, error) {
	timeout := time.NewTimer(serverStartTimeout)
	defer timeout.Stop()
	tick := time.NewTicker(serverPoll)
	defer tick.Stop()
	for {
		if pid, running := serverRunning(o); running {
			return pid, nil
		}
		select {
		case err := <-exited:
			if pid, running := serverRunning(o); running {
				return pid, nil
			}
			return 0, fmt.Errorf("the server exited at once: %v", err)
		case <-timeout.C:
			return 0, errors.New("the server did not start in time")
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
}

// HoldServerLock is called by the server itself: it takes the cluster's
// server lock (ErrServerRunning when another server has it) and records
// its PID. The lock is held until release is called or the process ends.
func HoldServerLock(o Options) (release func(), err error) {
	o, err = o.withDefaults()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(o.clusterDir(), serverLockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the server lock: %w", err)
	}
	if err := takeLock(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	pidPath := filepath.Join(o.clusterDir(), serverPIDFile)
	if err := os.WriteFile(pidPath, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("writing the server's PID file: %w", err)
	}
	return func() {
		_ = os.Remove(pidPath)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// takeLock takes the server lock. It tries for a moment, because
// serverRunning holds the lock shared for an instant when it looks; a lock
// that stays taken means another server runs.
func takeLock(f *os.File) error {
	deadline := time.Now().Add(time.Second)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return fmt.Errorf("taking the server lock: %w", err)
		case time.Now().After(deadline):
			return ErrServerRunning
		}
		time.Sleep(serverPoll / 2)
	}
}

// serverRunning reports whether a server holds the cluster's lock, and its
// PID when its PID file says.
func serverRunning(o Options) (int, bool) {
	f, err := os.OpenFile(filepath.Join(o.clusterDir(), serverLockFile), os.O_RDONLY, 0)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return 0, false
	}
	return readPID(filepath.Join(o.clusterDir(), serverPIDFile)), true
}

// readPID reads a PID file; 0 when there is none.
func readPID(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0
	}
	return pid
}

// StopServer stops the cluster's server if one runs: SIGTERM, which makes
// it stop the pods' processes and exit, then, after serverStopTimeout,
// SIGKILL for its process group. Pods' processes that a server left behind
// are killed too.
func StopServer(ctx context.Context, o Options) error {
	o, err := o.withDefaults()
	if err != nil {
		return err
	}
	// A server that crashed may have left pods' processes behind; they are
	// killed once no server runs (a running one stops its own).
	defer podruntime.KillLeftovers(filepath.Join(o.clusterDir(), runtimeDir))
	pid, running := serverRunning(o)
	if !running {
		return nil
	}
	if pid <= 0 {
		return fmt.Errorf("a dc-local server runs for cluster %q but its PID file %s is missing", o.Name, filepath.Join(o.clusterDir(), serverPIDFile))
	}
	logf(o.Log, "Stopping dc-local serve (pid %d)...", pid)
	_ = syscall.Kill(pid, syscall.SIGTERM)
	if waitServerDown(ctx, o, serverStopTimeout) {
		return nil
	}
	logf(o.Log, "dc-local serve (pid %d) did not stop in %s; killing it", pid, serverStopTimeout)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	if !waitServerDown(ctx, o, serverStopTimeout) {
		return fmt.Errorf("dc-local serve (pid %d) of cluster %q does not stop", pid, o.Name)
	}
	return nil
}

// waitServerDown waits until no server holds the lock.
func waitServerDown(ctx context.Context, o Options, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, running := serverRunning(o); !running {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(serverPoll):
		}
	}
	return false
}
