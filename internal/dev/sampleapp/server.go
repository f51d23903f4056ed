package sampleapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// shutdownGrace bounds how long a stopping server waits for requests in
// flight: a pod being deleted must exit promptly.
const shutdownGrace = 2 * time.Second

// Server answers the sample application's endpoints: GET / says who
// answered, /healthz is always 200, /readyz is 200 once ready and 503
// before.
type Server struct {
	cfg      Config
	hostname string
	ready    atomic.Bool
}

// NewServer returns a Server that is not ready yet.
func NewServer(cfg Config, hostname string) *Server {
	return &Server{cfg: cfg, hostname: hostname}
}

// SetReady changes what /readyz answers.
func (s *Server) SetReady(ready bool) { s.ready.Store(ready) }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		fmt.Fprintln(w, "ok")
	case "/readyz":
		if !s.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	case "/":
		if s.cfg.Version == "" {
			fmt.Fprintf(w, "%s from %s\n", s.cfg.Message, s.hostname)
			return
		}
		fmt.Fprintf(w, "%s from %s version %s\n", s.cfg.Message, s.hostname, s.cfg.Version)
	default:
		http.NotFound(w, r)
	}
}

// Run serves cfg's application on ln until ctx ends (exit code 0) or
// cfg.ExitAfter has passed (cfg.ExitCode), and returns the process's exit
// code. It writes one line to log at start and at each change of state.
func Run(ctx context.Context, cfg Config, ln net.Listener, hostname string, log io.Writer) int {
	s := NewServer(cfg, hostname)
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(log, "listening on %s: version %q, %s, %s\n", ln.Addr(), cfg.Version, readyPlan(cfg), exitPlan(cfg))

	becomeReady := after(cfg.Ready, cfg.ReadyAfter)
	exit := after(cfg.ExitAfter > 0, cfg.ExitAfter)
	for {
		select {
		case <-becomeReady:
			becomeReady = nil
			s.SetReady(true)
			fmt.Fprintln(log, "ready")
		case <-exit:
			fmt.Fprintf(log, "exiting with code %d after %s (EXIT_AFTER)\n", cfg.ExitCode, cfg.ExitAfter)
			stop(srv)
			return cfg.ExitCode
		case <-ctx.Done():
			fmt.Fprintf(log, "stopping: %v\n", context.Cause(ctx))
			stop(srv)
			return 0
		case err := <-served:
			fmt.Fprintf(log, "serve: %v\n", err)
			return 1
		}
	}
}

// after is a channel that fires once d has passed, or nil (never fires)
// when !enabled.
func after(enabled bool, d time.Duration) <-chan time.Time {
	if !enabled {
		return nil
	}
	return time.After(d)
}

// stop shuts srv down, waiting shutdownGrace at most for requests in flight.
func stop(srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
	}
}

// readyPlan says when the server becomes ready.
func readyPlan(cfg Config) string {
	if !cfg.Ready {
		return "never ready (READY=false)"
	}
	return fmt.Sprintf("ready after %s", cfg.ReadyAfter)
}

// exitPlan says when the server exits by itself.
func exitPlan(cfg Config) string {
	if cfg.ExitAfter <= 0 {
		return "runs until stopped"
	}
	return fmt.Sprintf("exits with code %d after %s", cfg.ExitCode, cfg.ExitAfter)
}
