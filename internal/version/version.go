// Package version is what a deployconfig binary says about its own build:
// the release version and commit stamped by the linker (make build, make
// images, make release pass -ldflags -X), and the Go version it was built
// with.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// The linker sets these (-X ...internal/version.version=v0.1.0); they are
// never written at run time. A binary built without them is a development
// build.
var (
	version = "dev"
	commit  = ""
)

// Info is a binary's build.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Go      string `json:"goVersion"`
}

// Get returns the build of the running binary. Without a stamped commit it
// falls back to the one the Go toolchain recorded, if any.
func Get() Info {
	info := Info{Version: version, Commit: commit, Go: runtime.Version()}
	if info.Commit == "" {
		info.Commit = vcsRevision()
	}
	return info
}

// ForVersion returns the linker flags that stamp v and c into a build.
func ForVersion(v, c string) string {
	const pkg = "github.com/deployconfig/deployconfig/internal/version"
	return fmt.Sprintf("-X %s.version=%s -X %s.commit=%s", pkg, v, pkg, c)
}

// String is the line every binary prints for --version, e.g.
// "v0.1.0 (commit 1a2b3c4d, go1.26.0)".
func (i Info) String() string {
	return fmt.Sprintf("%s (commit %s, %s)", i.Version, i.Commit, i.Go)
}

func vcsRevision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
