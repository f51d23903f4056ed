package nodebench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestContainerID(t *testing.T) {
	for in, want := range map[string]string{"containerd://abc123": "abc123", "abc123": "abc123", "": ""} {
		if got := containerID(in); got != want {
			t.Errorf("containerID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStatValue(t *testing.T) {
	stat := []byte("cache 4096\nrss 100\ntotal_cache 8192\ntotal_rss 2048\n")
	tests := []struct {
		key  string
		want uint64
		ok   bool
	}{{"total_rss", 2048, true}, {"rss", 100, true}, {"total_swap", 0, false}}
	for _, tt := range tests {
		got, ok := statValue(stat, tt.key)
		if got != tt.want || ok != tt.ok {
			t.Errorf("statValue(%s) = %d, %v; want %d, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseBytes(t *testing.T) {
	if v, err := parseBytes([]byte("12345\n")); err != nil || v != 12345 {
		t.Errorf("parseBytes = %d, %v; want 12345", v, err)
	}
	if _, err := parseBytes([]byte("max\n")); err == nil {
		t.Error("parseBytes(max) gave no error")
	}
}

// The sampler keeps the largest figures it read, from the pod's cgroup in
// any QoS class, and the container's once named; it still returns them
// after the cgroup is gone.
func TestSamplerKeepsThePeaks(t *testing.T) {
	root := t.TempDir()
	uid := types.UID("1234-abcd")
	pod := filepath.Join(root, "besteffort", "pod"+string(uid))
	container := filepath.Join(pod, "c0ffee")
	write := func(dir, name, content string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := startSampler(context.Background(), root, uid, time.Hour)
	s.sample() // no cgroup yet
	write(pod, "memory.max_usage_in_bytes", "3000\n")
	write(container, "memory.max_usage_in_bytes", "2000\n")
	write(container, "memory.stat", "total_rss 1500\n")
	s.sample() // pod only: the container is not named yet
	s.setContainer("containerd://c0ffee")
	s.sample()
	write(container, "memory.stat", "total_rss 900\n")
	s.sample()
	if err := os.RemoveAll(pod); err != nil {
		t.Fatal(err)
	}
	peaks, seen := s.stop()
	if !seen || peaks != (Peaks{Pod: 3000, Container: 2000, RSS: 1500}) {
		t.Errorf("stop() = %+v, %v; want pod 3000, container 2000, rss 1500, seen", peaks, seen)
	}
}

func TestSamplerNeverSeeingTheCgroup(t *testing.T) {
	s := startSampler(context.Background(), t.TempDir(), "nope", time.Hour)
	if peaks, seen := s.stop(); seen || peaks != (Peaks{}) {
		t.Errorf("stop() = %+v, %v; want nothing, not seen", peaks, seen)
	}
}

func TestLogSpan(t *testing.T) {
	log := []byte("2026-12-01T16:32:05.192855256Z --> Scaling up web-dc-6\n" +
		"2026-12-01T16:32:06.258789468Z     Scaling web-dc-5 down to 2\n" +
		"2026-12-01T16:32:10.747927878Z --> Success\n")
	first, last, err := logSpan(log)
	if err != nil {
		t.Fatal(err)
	}
	if got := last.Sub(first); got != 5555072622*time.Nanosecond {
		t.Errorf("span = %s, want 5.555072622s", got)
	}
	for _, bad := range []string{"", "no timestamp here\n"} {
		if _, _, err := logSpan([]byte(bad)); err == nil {
			t.Errorf("logSpan(%q) gave no error", bad)
		}
	}
}
