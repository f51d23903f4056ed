package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
)

// released are the images a release pushes, with the main package of the
// program each runs (the sample application stays a test image).
var released = map[string]string{
	imagebuild.ControllerImageName: "./cmd/dc-controller",
	imagebuild.DeployerImageName:   "./cmd/dc-deploy",
	imagebuild.PauseImageName:      "./hack/pause",
}

// archs are the architectures the images are built for, each image's index
// holding one manifest per architecture (all for linux).
var archs = []string{"amd64", "arm64"}

// image is a built multi-architecture image and the reference it is
// pushed to.
type image struct {
	ref   string
	index v1.ImageIndex
}

// buildImages builds the released images for every architecture, makes an
// image index of each, names it under the registry with the version as
// tag, and writes each one's SBOM.
func buildImages(ctx context.Context, o options, commit string) ([]image, error) {
	root, err := filepath.Abs(o.root)
	if err != nil {
		return nil, err
	}
	indexes := map[string]v1.ImageIndex{}
	for _, arch := range archs {
		built, err := imagebuild.Build(ctx, imagebuild.Options{Root: root, Version: o.version, Revision: commit, Arch: arch})
		if err != nil {
			return nil, fmt.Errorf("linux/%s: %w", arch, err)
		}
		for _, b := range built {
			if _, ok := released[b.Name]; !ok {
				continue
			}
			if indexes[b.Name] == nil {
				indexes[b.Name] = mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
			}
			indexes[b.Name] = mutate.AppendManifests(indexes[b.Name], mutate.IndexAddendum{
				Add:        b.Image,
				Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
			})
		}
	}
	created, err := git(ctx, o.root, "log", "-1", "--format=%cI")
	if err != nil {
		return nil, err
	}
	var out []image
	for _, name := range slices.Sorted(maps.Keys(released)) {
		index, ok := indexes[name]
		if !ok {
			return nil, fmt.Errorf("%s was not built", name)
		}
		short := strings.TrimPrefix(name, "deployconfig/")
		ref := fmt.Sprintf("%s/%s:%s", o.registry, short, o.version)
		sbom, err := spdx(ctx, o.root, ref, released[name], created)
		if err != nil {
			return nil, fmt.Errorf("%s: SBOM: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(o.out, short+".spdx.json"), sbom, 0o644); err != nil {
			return nil, err
		}
		out = append(out, image{ref: ref, index: index})
	}
	return out, nil
}

// module is a Go module a binary is built from, as `go list` reports it.
type module struct {
	Path    string
	Version string
	Main    bool
	Replace *module
}

// spdx is an SPDX 2.3 document of the Go modules pkg is built from for
// Linux: what the binary's module information holds.
func spdx(ctx context.Context, root, ref, pkg, created string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-json=Module", pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "CGO_ENABLED=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list -deps %s: %w\n%s", pkg, err, stderr.String())
	}
	modules := map[string]module{}
	dec := json.NewDecoder(&stdout)
	for {
		var p struct{ Module *module }
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if p.Module != nil && !p.Module.Main {
			modules[p.Module.Path] = *p.Module
		}
	}
	paths := slices.Sorted(maps.Keys(modules))
	type externalRef struct {
		Category string `json:"referenceCategory"`
		Type     string `json:"referenceType"`
		Locator  string `json:"referenceLocator"`
	}
	type pkgEntry struct {
		Name             string        `json:"name"`
		SPDXID           string        `json:"SPDXID"`
		VersionInfo      string        `json:"versionInfo"`
		DownloadLocation string        `json:"downloadLocation"`
		ExternalRefs     []externalRef `json:"externalRefs"`
	}
	pkgs := []pkgEntry{}
	for i, p := range paths {
		m := modules[p]
		if m.Replace != nil && m.Replace.Version != "" {
			m.Version = m.Replace.Version
		}
		pkgs = append(pkgs, pkgEntry{
			Name: p, SPDXID: fmt.Sprintf("SPDXRef-Package-%d", i+1), VersionInfo: m.Version, DownloadLocation: "NOASSERTION",
			ExternalRefs: []externalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/" + p + "@" + m.Version}},
		})
	}
	doc := map[string]any{
		"spdxVersion":       "SPDX-2.3",
		"dataLicense":       "CC0-1.0",
		"SPDXID":            "SPDXRef-DOCUMENT",
		"name":              ref,
		"documentNamespace": "https://github.com/deployconfig/deployconfig/sbom/" + ref,
		"creationInfo":      map[string]any{"created": created, "creators": []string{"Tool: deployconfig hack/release"}},
		"packages":          pkgs,
	}
	return json.MarshalIndent(doc, "", "  ")
}

func imageRefs(images []image) []string {
	refs := make([]string, len(images))
	for i, im := range images {
		refs[i] = im.ref
	}
	return refs
}

// pushImages pushes each image's index, with its images, to its reference.
func pushImages(ctx context.Context, images []image) error {
	for _, im := range images {
		var opts []name.Option
		if loopback(im.ref) {
			opts = append(opts, name.Insecure)
		}
		ref, err := name.ParseReference(im.ref, opts...)
		if err != nil {
			return err
		}
		if err := remote.WriteIndex(ref, im.index, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("push %s: %w", im.ref, err)
		}
		fmt.Println("pushed", im.ref)
	}
	return nil
}
