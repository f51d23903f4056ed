package sampleapp

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{name: "defaults", want: Config{Port: 8080, Message: "hello", Ready: true}},
		{name: "everything set",
			env: map[string]string{"PORT": "9090", "MESSAGE": "hi", "VERSION": "v2", "READY": "false",
				"READY_AFTER": "1.5s", "EXIT_AFTER": "1m", "EXIT_CODE": "3"},
			want: Config{Port: 9090, Message: "hi", Version: "v2", Ready: false, ReadyAfter: 1500 * time.Millisecond,
				ExitAfter: time.Minute, ExitCode: 3}},
		{name: "bad port", env: map[string]string{"PORT": "http"}, wantErr: `PORT="http": want an integer from 1 to 65535`},
		{name: "port out of range", env: map[string]string{"PORT": "70000"}, wantErr: `PORT="70000": want an integer`},
		{name: "bad ready", env: map[string]string{"READY": "soon"}, wantErr: `READY="soon": want true or false`},
		{name: "bad duration", env: map[string]string{"READY_AFTER": "5"}, wantErr: `READY_AFTER="5": want a non-negative Go duration`},
		{name: "negative duration", env: map[string]string{"EXIT_AFTER": "-1s"}, wantErr: `EXIT_AFTER="-1s": want a non-negative`},
		{name: "bad exit code", env: map[string]string{"EXIT_CODE": "256"}, wantErr: `EXIT_CODE="256": want an integer from 0 to 255`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestServeHTTP(t *testing.T) {
	cfg := Config{Message: "hi", Version: "v7"}
	tests := []struct {
		name     string
		path     string
		ready    bool
		noVer    bool
		wantCode int
		wantBody string
	}{
		{name: "root", path: "/", wantCode: 200, wantBody: "hi from web-1 version v7\n"},
		{name: "root without a version", path: "/", noVer: true, wantCode: 200, wantBody: "hi from web-1\n"},
		{name: "healthz before ready", path: "/healthz", wantCode: 200, wantBody: "ok\n"},
		{name: "readyz before ready", path: "/readyz", wantCode: 503, wantBody: "not ready\n"},
		{name: "readyz when ready", path: "/readyz", ready: true, wantCode: 200, wantBody: "ready\n"},
		{name: "unknown path", path: "/nope", wantCode: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg
			if tt.noVer {
				c.Version = ""
			}
			s := NewServer(c, "web-1")
			s.SetReady(tt.ready)
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.wantCode {
				t.Errorf("code = %d, want %d", rec.Code, tt.wantCode)
			}
			if tt.wantBody != "" && rec.Body.String() != tt.wantBody {
				t.Errorf("body = %q, want %q", rec.Body.String(), tt.wantBody)
			}
		})
	}
}

// run is one Run of the server on a loopback port.
type run struct {
	url  string
	log  bytes.Buffer
	done chan int
	stop context.CancelCauseFunc
}

func startRun(t *testing.T, env map[string]string) *run {
	t.Helper()
	cfg, err := ParseConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	r := &run{url: "http://" + ln.Addr().String(), done: make(chan int, 1), stop: cancel}
	go func() { r.done <- Run(ctx, cfg, ln, "web-1", &r.log) }()
	t.Cleanup(func() { cancel(errors.New("test over")) })
	return r
}

// readyz answers the status code of /readyz, 0 when the server is gone.
func (r *run) readyz() int {
	resp, err := http.Get(r.url + "/readyz")
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// waitExit waits for Run's exit code.
func (r *run) waitExit(t *testing.T) int {
	t.Helper()
	select {
	case code := <-r.done:
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s")
		return -1
	}
}

// TestRun checks readiness over time and how the process ends: what a
// probe and the kubelet would see.
func TestRun(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		// sigterm stops the server once it is ready.
		sigterm   bool
		wantReady bool
		// notReadyFor is how long /readyz must answer 503 after start.
		notReadyFor time.Duration
		wantCode    int
		wantLog     []string
	}{
		{name: "ready at once, stopped by SIGTERM", sigterm: true, wantReady: true,
			wantLog: []string{"listening on 127.0.0.1:", "ready after 0s, runs until stopped", "\nready\n", "stopping: terminated"}},
		{name: "ready after READY_AFTER", env: map[string]string{"READY_AFTER": "700ms"}, sigterm: true, wantReady: true,
			notReadyFor: 700 * time.Millisecond, wantLog: []string{"ready after 700ms", "\nready\n", "stopping: terminated"}},
		{name: "never ready, exits with EXIT_CODE", env: map[string]string{"READY": "false", "EXIT_AFTER": "500ms", "EXIT_CODE": "3"},
			wantCode: 3, wantLog: []string{"never ready (READY=false), exits with code 3 after 500ms", "exiting with code 3 after 500ms (EXIT_AFTER)"}},
		{name: "ready, then exits 0", env: map[string]string{"EXIT_AFTER": "300ms"}, wantReady: true,
			wantLog: []string{"\nready\n", "exiting with code 0 after 300ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			r := startRun(t, tt.env)
			sawReady, readyAt := false, time.Duration(0)
			deadline := time.Now().Add(10 * time.Second)
			for !sawReady && time.Now().Before(deadline) && len(r.done) == 0 {
				switch code := r.readyz(); code {
				case http.StatusOK:
					sawReady, readyAt = true, time.Since(start)
				case http.StatusServiceUnavailable, 0:
					time.Sleep(20 * time.Millisecond)
				default:
					t.Fatalf("/readyz answered %d", code)
				}
			}
			if sawReady != tt.wantReady {
				t.Fatalf("ready = %t, want %t", sawReady, tt.wantReady)
			}
			if sawReady && readyAt < tt.notReadyFor {
				t.Errorf("ready %s after start, want not before %s", readyAt, tt.notReadyFor)
			}
			if tt.sigterm {
				r.stop(errors.New("terminated"))
			}
			if code := r.waitExit(t); code != tt.wantCode {
				t.Errorf("exit code = %d, want %d", code, tt.wantCode)
			}
			log := "\n" + r.log.String()
			for _, want := range tt.wantLog {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %q:%s", want, log)
				}
			}
			if !tt.wantReady && strings.Contains(log, "\nready\n") {
				t.Errorf("a never-ready server logged ready:%s", log)
			}
		})
	}
}
