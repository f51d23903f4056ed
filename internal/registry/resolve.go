package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
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
	var refused *RefusedAddressError
	if errors.As(err, &nerr) || errors.As(err, &refused) || ctx.Err() != nil {
		// The registry was not reached: a GET would not be either.
		return v1.Hash{}, fmt.Errorf("resolve %s: %w", tag, withoutBody(err))
	}
	got, getErr := remote.Get(tag, all...)
	if getErr != nil {
		return v1.Hash{}, fmt.Errorf("resolve %s: %w", tag, withoutBody(getErr))
	}
	return got.Digest, nil
}

// specErrorCodes are the error codes of the OCI distribution spec. A
// registry's error body may name them; they are words of the spec, not of
// the registry, so they may be repeated.
var specErrorCodes = map[transport.ErrorCode]bool{
	"BLOB_UNKNOWN": true, "BLOB_UPLOAD_INVALID": true, "BLOB_UPLOAD_UNKNOWN": true, "DIGEST_INVALID": true,
	"MANIFEST_BLOB_UNKNOWN": true, "MANIFEST_INVALID": true, "MANIFEST_UNKNOWN": true, "NAME_INVALID": true,
	"NAME_UNKNOWN": true, "SIZE_INVALID": true, "UNAUTHORIZED": true, "DENIED": true, "UNSUPPORTED": true,
	"TOOMANYREQUESTS": true,
}

// knownCodes lists the spec's error codes a registry's answer names, as
// " (CODE, ...)", or "".
func knownCodes(terr *transport.Error) string {
	var codes []string
	for _, d := range terr.Errors {
		if specErrorCodes[d.Code] && !slices.Contains(codes, string(d.Code)) {
			codes = append(codes, string(d.Code))
		}
	}
	if len(codes) == 0 {
		return ""
	}
	return " (" + strings.Join(codes, ", ") + ")"
}

// bodyFreeError is a registry error told without what the registry sent:
// its message says what went wrong in words of our own (an HTTP status, an
// address refused, a connection that failed), and it unwraps to the
// original so that IsTransient still sees its kind.
type bodyFreeError struct {
	msg string
	err error
}

func (e *bodyFreeError) Error() string { return e.msg }
func (e *bodyFreeError) Unwrap() error { return e.err }

// withoutBody returns err in words that carry nothing of a registry's
// response: whoever can read a DeploymentConfig reads its trigger errors
// (condition, events, the rollout latest answer), and a response body is
// whatever the host behind a user-chosen address answered.
func withoutBody(err error) error {
	var refused *RefusedAddressError
	var terr *transport.Error
	var nerr net.Error
	var msg string
	switch {
	case errors.As(err, &refused):
		msg = refused.Error()
	case errors.As(err, &terr):
		msg = fmt.Sprintf("the registry answered HTTP %d %s%s", terr.StatusCode, http.StatusText(terr.StatusCode), knownCodes(terr))
	case errors.Is(err, context.DeadlineExceeded):
		msg = "the registry did not answer in time"
	case errors.Is(err, context.Canceled):
		msg = "the lookup was cancelled"
	case errors.As(err, &nerr):
		// Dial, DNS and TLS errors name addresses and causes, never
		// response content.
		msg = "cannot reach the registry: " + nerr.Error()
	default:
		msg = "the registry's answer is not a valid image manifest"
	}
	return &bodyFreeError{msg: msg, err: err}
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
