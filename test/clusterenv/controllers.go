package clusterenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/deployconfig/deployconfig/internal/controller"
)

const (
	// readyTimeout bounds how long a started replica gets to serve /readyz.
	readyTimeout = time.Minute
	// stopTimeout is how long a replica gets to stop after SIGTERM.
	stopTimeout = 30 * time.Second
	// exitTimeout bounds how long a killed process takes to be gone.
	exitTimeout = 30 * time.Second
	// crashBackoff is how long a replica that exited on its own waits
	// before it starts again, as a kubelet's restart back-off would.
	crashBackoff = time.Second
	// probePoll is how often readiness and leadership are looked at.
	probePoll = 200 * time.Millisecond
	// leaderMetric is controller-runtime's gauge of leadership.
	leaderMetric = `leader_election_master_status{name="` + controller.LeaderElectionID + `"}`
)

// ControllerSpec says how dc-controller runs.
type ControllerSpec struct {
	// Replicas is the number of dc-controller processes.
	Replicas int
	// LeaderElect makes them elect one active replica through a Lease in
	// ControllerNamespace, as the shipped Deployment does.
	LeaderElect bool
	// DeployerMode is dc-controller's --deployer-mode (pod or
	// controller-when-possible: dcv1.DeployerModePod and
	// dcv1.DeployerModeControllerWhenPossible); empty leaves the flag out,
	// so that dc-controller runs with its default.
	DeployerMode string
}

// Controllers runs dc-controller replicas as processes of their own.
type Controllers struct {
	dir        string
	binary     string
	kubeconfig string
	log        io.Writer

	mu       sync.Mutex
	spec     ControllerSpec
	replicas []*Replica
	started  int
}

func newControllers(dir, binary, kubeconfig string, log io.Writer) *Controllers {
	return &Controllers{dir: dir, binary: binary, kubeconfig: kubeconfig, log: log}
}

// Ensure makes the replicas run as spec says. When they already do it
// does nothing; otherwise the current replicas stop and new ones start. It
// returns once every replica is ready and, with leader election, one of
// them leads.
func (c *Controllers) Ensure(ctx context.Context, spec ControllerSpec) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spec == spec && len(c.replicas) == spec.Replicas {
		return nil
	}
	for _, r := range c.replicas {
		if err := r.Stop(ctx); err != nil {
			return err
		}
	}
	c.replicas = nil
	c.spec = spec
	for range spec.Replicas {
		c.started++
		r, err := newReplica(c, fmt.Sprintf("dc-controller-%d", c.started), spec)
		if err != nil {
			return err
		}
		c.replicas = append(c.replicas, r)
		if err := r.Start(ctx); err != nil {
			return err
		}
	}
	if spec.LeaderElect && spec.Replicas > 0 {
		if _, err := waitLeader(ctx, c.replicas, nil, readyTimeout); err != nil {
			return err
		}
	}
	logf(c.log, "dc-controller: %d replica(s), leader election %t, deployer mode %q", spec.Replicas, spec.LeaderElect, spec.DeployerMode)
	return nil
}

// Replicas returns the running set of replicas.
func (c *Controllers) Replicas() []*Replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Replica(nil), c.replicas...)
}

// WaitLeader waits until a replica other than except leads, and returns it.
func (c *Controllers) WaitLeader(ctx context.Context, except *Replica, timeout time.Duration) (*Replica, error) {
	return waitLeader(ctx, c.Replicas(), except, timeout)
}

// StopAll stops every replica.
func (c *Controllers) StopAll(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, r := range c.replicas {
		errs = append(errs, r.Stop(ctx))
	}
	c.replicas = nil
	c.spec = ControllerSpec{}
	return errors.Join(errs...)
}

// Logs returns the paths of every replica's log, oldest replica first.
func (c *Controllers) Logs() []string {
	logs, _ := filepath.Glob(filepath.Join(c.dir, "dc-controller-*.log"))
	return logs
}

