package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestParseFlags(t *testing.T) {
	cases := []struct {
		args []string
		err  string
	}{
		{args: []string{"--version", "v0.1.0", "--registry", "127.0.0.1:5000/dc"}},
		{args: []string{"--version", "v1.2.3-rc.1", "--registry", "ghcr.io/deployconfig/"}},
		{args: []string{"--version", "0.1.0", "--registry", "ghcr.io/x"}, err: `--version "0.1.0": want v and a semantic version`},
		{args: []string{"--version", "cefd6ba-dirty", "--registry", "ghcr.io/x"}, err: "want v and a semantic version"},
		{args: []string{"--version", "v0.1.0"}, err: `--registry "": want host[:port][/path]`},
		{args: []string{"--version", "v0.1.0", "--registry", "https://ghcr.io/x"}, err: "without a scheme or tag"},
	}
	for _, tc := range cases {
		o, err := parseFlags(tc.args)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: err %v, want one saying %q", tc.args, err, tc.err)
		case tc.err == "" && (strings.HasSuffix(o.registry, "/") || !strings.HasSuffix(o.out, tc.args[1])):
			t.Errorf("%v: registry %q, out %q", tc.args, o.registry, o.out)
		}
	}
}

func TestTarGzIsReproducible(t *testing.T) {
	files := map[string]fileContent{"kubectl-dc": {[]byte("program"), 0o755}, "LICENSE": {[]byte("licence"), 0o644}}
	first, err := tarGz(files)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := tarGz(files)
	if !bytes.Equal(first, second) {
		t.Error("two archives of the same files differ")
	}
}

func TestChecksumsAndKrewManifest(t *testing.T) {
	dir := t.TempDir()
	archives := []archive{
		{os: "linux", arch: "amd64", file: "kubectl-dc_v0.1.0_linux_amd64.tar.gz", sha256: "aa"},
		{os: "darwin", arch: "arm64", file: "kubectl-dc_v0.1.0_darwin_arm64.tar.gz", sha256: "bb"},
	}
	if err := writeChecksums(dir, archives); err != nil {
		t.Fatal(err)
	}
	sums, _ := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if want := "aa  kubectl-dc_v0.1.0_linux_amd64.tar.gz\nbb  kubectl-dc_v0.1.0_darwin_arm64.tar.gz\n"; string(sums) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", sums, want)
	}
	if err := writeKrewManifest(dir, "v0.1.0", archives); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "dc.yaml"))
	var m struct {
		Kind     string
		Metadata struct{ Name string }
		Spec     struct {
			Version   string
			Platforms []struct {
				Selector struct{ MatchLabels map[string]string }
				URI      string
				SHA256   string
				Bin      string
			}
		}
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Kind != "Plugin" || m.Metadata.Name != "dc" || m.Spec.Version != "v0.1.0" || len(m.Spec.Platforms) != 2 {
		t.Fatalf("krew manifest:\n%s", data)
	}
	p := m.Spec.Platforms[1]
	if p.Selector.MatchLabels["os"] != "darwin" || p.Selector.MatchLabels["arch"] != "arm64" || p.SHA256 != "bb" || p.Bin != "kubectl-dc" ||
		p.URI != "https://github.com/deployconfig/deployconfig/releases/download/v0.1.0/kubectl-dc_v0.1.0_darwin_arm64.tar.gz" {
		t.Errorf("darwin/arm64 platform: %+v", p)
	}
}

func TestLoopback(t *testing.T) {
	for registry, want := range map[string]bool{"127.0.0.1:5000/dc": true, "localhost:5000": true, "ghcr.io/deployconfig": false, "127.0.0.1.example.com/x": false} {
		if got := loopback(registry); got != want {
			t.Errorf("loopback(%q) = %v, want %v", registry, got, want)
		}
	}
}
