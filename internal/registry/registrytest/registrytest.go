// Package registrytest serves an in-memory container registry on loopback
// for tests, optionally behind basic authentication, and pushes random
// images to it.
package registrytest

import (
	"crypto/subtle"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Server is a registry serving on 127.0.0.1 over plain HTTP, which
// go-containerregistry uses for loopback registries.
type Server struct {
	// Host is the registry's host:port, e.g. 127.0.0.1:41234.
	Host string

	user, password string
	manifestHeads  atomic.Int64
	server         *httptest.Server
}

// Option configures a Server.
type Option func(*Server)

// WithBasicAuth puts basic authentication in front of the registry.
func WithBasicAuth(user, password string) Option {
	return func(s *Server) { s.user, s.password = user, password }
}

// New starts a registry that stops when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{}
	for _, opt := range opts {
		opt(s)
	}
	s.server = httptest.NewServer(s.handler(registry.New(registry.Logger(log.New(io.Discard, "", 0)))))
	t.Cleanup(s.server.Close)
	s.Host = strings.TrimPrefix(s.server.URL, "http://")
	return s
}

// handler counts manifest HEADs and checks credentials in front of the
// registry.
func (s *Server) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.user != "" {
			user, password, ok := r.BasicAuth()
			if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(s.user)) != 1 ||
				subtle.ConstantTimeCompare([]byte(password), []byte(s.password)) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="registrytest"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
		}
		if r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/manifests/") {
			s.manifestHeads.Add(1)
		}
		next.ServeHTTP(w, r)
	})
}

// Close stops the registry: from then on it cannot be reached.
func (s *Server) Close() { s.server.Close() }

// ManifestHeads returns how many manifest HEAD requests the registry has
// answered (after authentication).
func (s *Server) ManifestHeads() int64 { return s.manifestHeads.Load() }

// Auth returns the authenticator of the registry's credentials.
func (s *Server) Auth() authn.Authenticator {
	if s.user == "" {
		return authn.Anonymous
	}
	return &authn.Basic{Username: s.user, Password: s.password}
}

// Ref returns the reference of a repository path (and tag) on the registry,
// e.g. Ref("app:v1").
func (s *Server) Ref(path string) string { return s.Host + "/" + path }

// Push pushes a new random image to ref (a repository path and tag on this
// registry, e.g. "app:v1") and returns its digest.
func (s *Server) Push(t testing.TB, ref string) v1.Hash {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatalf("random image: %v", err)
	}
	tag, err := name.NewTag(s.Ref(ref))
	if err != nil {
		t.Fatalf("parse %s: %v", ref, err)
	}
	if err := remote.Write(tag, img, remote.WithAuth(s.Auth())); err != nil {
		t.Fatalf("push %s: %v", tag, err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatalf("digest: %v", err)
	}
	return digest
}

// Digest returns the digest the tag ref (e.g. "app:v1") points at.
func (s *Server) Digest(t testing.TB, ref string) v1.Hash {
	t.Helper()
	tag, err := name.NewTag(s.Ref(ref))
	if err != nil {
		t.Fatalf("parse %s: %v", ref, err)
	}
	desc, err := remote.Get(tag, remote.WithAuth(s.Auth()))
	if err != nil {
		t.Fatalf("get %s: %v", tag, err)
	}
	return desc.Digest
}
