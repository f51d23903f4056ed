package main

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
)

// The image indexes are pushed under their references, over plain HTTP to
// a registry on loopback, and read back with the digest that was pushed.
func TestPushImages(t *testing.T) {
	reg := registrytest.New(t)
	index, err := random.Index(512, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/deployconfig/dc-controller:v0.1.0"
	if err := pushImages(context.Background(), []image{{ref: ref, index: index}}); err != nil {
		t.Fatal(err)
	}
	want, _ := index.Digest()
	parsed, _ := name.ParseReference(ref, name.Insecure)
	desc, err := remote.Head(parsed)
	if err != nil || desc.Digest != want {
		t.Errorf("%s: %v, digest %v, want %v", ref, err, desc, want)
	}
}
