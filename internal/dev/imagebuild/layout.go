package imagebuild

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// RefNameAnnotation is the OCI annotation naming an image of a layout.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout writes images as an OCI image layout in dir, replacing its
// index: each manifest is annotated RefNameAnnotation=<Name>:<tag>.
func WriteLayout(dir, tag string, images []Image) error {
	if tag == "" {
		return fmt.Errorf("write the image layout: the tag is empty")
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write the image layout %s: %w", dir, err)
	}
	for _, img := range images {
		ref := img.Name + ":" + tag
		if err := p.AppendImage(img.Image, layout.WithAnnotations(map[string]string{RefNameAnnotation: ref})); err != nil {
			return fmt.Errorf("write %s to the image layout %s: %w", ref, dir, err)
		}
	}
	return nil
}

// ByName indexes images by their repository name.
func ByName(images []Image) map[string]v1.Image {
	m := make(map[string]v1.Image, len(images))
	for _, img := range images {
		m[img.Name] = img.Image
	}
	return m
}
