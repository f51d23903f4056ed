//go:build !unix

package podruntime

import (
	"context"
	"errors"
	"io"
	"time"
)

// errNoProcesses is why local processes do not run here.
var errNoProcesses = errors.New("the local pod runtime runs processes on Unix systems only")

// processSpec is a local process to run for a container.
type processSpec struct {
	path    string
	args    []string
	env     []string
	dir     string
	pidFile string
}

// runProcess fails: process groups and signals are Unix features.
func runProcess(context.Context, processSpec, io.Writer, io.Writer, func() time.Duration) (int32, error) {
	return 0, errNoProcesses
}

// killLeftover does nothing where processes are not run.
func killLeftover(string) bool { return false }

// KillLeftovers does nothing where processes are not run.
func KillLeftovers(string) {}
