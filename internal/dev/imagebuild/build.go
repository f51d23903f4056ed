package imagebuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"

	"github.com/deployconfig/deployconfig/internal/version"
)

// The repositories the images are published under, without registry or tag.
const (
	ControllerImageName = "deployconfig/dc-controller"
	DeployerImageName   = "deployconfig/dc-deploy"
	PauseImageName      = "deployconfig/pause"
	SampleAppImageName  = "deployconfig/sample-app"
)

// DefaultSource is the org.opencontainers.image.source label unless
// Options.Source says otherwise.
const DefaultSource = "https://github.com/deployconfig/deployconfig"

// Label keys the images carry.
const (
	LabelSource      = "org.opencontainers.image.source"
	LabelRevision    = "org.opencontainers.image.revision"
	LabelVersion     = "org.opencontainers.image.version"
	LabelTitle       = "org.opencontainers.image.title"
	LabelDescription = "org.opencontainers.image.description"
	// LabelShell names the BusyBox build in the deployer image.
	LabelShell = "io.deployconfig.shell"
)

// User is the numeric non-root user and group every image runs as.
const User = "65532:65532"

// imagePath is PATH in every image.
const imagePath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Image is one built image and the repository name it is published under.
type Image struct {
	// Name is the repository path without registry or tag, e.g.
	// "deployconfig/dc-controller".
	Name  string
	Image v1.Image
}

// Options says what to build from and what to label the images with.
type Options struct {
	// Root is the module's root directory (where go.mod is).
	Root string
	// Version goes into the version label, e.g. "dev" or a git describe.
	Version string
	// Revision is the git commit, for the revision label.
	Revision string
	// Source is the source label; DefaultSource when empty.
	Source string
	// Arch is the GOARCH the images are built for (amd64 or arm64); this
	// machine's when empty.
	Arch string
	// ShellPath is the path of a statically linked busybox for the deployer
	// image, built for Arch; when empty FindShell finds or fetches one.
	ShellPath string
}

// arch is the architecture o builds for.
func (o Options) arch() string {
	if o.Arch == "" {
		return runtime.GOARCH
	}
	return o.Arch
}

// recipe is one image: which program it runs and what it says about itself.
type recipe struct {
	name        string
	pkg         string // the main package, relative to the module root
	binary      string // its binary name, in /usr/local/bin
	description string
	ports       []string
	// shell adds BusyBox's /bin/sh and applets.
	shell bool
	// deployer adds openshift-deploy, another name of dc-deploy.
	deployer bool
}

// recipes are the images Build makes, in the order it returns them.
func recipes() []recipe {
	return []recipe{
		{name: ControllerImageName, pkg: "./cmd/dc-controller", binary: "dc-controller",
			description: "deployconfig's controllers: DeploymentConfig, deployer pods and image-change triggers"},
		{name: DeployerImageName, pkg: "./cmd/dc-deploy", binary: "dc-deploy", shell: true, deployer: true,
			description: "deployconfig's deployer (also as openshift-deploy) with a BusyBox /bin/sh for custom strategies"},
		{name: PauseImageName, pkg: "./hack/pause", binary: "pause",
			description: "the pod sandbox process of deployconfig's test node"},
		{name: SampleAppImageName, pkg: "./cmd/dc-sample-app", binary: "dc-sample-app", ports: []string{"8080/tcp"},
			// A shell, as most application images have: lifecycle hooks run
			// `/bin/sh -c` in the application's image.
			shell:       true,
			description: "a sample HTTP application whose readiness and exit the environment controls, with a BusyBox /bin/sh for hooks"},
	}
}

