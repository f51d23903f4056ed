//go:build !unix

package playground

import (
	"context"
	"errors"
)

// errNoUnix is why the server cannot run here.
var errNoUnix = errors.New("dc-local serve needs a Unix system")

// StartServer fails: the server needs a Unix system.
func (c *Cluster) StartServer(context.Context, []string) (*Server, error) { return nil, errNoUnix }

// StartServer fails: the server needs a Unix system.
func StartServer(context.Context, Options, []string) (*Server, error) { return nil, errNoUnix }

// HoldServerLock fails: the server needs a Unix system.
func HoldServerLock(Options) (func(), error) { return nil, errNoUnix }

// StopServer has nothing to stop.
func StopServer(context.Context, Options) error { return nil }

// serverRunning cannot tell here; it assumes a server runs.
func serverRunning(Options) (int, bool) { return 0, true }
