package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
)

func TestDigestReference(t *testing.T) {
	digest := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}
	tests := []struct {
		ref, want string
		wantErr   bool
	}{
		{ref: "registry.example.com/app:1", want: "registry.example.com/app@" + digest.String()},
		{ref: "registry.example.com:5000/team/app:v1.2", want: "registry.example.com:5000/team/app@" + digest.String()},
		{ref: "registry.example.com:5000/app", want: "registry.example.com:5000/app@" + digest.String()},
		{ref: "nginx:1.27", want: "nginx@" + digest.String()},
		{ref: "nginx", want: "nginx@" + digest.String()},
		{ref: "localhost/app:latest", want: "localhost/app@" + digest.String()},
		{ref: "registry.example.com/app:1@sha256:" + strings.Repeat("cd", 32), want: "registry.example.com/app@" + digest.String()},
		{ref: "Not A Reference:1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			got, err := DigestReference(tt.ref, digest)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("DigestReference = %q, %v; want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
	if _, err := DigestReference("registry.example.com/app:1", v1.Hash{}); err == nil {
		t.Error("an empty digest gave no error")
	}
}

func TestParseTag(t *testing.T) {
	tests := []struct {
		ref, want string
		wantErr   bool
	}{
		{ref: "registry.example.com/app:1", want: "registry.example.com/app:1"},
		{ref: "127.0.0.1:5000/app", want: "127.0.0.1:5000/app:latest"},
		{ref: "nginx:1", want: "index.docker.io/library/nginx:1"},
		{ref: "registry.example.com/app@sha256:" + strings.Repeat("ab", 32), wantErr: true},
		{ref: "registry.example.com/app:", wantErr: true},
		{ref: "UPPER/app:1", wantErr: true},
		{ref: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			got, err := ParseTag(tt.ref)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseTag error = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && got.Name() != tt.want {
				t.Errorf("ParseTag = %q, want %q", got.Name(), tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	want := reg.Push(t, "app:v1")

	tag, _ := ParseTag(reg.Ref("app:v1"))
	got, err := Resolve(ctx, tag, authn.Anonymous, nil)
	if err != nil || got != want {
		t.Fatalf("Resolve = %v, %v; want %v", got, err, want)
	}
	if reg.ManifestHeads() == 0 {
		t.Error("the digest was not resolved with a HEAD request")
	}

	missing, _ := ParseTag(reg.Ref("app:missing"))
	_, err = Resolve(ctx, missing, authn.Anonymous, nil)
	if err == nil || IsTransient(err) {
		t.Errorf("missing tag: error %v, transient %v", err, IsTransient(err))
	}
	// The GET after the failed HEAD says what is wrong.
	if err != nil && !strings.Contains(err.Error(), "MANIFEST_UNKNOWN") {
		t.Errorf("missing tag error does not explain: %v", err)
	}
}

func TestResolveWithCredentials(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t, registrytest.WithBasicAuth("user", "secret"))
	want := reg.Push(t, "app:v1")
	tag, _ := ParseTag(reg.Ref("app:v1"))

	got, err := Resolve(ctx, tag, &authn.Basic{Username: "user", Password: "secret"}, nil)
	if err != nil || got != want {
		t.Fatalf("Resolve with credentials = %v, %v; want %v", got, err, want)
	}
	for name, auth := range map[string]authn.Authenticator{
		"anonymous": authn.Anonymous,
		"wrong":     &authn.Basic{Username: "user", Password: "wrong"},
	} {
		_, err := Resolve(ctx, tag, auth, nil)
		var terr *transport.Error
		if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized || IsTransient(err) {
			t.Errorf("%s credentials: error %v, transient %v", name, err, IsTransient(err))
		}
	}
}

func TestResolveUnreachableRegistryIsTransient(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	tag, _ := ParseTag(addr + "/app:v1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = Resolve(ctx, tag, authn.Anonymous, Options{NoRetries()})
	if err == nil || !IsTransient(err) {
		t.Errorf("unreachable registry: error %v, transient %v", err, IsTransient(err))
	}
}

func TestIsTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{err: nil, want: false},
		{err: &transport.Error{StatusCode: http.StatusServiceUnavailable}, want: true},
		{err: &transport.Error{StatusCode: http.StatusTooManyRequests}, want: true},
		{err: fmt.Errorf("wrapped: %w", &transport.Error{StatusCode: http.StatusBadGateway}), want: true},
		{err: &transport.Error{StatusCode: http.StatusNotFound}, want: false},
		{err: &transport.Error{StatusCode: http.StatusUnauthorized}, want: false},
		{err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}, want: true},
		{err: context.DeadlineExceeded, want: true},
		{err: errors.New("invalid reference"), want: false},
	}
	for _, tt := range tests {
		if got := IsTransient(tt.err); got != tt.want {
			t.Errorf("IsTransient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestTaggedReferencePatternAgreesWithParseTag(t *testing.T) {
	re := regexp.MustCompile(TaggedReferencePattern)
	if strings.Contains(TaggedReferencePattern, `\`) {
		t.Error("the pattern has a backslash, which a CEL string literal would need escaped")
	}
	tests := []struct {
		ref  string
		want bool
	}{
		{ref: "registry.example.com/web:ok", want: true},
		{ref: "registry.example.com:5000/team/app:v1.2.3", want: true},
		{ref: "127.0.0.1:5000/app:released", want: true},
		{ref: "localhost/app:1", want: true},
		{ref: "localhost:5000/app:1", want: true},
		{ref: "registry:5000/app:1", want: true},
		{ref: "app:1", want: true},
		{ref: "team/app_name:latest", want: true},
		{ref: "a/b/c/d:x.y-z_1", want: true},
		{ref: "Registry.Example.com/team/app:prod", want: true},
		{ref: "app", want: false},
		{ref: "localhost:5000/app", want: false},
		{ref: "registry.example.com/app:", want: false},
		{ref: "registry.example.com/app@sha256:" + strings.Repeat("ab", 32), want: false},
		{ref: "registry.example.com/app:1@sha256:" + strings.Repeat("ab", 32), want: false},
		{ref: "UPPER/app:1", want: false},
		{ref: "team/App:1", want: false},
		{ref: "app:-bad", want: false},
		{ref: "reg.io:port/app:1", want: false},
		{ref: "app:" + strings.Repeat("t", 129), want: false},
		{ref: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			if got := re.MatchString(tt.ref); got != tt.want {
				t.Errorf("pattern match = %v, want %v", got, tt.want)
			}
			_, err := ParseTag(tt.ref)
			explicitTag := strings.LastIndex(tt.ref, ":") > strings.LastIndex(tt.ref, "/")
			if parses := err == nil && explicitTag; parses != tt.want {
				t.Errorf("ParseTag with an explicit tag = %v (%v), want %v", parses, err, tt.want)
			}
		})
	}
}

// TestCRDUsesTaggedReferencePattern keeps the CEL rules of the CRD, which
// refuse untagged references, in step with the parser the controller uses.
func TestCRDUsesTaggedReferencePattern(t *testing.T) {
	crd, err := os.ReadFile("../../config/crd/bases/apps.deployconfig.io_deploymentconfigs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(crd), TaggedReferencePattern); n < 2 {
		t.Errorf("the CRD holds TaggedReferencePattern %d times, want it in the tagImages and trigger rules; update api/v1/types.go", n)
	}
}
