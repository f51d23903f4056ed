package playground

import (
	"errors"
	"path/filepath"
)

// The playground's server is `dc-local serve`: dc-controller and the local
// pod runtime in one long-running process per cluster. Its files live in
// the cluster's directory, so that they go with the cluster:
//
//	serve.lock   held (flock) by the running server: the one truth of
//	             whether it runs, immune to stale PID files
//	serve.pid    its PID, for stopping it
//	serve.log    its output
//	dc-local/    the pod runtime's state (pods' logs and files)
const (
	serverLockFile = "serve.lock"
	serverPIDFile  = "serve.pid"
	serverLogFile  = "serve.log"
	runtimeDir     = "dc-local"
)

// ErrServerRunning is returned by HoldServerLock when the cluster's server
// already runs.
var ErrServerRunning = errors.New("a dc-local server already runs for this cluster")

// Server describes the running server of a cluster.
type Server struct {
	// PID is the server's process ID.
	PID int
	// Log is the path of its log file.
	Log string
	// Reused is true when the server was running already.
	Reused bool
}

// ServerLogPath is the path of the server's log file.
func (o Options) ServerLogPath() (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	return filepath.Join(o.clusterDir(), serverLogFile), nil
}

// RuntimeDir is the directory of the pod runtime's state.
func (o Options) RuntimeDir() (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	return filepath.Join(o.clusterDir(), runtimeDir), nil
}

// ServerRunning reports whether the cluster's server runs.
func ServerRunning(o Options) bool {
	o, err := o.withDefaults()
	if err != nil {
		return false
	}
	_, running := serverRunning(o)
	return running
}
