package localprom

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
	"strings"
	"sync"
	"time"
)

// Defaults of Options.
const (
	// DefaultScrapeInterval is short so that a test sees a series change
	// within seconds.
	DefaultScrapeInterval = time.Second
	// readyTimeout bounds the wait for a started Prometheus to be ready.
	readyTimeout = 2 * time.Minute
	// stopTimeout is how long Stop waits after SIGTERM before it kills.
	stopTimeout = 10 * time.Second
)

// Options describe a Prometheus to start.
type Options struct {
	// Binary is the prometheus executable (bin/prometheus).
	Binary string
	// Targets are the host:port addresses it scrapes, e.g. Exporter.Addr().
	Targets []string
	// ScrapeInterval is how often it scrapes; zero is DefaultScrapeInterval.
	ScrapeInterval time.Duration
	// Dir holds its configuration, data and log; empty makes a temporary
	// directory that Close removes.
	Dir string
	// Port is the loopback port to listen on; zero picks a free one.
	Port int
}

// Server is a running (or stopped) Prometheus on 127.0.0.1.
type Server struct {
	opts    Options
	tempDir bool
	addr    string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start writes the configuration and starts Prometheus, listening on
// 127.0.0.1 only and keeping its data under the directory, and waits until
// it is ready.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.Binary == "" {
		return nil, errors.New("no prometheus binary given (hack/tools.sh prometheus builds bin/prometheus)")
	}
	if _, err := os.Stat(o.Binary); err != nil {
		return nil, fmt.Errorf("prometheus binary: %w (hack/tools.sh prometheus builds it)", err)
	}
	if o.ScrapeInterval <= 0 {
		o.ScrapeInterval = DefaultScrapeInterval
	}
	s := &Server{opts: o}
	if s.opts.Dir == "" {
		dir, err := os.MkdirTemp("", "dc-prometheus-")
		if err != nil {
			return nil, fmt.Errorf("make prometheus's directory: %w", err)
		}
		s.opts.Dir, s.tempDir = dir, true
	}
	if s.opts.Port == 0 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.opts.Port = port
	}
	s.addr = fmt.Sprintf("127.0.0.1:%d", s.opts.Port)
	if err := os.WriteFile(s.configPath(), []byte(s.config()), 0o600); err != nil {
		return nil, fmt.Errorf("write prometheus's configuration: %w", err)
	}
	if err := s.Restart(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// URL is the base URL of the HTTP API, e.g. http://127.0.0.1:39123.
func (s *Server) URL() string {
	return "http://" + s.addr
}

// LogPath is the file Prometheus logs to.
func (s *Server) LogPath() string {
	return filepath.Join(s.opts.Dir, "prometheus.log")
}

// Restart starts Prometheus again after Stop, on the same port and data,
// and waits until it is ready. It does nothing if it is running.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	logFile, err := os.OpenFile(s.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open prometheus's log: %w", err)
	}
	cmd := exec.Command(s.opts.Binary,
		"--config.file="+s.configPath(),
		"--storage.tsdb.path="+filepath.Join(s.opts.Dir, "data"),
		"--storage.tsdb.retention.time=1d",
		"--web.listen-address="+s.addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start prometheus: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	if err := waitReady(ctx, s.URL(), done); err != nil {
		return fmt.Errorf("prometheus did not get ready (log %s): %w", s.LogPath(), err)
	}
	return nil
}

// Stop ends Prometheus (SIGTERM, then SIGKILL) and waits for it: its API
// refuses connections until Restart.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	terminate(s.cmd.Process)
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd, s.done = nil, nil
	return nil
}

// Close stops Prometheus and removes a temporary directory.
func (s *Server) Close() {
	_ = s.Stop()
	if s.tempDir {
		_ = os.RemoveAll(s.opts.Dir)
	}
}

// configPath is the configuration file.
func (s *Server) configPath() string {
	return filepath.Join(s.opts.Dir, "prometheus.yml")
}

// config scrapes the targets every ScrapeInterval.
func (s *Server) config() string {
	quoted := make([]string, len(s.opts.Targets))
	for i, t := range s.opts.Targets {
		quoted[i] = fmt.Sprintf("%q", t)
	}
	return fmt.Sprintf(`global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
scrape_configs:
- job_name: app
  static_configs:
  - targets: [%[2]s]
`, s.opts.ScrapeInterval, strings.Join(quoted, ", "))
}

// freePort finds a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port for prometheus: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls /-/ready until it answers 200, the process ends or the
// time is up.
func waitReady(ctx context.Context, base string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/-/ready", nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("prometheus exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
