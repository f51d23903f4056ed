package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/deployconfig/deployconfig/internal/controller"
)

// startProfiledController runs dc-controller inside dc-bench instead of
// as a process, with the same settings, and profiles dc-bench's CPU until
// it stops; then it writes cpu.pprof and heap.pprof to o.ProfileDir.
// dc-controller's binary serves no pprof endpoint, and this way its code
// is profiled with no change to it. The profile also holds the deployers
// and the pod runtime (they run in dc-bench); focus on the controller's
// packages (pprof -focus=internal/controller). Memory figures measured
// this way are dc-bench's, not dc-controller's.
func startProfiledController(ctx context.Context, e *env, logPath string) (*controllerProcess, error) {
	o := e.opts
	if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
		return nil, fmt.Errorf("making %s: %w", o.ProfileDir, err)
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	healthAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening dc-controller's log: %w", err)
	}
	// controller-runtime logs through its package logger; in profiling
	// mode dc-bench is the controller's main, so it sets it, once.
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))
	cfg := rest.CopyConfig(e.cluster.Config)
	cfg.QPS, cfg.Burst, cfg.UserAgent = float32(o.ControllerQPS), o.ControllerBurst, "dc-controller"
	mgr, err := controller.NewManager(cfg, controller.Options{
		DeployerImage: deployerImage, Workers: o.ControllerWorkers, MetricsAddr: metricsAddr, HealthAddr: healthAddr,
	})
	if err != nil {
		_ = logFile.Close()
		return nil, err
	}
	cpu, err := os.Create(filepath.Join(o.ProfileDir, "cpu.pprof"))
	if err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("writing the CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		_ = logFile.Close()
		_ = cpu.Close()
		return nil, fmt.Errorf("starting the CPU profile: %w", err)
	}
	mctx, cancel := context.WithCancel(ctx)
	c := &controllerProcess{pid: os.Getpid(), metrics: "http://" + metricsAddr + "/metrics", started: time.Now(), exited: make(chan struct{})}
	go func() {
		defer close(c.exited)
		if err := mgr.Start(mctx); err != nil {
			fmt.Fprintf(logFile, "dc-controller: %v\n", err)
		}
	}()
	c.halt = func() {
		cancel()
		<-c.exited
		pprof.StopCPUProfile()
		_ = cpu.Close()
		writeHeapProfile(filepath.Join(o.ProfileDir, "heap.pprof"))
		_ = logFile.Close()
	}
	if err := c.waitReady(ctx, "http://"+healthAddr+"/readyz"); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// writeHeapProfile writes a heap profile, best effort.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.WriteHeapProfile(f)
}