// Build builds the four images (dc-controller, dc-deploy, pause and
// sample-app, in that order) for linux/o.Arch from the module at o.Root.
func Build(ctx context.Context, o Options) ([]Image, error) {
	if _, err := os.Stat(filepath.Join(o.Root, "go.mod")); err != nil {
		return nil, fmt.Errorf("options: Root %q must be the module's root directory (with go.mod): %w", o.Root, err)
	}
	if _, ok := elfMachines()[o.arch()]; !ok {
		return nil, fmt.Errorf("options: Arch %q: want one of amd64, arm64", o.Arch)
	}
	shellPath := o.ShellPath
	if shellPath == "" {
		var err error
		if shellPath, err = FindShell(ctx, o.arch()); err != nil {
			return nil, err
		}
	}
	shell, shellData, err := loadShell(shellPath, o.arch())
	if err != nil {
		return nil, err
	}
	bin, err := os.MkdirTemp("", "imagebuild-")
	if err != nil {
		return nil, fmt.Errorf("make a build directory: %w", err)
	}
	defer os.RemoveAll(bin)
	all := recipes()
	if err := goBuild(ctx, o, bin, all); err != nil {
		return nil, err
	}
	// Compressing the layers takes most of the time: one goroutine each.
	images := make([]Image, len(all))
	var g errgroup.Group
	for i, r := range all {
		g.Go(func() error {
			img, err := buildImage(r, o, filepath.Join(bin, r.binary), shell, shellData)
			if err != nil {
				return fmt.Errorf("image %s: %w", r.name, err)
			}
			images[i] = Image{Name: r.name, Image: img}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return images, nil
}

// goBuild builds every recipe's program as a static Linux binary into dir,
// in one go build so the links run in parallel, stamped with o's version.
func goBuild(ctx context.Context, o Options, dir string, all []recipe) error {
	v, revision := stamp(o)
	ldflags := "-ldflags=-s -w " + version.ForVersion(v, revision)
	args := []string{"build", "-trimpath", "-buildvcs=false", ldflags, "-o", dir + string(filepath.Separator)}
	for _, r := range all {
		args = append(args, r.pkg)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.arch())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// buildImage makes r's image around the binary at binPath.
func buildImage(r recipe, o Options, binPath string, shell Shell, shellData []byte) (v1.Image, error) {
	program, err := os.ReadFile(binPath)
	if err != nil {
		return nil, fmt.Errorf("read the binary: %w", err)
	}
	entrypoint := "/usr/local/bin/" + r.binary
	entries := append(baseEntries(), fileEntry(trimSlash(entrypoint), 0o755, program))
	labels := labelsFor(r, o)
	if r.shell {
		entries = append(entries, shellEntries(shellData)...)
		labels[LabelShell] = shell.Version
	}
	if r.deployer {
		entries = append(entries, symlinkEntry("usr/local/bin/openshift-deploy", "dc-deploy"))
	}
	layer, err := buildLayer(entries)
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "imagebuild: " + r.pkg, Comment: r.binary},
	})
	if err != nil {
		return nil, fmt.Errorf("add the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read the config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.arch()
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		User:       User,
		Entrypoint: []string{entrypoint},
		Env:        []string{imagePath},
		WorkingDir: "/",
		Labels:     labels,
	}
	if len(r.ports) > 0 {
		cf.Config.ExposedPorts = map[string]struct{}{}
		for _, p := range r.ports {
			cf.Config.ExposedPorts[p] = struct{}{}
		}
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("write the config: %w", err)
	}
	return img, nil
}

// labelsFor are r's OCI labels.
func labelsFor(r recipe, o Options) map[string]string {
	source := o.Source
	if source == "" {
		source = DefaultSource
	}
	v, revision := stamp(o)
	return map[string]string{
		LabelSource:      source,
		LabelRevision:    revision,
		LabelVersion:     v,
		LabelTitle:       r.binary,
		LabelDescription: r.description,
	}
}

// stamp is the version and revision an image's labels and its binary's
// --version say: o's, or "dev" and "unknown".
func stamp(o Options) (v, revision string) {
	v, revision = o.Version, o.Revision
	if v == "" {
		v = "dev"
	}
	if revision == "" {
		revision = "unknown"
	}
	return v, revision
}

// shellEntries are BusyBox with its applets in /bin (/bin/sh among them);
// the deployer image also gets openshift-deploy, the name OpenShift's
// custom strategies call the deployer by.
func shellEntries(busybox []byte) []entry {
	entries := []entry{
		fileEntry("bin/busybox", 0o755, busybox),
		// Scripts starting with #!/usr/bin/env sh.
		symlinkEntry("usr/bin/env", "../../bin/busybox"),
	}
	for _, applet := range shellApplets() {
		entries = append(entries, symlinkEntry("bin/"+applet, "busybox"))
	}
	return entries
}

// GitRevision is the commit checked out at root, for the revision label;
// "unknown" when git cannot tell.
func GitRevision(ctx context.Context, root string) string {
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if rev := strings.TrimSpace(string(out)); err == nil && rev != "" {
		return rev
	}
	return "unknown"
}
