// Command images builds the project's container images from source
// (internal/dev/imagebuild) and writes them as an OCI image layout: `make
// images` runs it. It prints each image's name and digest.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "images: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	o := imagebuild.Options{}
	var out, tag string
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	fs.StringVar(&out, "out", "bin/images", "directory of the OCI image layout to write")
	fs.StringVar(&tag, "tag", "latest", "tag of every image in the layout's ref.name annotations")
	fs.StringVar(&o.Root, "root", ".", "the module's root directory")
	fs.StringVar(&o.Version, "version", "", "version label (default: git describe --tags --always --dirty)")
	fs.StringVar(&o.Revision, "revision", "", "revision label (default: git rev-parse HEAD)")
	fs.StringVar(&o.Source, "source", imagebuild.DefaultSource, "source label")
	fs.StringVar(&o.Arch, "arch", "", "the architecture (GOARCH) the images are built for: amd64 or arm64 (default: this machine's)")
	fs.StringVar(&o.ShellPath, "shell", "", "a static busybox for the deployer image (default: extracted from Debian's busybox-static package, fetched with apt-get download)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if o.Version == "" {
		o.Version = git(ctx, o.Root, "dev", "describe", "--tags", "--always", "--dirty")
	}
	if o.Revision == "" {
		o.Revision = imagebuild.GitRevision(ctx, o.Root)
	}
	images, err := imagebuild.Build(ctx, o)
	if err != nil {
		return err
	}
	if err := imagebuild.WriteLayout(out, tag, images); err != nil {
		return err
	}
	fmt.Printf("OCI image layout %s (version %s, revision %s):\n", out, o.Version, o.Revision)
	for _, img := range images {
		digest, err := img.Image.Digest()
		if err != nil {
			return fmt.Errorf("digest of %s: %w", img.Name, err)
		}
		size, err := compressedSize(img.Image)
		if err != nil {
			return fmt.Errorf("size of %s: %w", img.Name, err)
		}
		fmt.Printf("  %-34s %s %5.1f MB\n", img.Name+":"+tag, digest, float64(size)/1e6)
	}
	return nil
}

// compressedSize is what pulling img transfers: its layers, compressed.
func compressedSize(img v1.Image) (int64, error) {
	layers, err := img.Layers()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// git answers a git query about the checkout at dir, or def outside one.
func git(ctx context.Context, dir, def string, args ...string) string {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return def
	}
	return strings.TrimSpace(string(out))
}
