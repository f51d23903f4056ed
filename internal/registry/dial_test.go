package registry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
)

func TestNetworkPolicyCheck(t *testing.T) {
	allowLoopback := NetworkPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	tests := []struct {
		policy  NetworkPolicy
		addr    string
		refused bool
	}{
		{NetworkPolicy{}, "127.0.0.1", true},
		{NetworkPolicy{}, "127.8.9.10", true},
		{NetworkPolicy{}, "::1", true},
		{NetworkPolicy{}, "::ffff:127.0.0.1", true},
		{NetworkPolicy{}, "0.0.0.0", true},
		{NetworkPolicy{}, "::", true},
		{NetworkPolicy{}, "169.254.169.254", true},
		{NetworkPolicy{}, "fe80::1", true},
		{NetworkPolicy{}, "fd00:ec2::254", true},
		{NetworkPolicy{}, "10.96.0.1", true},
		{NetworkPolicy{}, "172.17.0.2", true},
		{NetworkPolicy{}, "192.168.1.1", true},
		{NetworkPolicy{}, "100.64.0.1", true},
		{NetworkPolicy{}, "224.0.0.1", true},
		{NetworkPolicy{}, "93.184.215.14", false},
		{NetworkPolicy{}, "2606:4700::1111", false},
		{allowLoopback, "127.0.0.1", false},
		{allowLoopback, "::1", true},
		{allowLoopback, "169.254.169.254", true},
		{NetworkPolicy{Deny: []netip.Prefix{netip.MustParsePrefix("93.184.0.0/16")}}, "93.184.215.14", true},
		{NetworkPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}, Deny: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/12")}}, "10.96.0.1", true},
	}
	for _, tt := range tests {
		err := tt.policy.Check("registry.example", netip.MustParseAddr(tt.addr))
		var refused *RefusedAddressError
		if got := errors.As(err, &refused); got != tt.refused {
			t.Errorf("%+v: Check(%s) = %v, want refused %v", tt.policy, tt.addr, err, tt.refused)
		}
	}
}

func TestParseNetworks(t *testing.T) {
	got, err := ParseNetworks(AllowNetworksFlag, " 127.0.0.0/8, ::1/128 ,,10.1.2.3/16")
	if err != nil || len(got) != 3 || got[2].String() != "10.1.0.0/16" {
		t.Errorf("ParseNetworks = %v, %v", got, err)
	}
	if _, err := ParseNetworks(AllowNetworksFlag, "127.0.0.1"); err == nil || !strings.Contains(err.Error(), AllowNetworksFlag) || !strings.Contains(err.Error(), `"127.0.0.1"`) {
		t.Errorf("a bare address: error %v, want one naming the flag and the value", err)
	}
}

// A registry on loopback is refused by default, at the address it resolves
// to (localhost is a name), with a message naming the host and the flag;
// allowed, it resolves.
func TestResolveRefusesLoopback(t *testing.T) {
	reg := registrytest.New(t)
	reg.Push(t, "app:v1")
	port := reg.Host[strings.LastIndex(reg.Host, ":")+1:]
	heads := reg.ManifestHeads()
	for _, host := range []string{reg.Host, "localhost:" + port} {
		tag, err := ParseTag(host + "/app:v1")
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(context.Background(), tag, authn.Anonymous, Options{NoRetries(), WithNetworkPolicy(NetworkPolicy{})})
		var refused *RefusedAddressError
		hostname := host[:strings.LastIndex(host, ":")]
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), `"`+hostname+`"`) || !strings.Contains(err.Error(), AllowNetworksFlag) {
			t.Errorf("%s: error %v, want the address refused, naming the host and %s", host, err, AllowNetworksFlag)
		}
		if reg.ManifestHeads() != heads {
			t.Errorf("%s: the registry was reached", host)
		}
	}
	tag, _ := ParseTag(reg.Ref("app:v1"))
	allow := NetworkPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	if _, err := Resolve(context.Background(), tag, authn.Anonymous, Options{NoRetries(), WithNetworkPolicy(allow)}); err != nil {
		t.Errorf("allowed loopback: %v", err)
	}
}

// What a registry answers never reaches an error message: a host behind a
// trigger's address could be anything, and the message is shown to whoever
// can read the DeploymentConfig.
func TestResolveErrorCarriesNoBody(t *testing.T) {
	const secret = "internal-admin-console-token-42"
	for _, status := range []int{http.StatusForbidden, http.StatusNotFound, http.StatusInternalServerError} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v2/" {
				w.WriteHeader(http.StatusOK)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"errors":[{"code":"DENIED","message":"` + secret + `","detail":"` + secret + `"}],"body":"` + secret + `"}`))
		}))
		tag, err := ParseTag(strings.TrimPrefix(srv.URL, "http://") + "/app:v1")
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(context.Background(), tag, authn.Anonymous, Options{NoRetries()})
		srv.Close()
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("HTTP %d: error %v, want one without the body", status, err)
		}
		if !strings.Contains(err.Error(), http.StatusText(status)) {
			t.Errorf("HTTP %d: error %v, want the status", status, err)
		}
	}
}
