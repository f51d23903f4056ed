package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
)

// chartDir is the chart a release packages.
const chartDir = "charts/deployconfig"

// packageChart packages the chart with its version and appVersion set to
// the release's and its images taken from the registry, and returns the
// package's path. The chart's version keeps the release's "v" (as
// cert-manager's does), so that `helm install --version v0.1.0` names the
// release as the images' tags do.
func packageChart(ctx context.Context, o options) (string, error) {
	tmp, err := os.MkdirTemp("", "deployconfig-chart-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "deployconfig")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(o.root, chartDir))); err != nil {
		return "", err
	}
	if err := edit(filepath.Join(dir, "Chart.yaml"), map[string]string{
		`(?m)^version: .*$`:    "version: " + o.version,
		`(?m)^appVersion: .*$`: "appVersion: " + o.version,
		// Artifact Hub's list of the chart's images.
		`(?m)^(\s+image: )ghcr\.io/deployconfig/dc-controller:latest$`: "${1}" + o.registry + "/dc-controller:" + o.version,
		`(?m)^(\s+image: )ghcr\.io/deployconfig/dc-deploy:latest$`:     "${1}" + o.registry + "/dc-deploy:" + o.version,
	}); err != nil {
		return "", err
	}
	if err := edit(filepath.Join(dir, "values.yaml"), map[string]string{
		`(?m)^(\s+repository: )ghcr\.io/deployconfig/dc-controller$`: "${1}" + o.registry + "/dc-controller",
		`(?m)^(\s+repository: )ghcr\.io/deployconfig/dc-deploy$`:     "${1}" + o.registry + "/dc-deploy",
	}); err != nil {
		return "", err
	}
	helm := helmPath(o)
	out, err := filepath.Abs(o.out)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, helm, "package", dir, "--destination", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("helm package: %w\n%s", err, msg)
	}
	return filepath.Join(out, "deployconfig-"+o.version+".tgz"), nil
}

// edit replaces, in the file at path, each pattern's one match.
func edit(path string, replacements map[string]string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	for pattern, with := range replacements {
		re := regexp.MustCompile(pattern)
		if n := len(re.FindAllStringIndex(text, -1)); n != 1 {
			return fmt.Errorf("%s: %d matches of %s, want 1", path, n, pattern)
		}
		text = re.ReplaceAllString(text, with)
	}
	return os.WriteFile(path, []byte(text), fs.FileMode(0o644))
}

// pushChart pushes the packaged chart to REGISTRY/charts.
func pushChart(ctx context.Context, o options, chart string) error {
	helm := helmPath(o)
	args := []string{"push", chart, "oci://" + o.registry + "/charts"}
	if loopback(o.registry) {
		args = append(args, "--plain-http")
	}
	msg, err := exec.CommandContext(ctx, helm, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("helm push: %w\n%s", err, msg)
	}
	fmt.Printf("%s", msg)
	return nil
}

// helmPath is the helm binary, relative paths taken from the checkout.
func helmPath(o options) string {
	if filepath.IsAbs(o.helm) {
		return o.helm
	}
	return filepath.Join(o.root, o.helm)
}
