package bench

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
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
)

const (
	// deployerImage is the deployer image dc-controller puts in deployer
	// pods; the pod runtime runs it in-process.
	deployerImage = "deployconfig.io/deployer:bench"
	// controllerReadyTimeout bounds dc-controller's start.
	controllerReadyTimeout = 2 * time.Minute
	// controllerStopTimeout is how long it gets to stop on SIGTERM.
	controllerStopTimeout = 15 * time.Second
	// idlePoll and idleQuiet define "settled": queues empty and no worker
	// busy for idleQuiet, looked at every idlePoll.
	idlePoll  = time.Second
	idleQuiet = 5 * time.Second
)

// controllerProcess is dc-controller run from bin/ as a process of its
// own, so that its memory and CPU are its own.
type controllerProcess struct {
	// pid is the process whose usage is measured.
	pid     int
	metrics string
	// pprof is the base URL of its net/http/pprof handlers, "" if none.
	pprof   string
	started time.Time
	exited  chan struct{}
	// halt stops the controller and waits until it has stopped.
	halt func()
}

// startController starts bin/dc-controller against the cluster with the
// run's client settings and waits until it is ready. Its log goes to
// logPath.
func startController(ctx context.Context, e *env, logPath string) (*controllerProcess, error) {
	return startControllerArgs(ctx, e, logPath)
}

// startControllerArgs is startController with extra arguments for
// dc-controller (the in-flight scenario's --deployer-mode, for one).
func startControllerArgs(ctx context.Context, e *env, logPath string, extra ...string) (*controllerProcess, error) {
	return startControllerFrom(ctx, e, filepath.Join(e.opts.BinDir, "dc-controller"), logPath, extra...)
}

// startControllerFrom is startControllerArgs with the dc-controller
// binary to run (a baseline build's, for one).
func startControllerFrom(ctx context.Context, e *env, binary, logPath string, extra ...string) (*controllerProcess, error) {
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	healthAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	pprofAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening dc-controller's log: %w", err)
	}
	defer logFile.Close()
	o := e.opts
	cmd := exec.Command(binary,
		"--kubeconfig", e.cluster.Kubeconfig,
		"--deployer-image", deployerImage,
		"--workers", strconv.Itoa(o.ControllerWorkers),
		"--kube-api-qps", strconv.FormatFloat(o.ControllerQPS, 'f', -1, 64),
		"--kube-api-burst", strconv.Itoa(o.ControllerBurst),
		"--metrics-bind-address", metricsAddr,
		"--health-probe-bind-address", healthAddr,
		"--pprof-bind-address", pprofAddr,
	)
	cmd.Args = append(cmd.Args, extra...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting dc-controller: %w", err)
	}
	c := &controllerProcess{
		pid: cmd.Process.Pid, metrics: "http://" + metricsAddr + "/metrics", pprof: "http://" + pprofAddr + "/debug/pprof",
		started: time.Now(), exited: make(chan struct{}),
	}
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	c.halt = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(controllerStopTimeout):
			_ = cmd.Process.Kill()
			<-c.exited
		}
	}
	if err := c.waitReady(ctx, "http://"+healthAddr+"/readyz"); err != nil {
		c.stop()
		return nil, fmt.Errorf("%w (log: %s)", err, logPath)
	}
	return c, nil
}

// freeAddr picks a free loopback address for one of dc-controller's
// servers.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// waitReady waits until the controller's readiness endpoint answers 200.
func (c *controllerProcess) waitReady(ctx context.Context, url string) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, controllerReadyTimeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-c.exited:
			return false, errors.New("dc-controller exited")
		default:
		}
		return httpOK(ctx, url), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for dc-controller to be ready: %w", err)
	}
	return nil
}

// httpOK reports whether a GET of url answers 200.
func httpOK(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// usage reads the process's memory and CPU so far.
func (c *controllerProcess) usage() (procstat.Usage, error) {
	return procstat.Read(c.pid)
}

// scrape returns the controller's metrics, each summed over its series.
func (c *controllerProcess) scrape(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.metrics, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading dc-controller's metrics: %w", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing dc-controller's metrics: %w", err)
	}
	return sumFamilies(families), nil
}

// sumFamilies sums every counter and gauge over its series, and, for a
// series with a controller label, also over that controller's series, as
// name{controller="x"}.
func sumFamilies(families map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var v float64
			switch {
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Untyped != nil:
				v = m.GetUntyped().GetValue()
			}
			out[name] += v
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" {
					out[perController(name, l.GetValue())] += v
				}
			}
		}
	}
	return out
}

// perController is the key of one controller's sum of a metric.
func perController(metric, controller string) string {
	return metric + `{controller="` + controller + `"}`
}

// waitIdle waits until the controller has caught up: nothing queued and
// no worker busy, on every look for idleQuiet. Reconciles are not required
// to stop altogether: other components' writes to the objects it watches
// (kube-controller-manager's status updates, for one) keep bringing a few.
func (c *controllerProcess) waitIdle(ctx context.Context, timeout time.Duration) error {
	var quietSince time.Time
	err := wait.PollUntilContextTimeout(ctx, idlePoll, timeout, true, func(ctx context.Context) (bool, error) {
		m, err := c.scrape(ctx)
		if err != nil {
			return false, nil
		}
		if m["workqueue_depth"] > 0 || m["controller_runtime_active_workers"] > 0 || m["controller_runtime_reconcile_total"] == 0 {
			quietSince = time.Time{}
			return false, nil
		}
		if quietSince.IsZero() {
			quietSince = time.Now()
		}
		return time.Since(quietSince) >= idleQuiet, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for dc-controller to settle: %w", err)
	}
	return nil
}

// saveHeapProfile writes the process's heap profile to path.
func (c *controllerProcess) saveHeapProfile(ctx context.Context, path string) error {
	if c.pprof == "" {
		return errors.New("dc-controller serves no pprof here")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.pprof+"/heap", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("reading dc-controller's heap profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reading dc-controller's heap profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	return f.Close()
}

// stop stops the controller (a process gets SIGTERM, then SIGKILL).
func (c *controllerProcess) stop() {
	c.halt()
}
