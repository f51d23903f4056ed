package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/yaml"

	"github.com/deployconfig/deployconfig/internal/version"
)

// platforms are the ones kubectl-dc is released for.
var platforms = []struct{ os, arch string }{
	{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"},
}

// archive is one platform's kubectl-dc.
type archive struct {
	os, arch, file, sha256 string
}

// buildCLI builds kubectl-dc for every platform, each in a tar.gz with the
// licence. The builds are mostly links, one core each: they run side by
// side.
func buildCLI(ctx context.Context, o options, commit string) ([]archive, error) {
	license, err := os.ReadFile(filepath.Join(o.root, "LICENSE"))
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "kubectl-dc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := make([]archive, len(platforms))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.NumCPU())
	for i, p := range platforms {
		g.Go(func() error {
			bin := filepath.Join(tmp, p.os+"-"+p.arch, "kubectl-dc")
			cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false",
				"-ldflags=-s -w "+version.ForVersion(o.version, commit), "-o", bin, "./cmd/kubectl-dc")
			cmd.Dir = o.root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.os, "GOARCH="+p.arch)
			if msg, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("go build for %s/%s: %w\n%s", p.os, p.arch, err, msg)
			}
			program, err := os.ReadFile(bin)
			if err != nil {
				return err
			}
			name := fmt.Sprintf("kubectl-dc_%s_%s_%s.tar.gz", o.version, p.os, p.arch)
			data, err := tarGz(map[string]fileContent{"kubectl-dc": {program, 0o755}, "LICENSE": {license, 0o644}})
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(o.out, name), data, 0o644); err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			out[i] = archive{os: p.os, arch: p.arch, file: name, sha256: hex.EncodeToString(sum[:])}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

type fileContent struct {
	data []byte
	mode int64
}

// tarGz is a reproducible tar.gz of files: sorted, with no times or
// owners, so the same commit gives the same checksums.
func tarGz(files map[string]fileContent) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		f := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: f.mode, Size: int64(len(f.data)), Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeChecksums writes SHA256SUMS in sha256sum's format.
func writeChecksums(dir string, archives []archive) error {
	var b strings.Builder
	for _, a := range archives {
		fmt.Fprintf(&b, "%s  %s\n", a.sha256, a.file)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}

// releaseURL is where a release's files are downloaded from.
const releaseURL = "https://github.com/deployconfig/deployconfig/releases/download"

// writeKrewManifest writes dc.yaml, the krew plugin manifest of the
// archives (krew installs `kubectl dc` from it).
func writeKrewManifest(dir, v string, archives []archive) error {
	type selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	}
	type file struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	type platform struct {
		Selector selector `json:"selector"`
		URI      string   `json:"uri"`
		SHA256   string   `json:"sha256"`
		Files    []file   `json:"files"`
		Bin      string   `json:"bin"`
	}
	var ps []platform
	for _, a := range archives {
		ps = append(ps, platform{
			Selector: selector{MatchLabels: map[string]string{"os": a.os, "arch": a.arch}},
			URI:      fmt.Sprintf("%s/%s/%s", releaseURL, v, a.file),
			SHA256:   a.sha256,
			Files:    []file{{From: "kubectl-dc", To: "."}, {From: "LICENSE", To: "."}},
			Bin:      "kubectl-dc",
		})
	}
	manifest := map[string]any{
		"apiVersion": "krew.googlecontainertools.github.com/v1alpha2",
		"kind":       "Plugin",
		"metadata":   map[string]any{"name": "dc"},
		"spec": map[string]any{
			"version":          v,
			"homepage":         "https://github.com/deployconfig/deployconfig",
			"shortDescription": "Roll out, inspect and convert DeploymentConfigs",
			"description":      "kubectl dc manages DeploymentConfigs (apps.deployconfig.io/v1): rollouts with\nhooks, triggers, history and rollback, canary and blue-green, and converts\nOpenShift DeploymentConfigs and Argo Rollouts.\n",
			"platforms":        ps,
		},
	}
	data, err := yaml.Marshal(manifest)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "dc.yaml"), data, 0o644)
}
