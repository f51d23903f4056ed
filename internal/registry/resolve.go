package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// ParseTag parses a tagged image reference such as
// registry.example.com/team/app:1. A reference without a tag means
// ":latest", as with docker; a digest reference is refused, since it names
// one image and can never change.
func ParseTag(ref string) (name.Tag, error) {
	if strings.Contains(ref, "@") {
		return name.Tag{}, fmt.Errorf("%q is a digest reference; a tag is required", ref)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return name.Tag{}, fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	// The OCI distribution spec starts a tag with a word character;
	// go-containerregistry is laxer.
	if s := tag.TagStr(); strings.HasPrefix(s, "-") || strings.HasPrefix(s, ".") {
		return name.Tag{}, fmt.Errorf("invalid image reference %q: a tag must not start with %q", ref, s[:1])
	}
	return tag, nil
}

// DigestReference returns the reference of the image with that digest in
// the repository of ref, keeping the repository as the user spelled it:
// "registry.example.com/app:1" becomes "registry.example.com/app@sha256:…"
// and "nginx:1" becomes "nginx@sha256:…".
func DigestReference(ref string, digest v1.Hash) (string, error) {
	if digest.Algorithm == "" || digest.Hex == "" {
		return "", fmt.Errorf("no digest for %q", ref)
	}
	repo := ref
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	// A colon after the last slash separates the tag; one before it
	// belongs to the registry's port.
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	out := repo + "@" + digest.String()
	if _, err := name.NewDigest(out); err != nil {
		return "", fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	return out, nil
}

// Options are options of every registry call: the HTTP transport and
// anything else go-containerregistry's remote package accepts.
type Options []remote.Option

// Resolve returns the digest a tag points at, with a manifest HEAD request
// authenticated by auth. When the registry answers the HEAD with an error,
// or a HEAD response lacking what is needed, a GET follows: some registries
// answer HEAD badly, and a GET's body says what is wrong.
func Resolve(ctx context.Context, tag name.Tag, auth authn.Authenticator, opts Options) (v1.Hash, error) {
	all := append([]remote.Option{remote.WithContext(ctx), remote.WithAuth(auth)}, opts...)
	desc, err := remote.Head(tag, all...)
	if err == nil {
		return desc.Digest, nil
	}
	var nerr net.Error
	if errors.As(err, &nerr) || ctx.Err() != nil {
		// The registry was not reached: a GET would not be either.
		return v1.Hash{}, fmt.Errorf("resolve %s: %w", tag, err)
	}
	got, getErr := remote.Get(tag, all...)
	if getErr != nil {
		return v1.Hash{}, fmt.Errorf("resolve %s: %w", tag, getErr)
	}
	return got.Digest, nil
}

// IsTransient reports whether an error says the registry, rather than the
// request, has a problem: it cannot be reached, it fails, it is overloaded
// or it rate-limits. Lookups back off from such a registry as a whole; an
// error about one repository (not found, unauthorized) does not.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	var terr *transport.Error
	if errors.As(err, &terr) {
		return terr.StatusCode >= http.StatusInternalServerError ||
			terr.StatusCode == http.StatusTooManyRequests ||
			terr.StatusCode == http.StatusRequestTimeout
	}
	var nerr net.Error
	if errors.As(err, &nerr) {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// NoRetries makes each registry request a single attempt. The image-trigger
// controller polls and backs off on its own schedule, so retries inside one
// lookup would only hold up its report of an unreachable registry.
func NoRetries() remote.Option {
	return remote.WithRetryBackoff(remote.Backoff{Duration: time.Second, Factor: 1, Steps: 1})
}

// TaggedReferencePattern is a regular expression (RE2, without
// backslashes, so that it fits a CEL string literal as it is) that
// matches exactly the tagged image references ParseTag accepts with an
// explicit tag: an optional registry (a host with a dot or a port, or
// localhost), lower-case repository path components, and a tag. The CRD's
// validation rules for tagImages targets and DockerImage trigger sources
// use it, so that what the API server admits is what the controller and
// the deployer can parse.
const TaggedReferencePattern = `^(?:(?:` + domainComponent + `(?:[.]` + domainComponent + `)+(?::[0-9]+)?|` +
	domainComponent + `:[0-9]+|localhost)/)?` + pathComponent + `(?:/` + pathComponent + `)*:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}$`

const (
	domainComponent = `[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?`
	pathComponent   = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
)
