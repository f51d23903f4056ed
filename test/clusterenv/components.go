package clusterenv

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// componentCheckInterval is how often the control plane's processes are
// looked at.
const componentCheckInterval = 2 * time.Second

// components plays, for the control plane that kwokctl's binary runtime
// runs as plain processes, the part of the kubelet that restarts static
// pods: kube-controller-manager and kube-scheduler exit when they lose
// their leader election Lease, which they do when the kube-apiserver is
// away for longer than their renew deadline, and nothing else would start
// them again.
type components struct {
	env *Env
	// mu is held while RestartAPIServer has the kube-apiserver down on
	// purpose, so that the kube-apiserver is not started behind its back.
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// superviseComponents starts the supervision; stop ends it.
func (e *Env) superviseComponents(ctx context.Context) *components {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &components{env: e, cancel: cancel, done: make(chan struct{})}
	go c.run(ctx)
	return c
}

// stop ends the supervision and waits for it.
func (c *components) stop() {
	c.cancel()
	<-c.done
}

func (c *components) run(ctx context.Context) {
	defer close(c.done)
	tick := time.NewTicker(componentCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c.restartStopped(ctx)
	}
}

// restartStopped starts the components that no longer run.
func (c *components) restartStopped(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stopped, err := c.stopped()
	if err != nil || len(stopped) == 0 {
		return
	}
	logf(c.env.log, "control plane components %s stopped; starting them again", strings.Join(stopped, ", "))
	if err := c.env.kwokctl(ctx, "start", "cluster", "--name", c.env.Options.Name); err != nil && ctx.Err() == nil {
		logf(c.env.log, "starting the control plane again: %v", err)
	}
}

// stopped lists the components whose process is gone.
func (c *components) stopped() ([]string, error) {
	clusterDir, err := c.env.Options.ClusterDir()
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(clusterDir, "pids", "*.pid"))
	if err != nil || len(files) == 0 {
		return nil, errors.Join(err, errors.New("no component PID files"))
	}
	var stopped []string
	for _, file := range files {
		pid, err := readPIDFile(file)
		if err != nil || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			stopped = append(stopped, strings.TrimSuffix(filepath.Base(file), ".pid"))
		}
	}
	return stopped, nil
}
