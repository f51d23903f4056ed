package version

import (
	"runtime"
	"strings"
	"testing"
)

func TestInfoString(t *testing.T) {
	got := Info{Version: "v0.1.0", Commit: "1a2b3c4d", Go: "go1.26.0"}.String()
	if want := "v0.1.0 (commit 1a2b3c4d, go1.26.0)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestGetUnstamped(t *testing.T) {
	info := Get()
	if info.Version != "dev" || info.Commit == "" || info.Go != runtime.Version() {
		t.Errorf("an unstamped test binary reads %+v, want version dev, some commit and %s", info, runtime.Version())
	}
}

func TestForVersion(t *testing.T) {
	flags := ForVersion("v0.2.0", "abc")
	for _, want := range []string{"internal/version.version=v0.2.0", "internal/version.commit=abc"} {
		if !strings.Contains(flags, want) {
			t.Errorf("ForVersion = %q, missing %q", flags, want)
		}
	}
}
