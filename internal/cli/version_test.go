package cli

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	f := newFixture(t)
	r := f.run("version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "kubectl-dc dev (commit ") || !strings.HasSuffix(r.stdout, ", "+runtime.Version()+")\n") {
		t.Errorf("kubectl dc version: %s", r)
	}
	r = f.run("version", "-o", "json")
	var info struct{ Version, Commit, GoVersion string }
	if err := json.Unmarshal([]byte(r.stdout), &info); r.code != 0 || err != nil || info.Version != "dev" || info.GoVersion != runtime.Version() || info.Commit == "" {
		t.Errorf("kubectl dc version -o json: %s (%v)", r, err)
	}
	r = f.run("version", "-o", "yaml")
	if r.code != 1 || !strings.Contains(r.stderr, `--output: "yaml" is not a format of version`) {
		t.Errorf("kubectl dc version -o yaml: %s", r)
	}
}
