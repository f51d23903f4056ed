package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
)

// Deployer modes of the throughput scenario's DeploymentConfigs:
// dc-bench's names for dc-controller's --deployer-mode values.
const (
	ModePod        = report.ModePod
	ModeController = report.ModeController
)

// KnownModes lists the deployer modes a run can compare.
func KnownModes() []string {
	return []string{ModePod, ModeController}
}

// validateModes checks DCModes, defaulting it to ModePod.
func (o *Options) validateModes() error {
	if len(o.DCModes) == 0 {
		o.DCModes = []string{ModePod}
	}
	seen := map[string]bool{}
	for _, m := range o.DCModes {
		if !slices.Contains(KnownModes(), m) {
			return fmt.Errorf("unknown DC mode %q (want some of %v)", m, KnownModes())
		}
		if seen[m] {
			return fmt.Errorf("DC mode %q given twice", m)
		}
		seen[m] = true
	}
	if len(o.DCModes) > 1 && o.ProfileDir != "" {
		return errors.New("profiling runs dc-controller in-process in one deployer mode: give one DC mode")
	}
	return nil
}

// primaryMode is the mode of the scenarios that run DCs in one mode only
// (latency, hostile): the first of DCModes.
func (o Options) primaryMode() string {
	if len(o.DCModes) == 0 {
		return ModePod
	}
	return o.DCModes[0]
}

// deployerModeArgs are dc-controller's arguments for a mode. A run of pod
// mode alone passes none, so that it works with a dc-controller that
// predates the flag (pod is its default).
func (o Options) deployerModeArgs(mode string) []string {
	if mode == ModePod && len(o.DCModes) <= 1 {
		return nil
	}
	if mode == ModeController {
		return []string{"--deployer-mode=" + dcv1.DeployerModeControllerWhenPossible}
	}
	return []string{"--deployer-mode=" + dcv1.DeployerModePod}
}

// controllers runs dc-controller for the rollout scenarios, in one
// deployer mode at a time: switching modes restarts it with the other
// --deployer-mode (the namespaces of the previous mode are gone by then).
type controllers struct {
	r       *runner
	start   func(ctx context.Context, e *env, logPath string, mode string) (*controllerProcess, error)
	current *controllerProcess
	mode    string
	// usage is what each stopped process used.
	usage []procstat.Usage
}

// use makes sure dc-controller runs in mode; "" (a Deployment's turn)
// keeps whichever runs.
func (c *controllers) use(ctx context.Context, mode string) error {
	if c.current != nil && (mode == "" || mode == c.mode) {
		return nil
	}
	if mode == "" {
		mode = c.r.o.primaryMode()
	}
	c.stop()
	fmt.Fprintf(c.r.o.Log, "Starting dc-controller in %s mode...\n", mode)
	p, err := c.start(ctx, c.r.e, filepath.Join(c.r.e.dir, "dc-controller.log"), mode)
	if err != nil {
		return err
	}
	c.current, c.mode = p, mode
	return nil
}

// stop stops the running process, keeping what it used.
func (c *controllers) stop() {
	if c.current == nil {
		return
	}
	if u, err := c.current.usage(); err == nil {
		c.usage = append(c.usage, u)
	}
	c.current.stop()
	c.current = nil
}

// total is the processes' use together: the highest peak and the sum of
// their CPU; the resident set of the last one.
func (c *controllers) total() (procstat.Usage, bool) {
	if len(c.usage) == 0 {
		return procstat.Usage{}, false
	}
	t := c.usage[len(c.usage)-1]
	t.CPUSeconds = 0
	for _, u := range c.usage {
		t.PeakRSSBytes = max(t.PeakRSSBytes, u.PeakRSSBytes)
		t.CPUSeconds += u.CPUSeconds
	}
	return t, true
}
