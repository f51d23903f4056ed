//go:build unix

package playground

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The server lock says whether a server runs, and only one can hold it.
func TestServerLock(t *testing.T) {
	o := Options{Name: "lock-test", Workdir: t.TempDir(), BinDir: "/unused"}
	o, err := o.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(o.clusterDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, running := serverRunning(o); running {
		t.Fatal("a server runs before any took the lock")
	}
	release, err := HoldServerLock(o)
	if err != nil {
		t.Fatal(err)
	}
	pid, running := serverRunning(o)
	if !running || pid != os.Getpid() {
		t.Errorf("serverRunning = %d, %t; want this process", pid, running)
	}
	if _, err := HoldServerLock(o); !errors.Is(err, ErrServerRunning) {
		t.Errorf("a second server: %v, want ErrServerRunning", err)
	}
	release()
	if _, running := serverRunning(o); running {
		t.Error("the server still runs after releasing its lock")
	}
	if _, err := os.Stat(filepath.Join(o.clusterDir(), serverPIDFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the PID file is left: %v", err)
	}
}

func TestRunsBinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if !runsBinary(os.Getpid(), exe) {
		t.Error("this process does not run its own binary")
	}
	if runsBinary(os.Getpid(), "/bin/sh") {
		t.Error("this process runs /bin/sh")
	}
}

func TestReadPID(t *testing.T) {
	dir := t.TempDir()
	tests := map[string]int{"123\n": 123, "x": 0, "": 0}
	for content, want := range tests {
		path := filepath.Join(dir, strconv.Itoa(len(content))+".pid")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := readPID(path); got != want {
			t.Errorf("readPID(%q) = %d, want %d", content, got, want)
		}
	}
	if got := readPID(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("readPID of a missing file = %d", got)
	}
}
