// Command release builds a deployconfig release into --out: kubectl-dc for
// linux and darwin on amd64 and arm64 with SHA256SUMS and a krew plugin
// manifest, the images (dc-controller, dc-deploy, pause) with an SPDX SBOM
// each, and the Helm chart with its version, appVersion and image
// repositories set. Unless --dry-run is given it then pushes the images to
// --registry and the chart to --registry/charts as an OCI artifact.
// `make release VERSION=v0.x.y REGISTRY=host/path [DRY_RUN=1]` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// versionPattern is a release version: v, then semantic versioning.
var versionPattern = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// registryPattern is host[:port][/path] without scheme or tag.
var registryPattern = regexp.MustCompile(`^[a-zA-Z0-9.-]+(:[0-9]+)?(/[a-z0-9._/-]+)?$`)

// options are the command line's.
type options struct {
	root, out, version, registry, helm string
	dryRun                             bool
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err == nil {
		err = run(context.Background(), o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.StringVar(&o.root, "root", ".", "the checkout to release")
	fs.StringVar(&o.out, "out", "bin/release", "where the release is written (VERSION is appended)")
	fs.StringVar(&o.version, "version", "", "the release version, e.g. v0.1.0")
	fs.StringVar(&o.registry, "registry", "", "the OCI registry and path the images and the chart go to, e.g. ghcr.io/deployconfig")
	fs.StringVar(&o.helm, "helm", "bin/helm", "the helm binary that packages and pushes the chart")
	fs.BoolVar(&o.dryRun, "dry-run", false, "build everything and push nothing")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if !versionPattern.MatchString(o.version) {
		return o, fmt.Errorf("--version %q: want v and a semantic version, e.g. v0.1.0", o.version)
	}
	o.registry = strings.TrimSuffix(o.registry, "/")
	if !registryPattern.MatchString(o.registry) {
		return o, fmt.Errorf("--registry %q: want host[:port][/path] without a scheme or tag, e.g. ghcr.io/deployconfig", o.registry)
	}
	o.out = filepath.Join(o.out, o.version)
	return o, nil
}

func run(ctx context.Context, o options) error {
	commit, err := git(ctx, o.root, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	if err := os.RemoveAll(o.out); err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	archives, err := buildCLI(ctx, o, commit)
	if err != nil {
		return fmt.Errorf("kubectl-dc: %w", err)
	}
	if err := writeChecksums(o.out, archives); err != nil {
		return err
	}
	if err := writeKrewManifest(o.out, o.version, archives); err != nil {
		return err
	}
	images, err := buildImages(ctx, o, commit)
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	chart, err := packageChart(ctx, o)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if o.dryRun {
		fmt.Printf("dry run: would push %s and %s to oci://%s/charts\n", strings.Join(imageRefs(images), ", "), filepath.Base(chart), o.registry)
		return nil
	}
	if err := pushImages(ctx, images); err != nil {
		return err
	}
	return pushChart(ctx, o, chart)
}

// git runs git in dir and returns its output's first line.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// loopback reports whether a registry is on this machine, which is
// reached over plain HTTP (the tests' registries).
func loopback(registry string) bool {
	host, _, _ := strings.Cut(registry, "/")
	host, _, _ = strings.Cut(host, ":")
	return host == "localhost" || host == "127.0.0.1" || host == "[::1]"
}
