//go:build unix

package podruntime

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// signalWriter collects output and closes ready the first time it sees
// the word.
type signalWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	word  string
	ready chan struct{}
	once  sync.Once
}

func newSignalWriter(word string) *signalWriter {
	return &signalWriter{word: word, ready: make(chan struct{})}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.word) {
		w.once.Do(func() { close(w.ready) })
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func shell(script string) processSpec {
	return processSpec{path: "/bin/sh", args: []string{"sh", "-c", script}, env: []string{"PATH=/usr/bin:/bin", "GREETING=hello"}}
}

func TestRunProcess(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		wantCode   int32
		wantStdout string
		wantStderr string
	}{
		{name: "success, with the given environment", script: `echo "$GREETING"; echo oops >&2`, wantCode: 0, wantStdout: "hello\n", wantStderr: "oops\n"},
		{name: "exit code", script: "exit 3", wantCode: 3},
		{name: "killed by a signal", script: "kill -KILL $$", wantCode: 137},
		{name: "output left by a background child does not keep it waiting", script: "echo main; (sleep 30; echo late) & exit 0", wantCode: 0, wantStdout: "main\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code, err := runProcess(t.Context(), shell(tt.script), &stdout, &stderr, func() time.Duration { return time.Second })
			if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode || stdout.String() != tt.wantStdout || stderr.String() != tt.wantStderr {
				t.Errorf("code %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout.String(), stderr.String(), tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %s", took)
			}
		})
	}
}

func TestRunProcessStartError(t *testing.T) {
	_, err := runProcess(t.Context(), processSpec{path: "/nonexistent/tool", args: []string{"tool"}}, &bytes.Buffer{}, &bytes.Buffer{}, func() time.Duration { return time.Second })
	if err == nil {
		t.Fatal("started a missing binary")
	}
}

// Stopping a process: SIGTERM to its group first; SIGKILL when it ignores
// SIGTERM for the grace period. Its pid file is gone afterwards.
func TestRunProcessStop(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		wantCode int32
	}{
		{name: "SIGTERM", script: "echo ready; sleep 30", wantCode: 143},
		{name: "SIGKILL after the grace period", script: "trap '' TERM; echo ready; while :; do sleep 1; done", wantCode: 137},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			spec := shell(tt.script)
			spec.pidFile = filepath.Join(t.TempDir(), "0.pid")
			out := newSignalWriter("ready")
			result := make(chan int32, 1)
			go func() {
				code, _ := runProcess(ctx, spec, out, &bytes.Buffer{}, func() time.Duration { return 500 * time.Millisecond })
				result <- code
			}()
			select {
			case <-out.ready:
			case <-time.After(10 * time.Second):
				t.Fatalf("the process did not start: %q", out.String())
			}
			if _, err := os.Stat(spec.pidFile); err != nil {
				t.Errorf("no pid file while the process runs: %v", err)
			}
			cancel()
			select {
			case code := <-result:
				if code != tt.wantCode {
					t.Errorf("exit code %d, want %d", code, tt.wantCode)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the process was not stopped")
			}
			if _, err := os.Stat(spec.pidFile); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the pid file is left: %v", err)
			}
		})
	}
}

func TestRunInProcess(t *testing.T) {
	boom := errors.New("pre hook failed: boom")
	// stuck is a deployer that ignores its context until the test ends.
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	tests := []struct {
		name        string
		deploy      DeployFunc
		cancel      bool
		wantCode    int32
		wantMessage string
		wantStderr  string
	}{
		{name: "success", deploy: func(context.Context, DeployerRun) error { return nil }},
		{name: "failure", deploy: func(context.Context, DeployerRun) error { return boom },
			wantCode: 1, wantMessage: boom.Error(), wantStderr: "error: pre hook failed: boom\n"},
		{name: "panic", deploy: func(context.Context, DeployerRun) error { panic("bug") },
			wantCode: 2, wantMessage: "internal error: bug", wantStderr: "error: internal error: bug\n"},
		{name: "stopped, and returns", cancel: true,
			deploy:   func(ctx context.Context, _ DeployerRun) error { <-ctx.Done(); return ctx.Err() },
			wantCode: 1, wantMessage: "context canceled", wantStderr: "error: context canceled\n"},
		{name: "stopped, and does not return in time", cancel: true,
			deploy:   func(context.Context, DeployerRun) error { <-stuck; return nil },
			wantCode: exitCodeKilled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			if tt.cancel {
				cancel()
			}
			defer cancel()
			var stderr bytes.Buffer
			run := DeployerRun{Stdout: &bytes.Buffer{}, Stderr: &stderr, Log: logr.Discard()}
			code, msg := runInProcess(ctx, tt.deploy, run, func() time.Duration { return 100 * time.Millisecond })
			if code != tt.wantCode || msg != tt.wantMessage || stderr.String() != tt.wantStderr {
				t.Errorf("code %d, message %q, stderr %q; want %d, %q, %q", code, msg, stderr.String(), tt.wantCode, tt.wantMessage, tt.wantStderr)
			}
		})
	}
}