// waitLeader polls the replicas' leadership until one other than except
// leads.
func waitLeader(ctx context.Context, replicas []*Replica, except *Replica, timeout time.Duration) (*Replica, error) {
	var leader *Replica
	err := wait.PollUntilContextTimeout(ctx, probePoll, timeout, true, func(ctx context.Context) (bool, error) {
		for _, r := range replicas {
			if r == except {
				continue
			}
			if leading, err := r.Leading(ctx); err == nil && leading {
				leader = r
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for a dc-controller replica to lead: %w", err)
	}
	return leader, nil
}

// Replica is one dc-controller process. A replica that exits on its own
// (a crash, or a lost leader election) starts again after a back-off, as a
// kubelet restarts a container; one that a test kills or stops does not.
type Replica struct {
	// Name names the replica in logs, e.g. dc-controller-2.
	Name string

	binary     string
	args       []string
	logPath    string
	pidPath    string
	metricsURL string
	healthURL  string
	log        io.Writer

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	wanted  bool
	crashes int
}

func newReplica(c *Controllers, name string, spec ControllerSpec) (*Replica, error) {
	metrics, err := freeAddress()
	if err != nil {
		return nil, err
	}
	health, err := freeAddress()
	if err != nil {
		return nil, err
	}
	return &Replica{
		Name:       name,
		binary:     c.binary,
		args:       replicaArgs(c.kubeconfig, metrics, health, spec),
		logPath:    filepath.Join(c.dir, name+".log"),
		pidPath:    filepath.Join(c.dir, name+pidSuffix),
		metricsURL: "http://" + metrics + "/metrics",
		healthURL:  "http://" + health + "/readyz",
		log:        c.log,
	}, nil
}

// replicaArgs are a replica's command-line arguments.
func replicaArgs(kubeconfig, metrics, health string, spec ControllerSpec) []string {
	args := []string{
		"--kubeconfig", kubeconfig,
		"--metrics-bind-address", metrics,
		"--health-probe-bind-address", health,
		"--leader-elect=" + strconv.FormatBool(spec.LeaderElect),
		"--leader-election-namespace", ControllerNamespace,
		// The suites' DeploymentConfigs ask for in-controller rollouts by
		// annotation.
		"--allow-deployer-mode-annotation",
	}
	if spec.DeployerMode != "" {
		args = append(args, "--deployer-mode="+spec.DeployerMode)
	}
	return args
}

// Start starts the replica's process and waits until it is ready.
func (r *Replica) Start(ctx context.Context) error {
	r.mu.Lock()
	r.wanted = true
	err := r.startLocked()
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return r.waitReady(ctx)
}

// Kill kills the process with SIGKILL, as a crash or an OOM kill would, and
// waits until it is gone. It stays down until Start.
func (r *Replica) Kill(ctx context.Context) error {
	return r.halt(ctx, syscall.SIGKILL, exitTimeout)
}

// Stop stops the process with SIGTERM (SIGKILL when it does not stop in
// time) and waits until it is gone.
func (r *Replica) Stop(ctx context.Context) error {
	if err := r.halt(ctx, syscall.SIGTERM, stopTimeout); err == nil {
		return nil
	}
	return r.Kill(ctx)
}

// PID is the process's ID; 0 while it does not run.
func (r *Replica) PID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// Crashes counts the times the process exited on its own.
func (r *Replica) Crashes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.crashes
}

// Leading reports whether the replica holds the leader election Lease,
// from its metrics.
func (r *Replica) Leading(ctx context.Context) (bool, error) {
	body, err := httpGet(ctx, r.metricsURL)
	if err != nil {
		return false, fmt.Errorf("reading the metrics of %s: %w", r.Name, err)
	}
	for _, line := range strings.Split(body, "\n") {
		if value, ok := strings.CutPrefix(line, leaderMetric+" "); ok {
			return strings.TrimSpace(value) == "1", nil
		}
	}
	return false, nil
}

// startLocked starts the process; r.mu is held.
func (r *Replica) startLocked() error {
	logFile, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening the log of %s: %w", r.Name, err)
	}
	defer logFile.Close()
	cmd := exec.Command(r.binary, r.args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", r.Name, err)
	}
	if err := os.WriteFile(r.pidPath, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("writing the PID file of %s: %w", r.Name, err)
	}
	exited := make(chan struct{})
	r.cmd, r.exited = cmd, exited
	go r.supervise(cmd, exited)
	logf(r.log, "%s started (pid %d, log %s)", r.Name, cmd.Process.Pid, r.logPath)
	return nil
}

// supervise waits for the process to end and starts it again when it was
// meant to run.
func (r *Replica) supervise(cmd *exec.Cmd, exited chan struct{}) {
	err := cmd.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	close(exited)
	if r.cmd != cmd {
		return
	}
	r.cmd = nil
	_ = os.Remove(r.pidPath)
	if !r.wanted {
		return
	}
	r.crashes++
	logf(r.log, "%s exited on its own (%v); starting it again in %s", r.Name, err, crashBackoff)
	time.AfterFunc(crashBackoff, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.wanted && r.cmd == nil {
			if err := r.startLocked(); err != nil {
				logf(r.log, "%s: %v", r.Name, err)
			}
		}
	})
}

// halt sends sig to the process and waits until it has exited.
func (r *Replica) halt(ctx context.Context, sig syscall.Signal, timeout time.Duration) error {
	r.mu.Lock()
	r.wanted = false
	cmd, exited := r.cmd, r.exited
	r.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signalling %s: %w", r.Name, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-exited:
		logf(r.log, "%s (pid %d) stopped by %v", r.Name, cmd.Process.Pid, sig)
		return nil
	case <-timer.C:
		return fmt.Errorf("%s (pid %d) did not exit within %s of %v", r.Name, cmd.Process.Pid, timeout, sig)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitReady waits until the replica's /readyz answers OK: its caches are
// synced.
func (r *Replica) waitReady(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, probePoll, readyTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := httpGet(ctx, r.healthURL)
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s to be ready (log %s): %w", r.Name, r.logPath, err)
	}
	return nil
}

// httpGet returns the body of a 200 answer.
func httpGet(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body), nil
}

// freeAddress returns a loopback address whose port nobody listens on.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
