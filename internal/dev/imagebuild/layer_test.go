package imagebuild

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestBuildLayerIsReproducible(t *testing.T) {
	a := []entry{fileEntry("usr/local/bin/app", 0o755, []byte("app")), symlinkEntry("bin/sh", "busybox"), fileEntry("etc/passwd", 0o644, []byte("x"))}
	reordered := []entry{a[2], a[0], a[1]}
	changed := []entry{fileEntry("usr/local/bin/app", 0o755, []byte("app2")), a[1], a[2]}
	tests := []struct {
		name     string
		entries  []entry
		wantSame bool
	}{
		{name: "same entries", entries: a, wantSame: true},
		{name: "same entries in another order", entries: reordered, wantSame: true},
		{name: "a file changed", entries: changed, wantSame: false},
	}
	base := layerDigest(t, a)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if same := layerDigest(t, tt.entries) == base; same != tt.wantSame {
				t.Errorf("same digest = %t, want %t", same, tt.wantSame)
			}
		})
	}
}

func layerDigest(t *testing.T, entries []entry) string {
	t.Helper()
	l, err := buildLayer(entries)
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

func TestWithParents(t *testing.T) {
	got := withParents([]entry{fileEntry("usr/local/bin/app", 0o755, nil), dirEntry("tmp", 0o1777), fileEntry("etc/passwd", 0o644, nil)})
	var paths []string
	for _, e := range got {
		paths = append(paths, e.path)
	}
	want := "etc etc/passwd tmp usr usr/local usr/local/bin usr/local/bin/app"
	if strings.Join(paths, " ") != want {
		t.Errorf("entries %v, want %s", paths, want)
	}
}

func TestBusyboxVersion(t *testing.T) {
	tests := []struct {
		name    string
		binary  string
		want    string
		wantErr bool
	}{
		{name: "banner among other strings",
			binary: "\x00syslogd started: BusyBox v1.35.0\x00BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1)\x00 multi-call",
			want:   "BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1)"},
		{name: "not busybox", binary: "\x7fELF toybox 0.8", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := busyboxVersion([]byte(tt.binary))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("got %q, %v; want %q (error %t)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestCheckStatic(t *testing.T) {
	script := filepath.Join(t.TempDir(), "sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkStatic(script, runtime.GOARCH); err == nil || !strings.Contains(err.Error(), "is not an ELF executable") {
		t.Errorf("a script: err = %v, want not an ELF executable", err)
	}
	if err := checkStatic(filepath.Join(t.TempDir(), "missing"), runtime.GOARCH); err == nil {
		t.Error("a missing file: no error")
	}
	busybox, err := FindShell(t.Context(), runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkStatic(busybox, runtime.GOARCH); err != nil {
		t.Errorf("Debian's static busybox: %v", err)
	}
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	if err := checkStatic(busybox, other); err == nil || !strings.Contains(err.Error(), "the images for "+other) {
		t.Errorf("this machine's busybox for %s images: err = %v, want one naming the architecture", other, err)
	}
}

// Without apt-get and without a cached package, FindShell says which package
// it needs and how to get it.
func TestFindShellWithoutApt(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	_, err := FindShell(t.Context(), runtime.GOARCH)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"apt-get not found", "busybox-static package", "apt-get download busybox-static", "static busybox"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
