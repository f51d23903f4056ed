package clusterenv

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

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

const (
	// apiServerComponent is the kube-apiserver's name in kwokctl's
	// binary runtime: its PID file is pids/kube-apiserver.pid.
	apiServerComponent = "kube-apiserver"
	// apiServerReadyTimeout bounds how long a restarted kube-apiserver
	// gets to be ready.
	apiServerReadyTimeout = 2 * time.Minute
	// apiServerStopGrace is how long a kube-apiserver gets to shut down
	// gracefully: left alone, it drains watches for a minute.
	apiServerStopGrace = 10 * time.Second
)

// Restart says how a RestartAPIServer went.
type Restart struct {
	// Signal is the signal that stopped the kube-apiserver.
	Signal syscall.Signal
	// Away is how long it was away, from the signal to ready.
	Away time.Duration
}

// RestartAPIServer stops the cluster's kube-apiserver with sig (SIGTERM
// for a graceful restart, which becomes SIGKILL after apiServerStopGrace
// as a kubelet's grace period would; SIGKILL for a crash), waits until it
// is gone, starts it again (`kwokctl start cluster` starts the components
// of a cluster that do not run, with their saved command lines) and waits
// until it is ready.
func (e *Env) RestartAPIServer(ctx context.Context, sig syscall.Signal) (Restart, error) {
	e.components.mu.Lock()
	defer e.components.mu.Unlock()
	clusterDir, err := e.Options.ClusterDir()
	if err != nil {
		return Restart{}, err
	}
	pidPath := filepath.Join(clusterDir, "pids", apiServerComponent+".pid")
	pid, err := readPIDFile(pidPath)
	if err != nil {
		return Restart{}, err
	}
	start := time.Now()
	if err := syscall.Kill(pid, sig); err != nil {
		return Restart{}, fmt.Errorf("signalling the kube-apiserver (pid %d): %w", pid, err)
	}
	if waitGone(ctx, pid, apiServerStopGrace) != nil {
		sig = syscall.SIGKILL
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return Restart{}, fmt.Errorf("killing the kube-apiserver (pid %d): %w", pid, err)
		}
		if err := waitGone(ctx, pid, exitTimeout); err != nil {
			return Restart{}, fmt.Errorf("the kube-apiserver (pid %d) did not stop: %w", pid, err)
		}
	}
	logf(e.log, "kube-apiserver (pid %d) stopped by %v", pid, sig)
	if err := e.kwokctl(ctx, "start", "cluster", "--name", e.Options.Name); err != nil {
		return Restart{}, err
	}
	if err := waitAPIServerReady(ctx, e.Clientset()); err != nil {
		return Restart{}, err
	}
	away := time.Since(start)
	logf(e.log, "kube-apiserver is back after %s", away.Round(100*time.Millisecond))
	return Restart{Signal: sig, Away: away}, nil
}

// kwokctl runs kwokctl on the cluster's working directory.
func (e *Env) kwokctl(ctx context.Context, args ...string) error {
	clusterDir, err := e.Options.ClusterDir()
	if err != nil {
		return err
	}
	workdir := filepath.Dir(filepath.Dir(clusterDir))
	cmd := exec.CommandContext(ctx, filepath.Join(e.BinDir, "kwokctl"), args...)
	cmd.Env = append(os.Environ(), "KWOK_WORKDIR="+workdir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kwokctl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// waitAPIServerReady waits until /readyz answers OK.
func waitAPIServerReady(ctx context.Context, cs kubernetes.Interface) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, probePoll, apiServerReadyTimeout, true, func(ctx context.Context) (bool, error) {
		_, last = cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the kube-apiserver to be ready: %w", errors.Join(err, last))
	}
	return nil
}

// waitGone waits until process pid no longer exists.
func waitGone(ctx context.Context, pid int, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, probePoll/4, timeout, true, func(context.Context) (bool, error) {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH), nil
	})
}

// readPIDFile reads a PID file.
func readPIDFile(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading PID file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("PID file %s holds %q", path, data)
	}
	return pid, nil
}
