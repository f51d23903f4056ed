package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The kubelet stops a sandbox with SIGTERM (a user at a terminal with
// SIGINT): pause exits 0 on either.
func TestExitsZeroOnSignal(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "pause")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			if !bufio.NewScanner(stderr).Scan() {
				t.Fatal("pause exited before it was ready")
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("after %s: %v, want exit code 0", sig, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("pause still running 10s after %s", sig)
			}
		})
	}
}
