package registry

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"

	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
)

func TestTagImage(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t, registrytest.WithBasicAuth("user", "secret"))
	kc, err := NewKeychain([]corev1.Secret{dockerConfigSecret("pull", `{"auths": {"`+reg.Host+`": {"username": "user", "password": "secret"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	v1 := reg.Push(t, "app:v1")
	byDigest := reg.Ref("app@" + v1.String())

	tests := []struct {
		name, src, dst string
	}{
		{name: "same repository", src: byDigest, dst: reg.Ref("app:prod")},
		{name: "another repository", src: byDigest, dst: reg.Ref("released/app:1.0")},
		{name: "a tag is copied by its digest", src: reg.Ref("app:v1"), dst: reg.Ref("app:from-tag")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TagImage(ctx, tt.src, tt.dst, kc, nil)
			if err != nil {
				t.Fatalf("TagImage: %v", err)
			}
			if got.Source.DigestStr() != v1.String() || got.Target.String() != tt.dst {
				t.Errorf("TagImage = %s -> %s", got.Source, got.Target)
			}
			dst, _ := ParseTag(tt.dst)
			if d := reg.Digest(t, dst.Context().RepositoryStr()+":"+dst.TagStr()); d != v1 {
				t.Errorf("%s points at %s, want %s", tt.dst, d, v1)
			}
		})
	}
}

func TestTagImageCopiesAnIndex(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	idx, err := random.Index(128, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := name.NewTag(reg.Ref("multi:v1"))
	if err := remote.WriteIndex(src, idx); err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	if _, err := TagImage(ctx, src.String(), reg.Ref("other/multi:v1"), &Keychain{}, nil); err != nil {
		t.Fatalf("TagImage: %v", err)
	}
	if got := reg.Digest(t, "other/multi:v1"); got != want {
		t.Errorf("copied index digest %s, want %s", got, want)
	}
}

func TestTagImageErrors(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t, registrytest.WithBasicAuth("user", "secret"))
	v1 := reg.Push(t, "app:v1")
	byDigest := reg.Ref("app@" + v1.String())
	tests := []struct {
		name, src, dst string
		kc             authn.Keychain
	}{
		{name: "target is a digest", src: byDigest, dst: byDigest, kc: &Keychain{}},
		{name: "target is not a reference", src: byDigest, dst: "not a reference", kc: &Keychain{}},
		{name: "source is not a reference", src: "Not A Ref", dst: reg.Ref("app:prod"), kc: &Keychain{}},
		{name: "no credentials", src: byDigest, dst: reg.Ref("app:prod"), kc: &Keychain{}},
		{name: "missing source", src: reg.Ref("app:missing"), dst: reg.Ref("app:prod"), kc: &Keychain{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := TagImage(ctx, tt.src, tt.dst, tt.kc, Options{NoRetries()}); err == nil {
				t.Error("no error")
			}
		})
	}
}
