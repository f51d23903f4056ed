package registry

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Tagged says what TagImage copied: the image, by digest, and the tag it
// now carries.
type Tagged struct {
	Source name.Digest
	Target name.Tag
}

// TagImage makes the tag dst point at the image src, as a tagImages hook
// does. src is the image a deployment runs: a digest reference, or a tag,
// which is resolved to its digest first so that what is tagged is one
// image and not whatever the tag points at later. dst must be a tag. The
// image (or image index) is copied when dst is in another repository, and
// only tagged when it is in the same one. Both ends authenticate with kc.
func TagImage(ctx context.Context, src, dst string, kc authn.Keychain, opts Options) (Tagged, error) {
	target, err := ParseTag(dst)
	if err != nil {
		return Tagged{}, fmt.Errorf("tag target: %w", err)
	}
	source, err := sourceDigest(ctx, src, kc, opts)
	if err != nil {
		return Tagged{}, err
	}
	all := append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(kc)}, opts...)
	desc, err := remote.Get(source, all...)
	if err != nil {
		return Tagged{}, fmt.Errorf("read %s: %w", source, err)
	}
	if err := push(desc, target, source.Context() == target.Context(), all); err != nil {
		return Tagged{}, fmt.Errorf("tag %s as %s: %w", source, target, err)
	}
	return Tagged{Source: source, Target: target}, nil
}

// sourceDigest returns the digest reference of the image src names.
func sourceDigest(ctx context.Context, src string, kc authn.Keychain, opts Options) (name.Digest, error) {
	ref, err := name.ParseReference(src)
	if err != nil {
		return name.Digest{}, fmt.Errorf("invalid image reference %q: %w", src, err)
	}
	if d, ok := ref.(name.Digest); ok {
		return d, nil
	}
	tag, ok := ref.(name.Tag)
	if !ok {
		return name.Digest{}, fmt.Errorf("invalid image reference %q", src)
	}
	auth, err := authn.Resolve(ctx, kc, tag.Context())
	if err != nil {
		return name.Digest{}, fmt.Errorf("credentials for %s: %w", tag.Context(), err)
	}
	hash, err := Resolve(ctx, tag, auth, opts)
	if err != nil {
		return name.Digest{}, err
	}
	return tag.Context().Digest(hash.String()), nil
}

// push writes what desc describes under the tag: in the same repository
// only the manifest is needed, elsewhere its blobs go along (mounted from
// the source when the registry is the same).
func push(desc *remote.Descriptor, target name.Tag, sameRepository bool, opts []remote.Option) error {
	if sameRepository {
		return remote.Tag(target, desc, opts...)
	}
	switch {
	case desc.MediaType.IsIndex():
		idx, err := desc.ImageIndex()
		if err != nil {
			return err
		}
		return remote.WriteIndex(target, idx, opts...)
	case desc.MediaType.IsImage():
		img, err := desc.Image()
		if err != nil {
			return err
		}
		return remote.Write(target, img, opts...)
	default:
		return fmt.Errorf("cannot copy a %s between repositories", desc.MediaType)
	}
}
