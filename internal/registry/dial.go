package registry

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// AllowNetworksFlag is the dc-controller (and dc-local serve) flag that
// lets registry requests reach networks the NetworkPolicy refuses; messages
// name it so that whoever reads one knows the way out.
const AllowNetworksFlag = "--allow-registry-networks"

// DenyNetworksFlag is the flag that refuses networks to registry requests
// even when AllowNetworksFlag names them.
const DenyNetworksFlag = "--deny-registry-networks"

// refusedNetworks are where a registry request may not connect unless an
// operator allows it: the controller's own host (loopback, and the
// unspecified address, which reaches it too), link-local addresses
// (169.254.169.254 and fd00:ec2::254 are cloud metadata services), the
// private ranges that hold a cluster's service and pod networks (and its
// nodes' kubelets), shared address space, and multicast. A registry host
// is user input (a DeploymentConfig's trigger): without these limits any
// DeploymentConfig author could have dc-controller send requests into the
// cluster's network and read back what they answer.
var refusedNetworks = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local, cloud metadata"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private, cluster networks"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private, cluster networks"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private, cluster networks"},
	{netip.MustParsePrefix("fc00::/7"), "private, cluster networks, cloud metadata"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// NetworkPolicy says which addresses registry requests may connect to:
// any but the refused networks, plus the networks Allow names, minus the
// networks Deny names (e.g. a cluster's service or pod range outside the
// private ranges). Deny wins over Allow.
type NetworkPolicy struct {
	Allow []netip.Prefix
	Deny  []netip.Prefix
	// Use says, in messages, what the connections are for and which
	// flags set Allow and Deny; the zero value is the image triggers'
	// registries.
	Use NetworkUse
}

// NetworkUse names, in a refusal, what a policy's connections are for and
// the flags that set its networks, so that whoever reads one knows the
// way out.
type NetworkUse struct {
	// Subject names the address's origin, e.g. "registry host".
	Subject string
	// AllowFlag and DenyFlag set the policy's Allow and Deny.
	AllowFlag, DenyFlag string
}

// orRegistry is u, or the image triggers' registries when u is zero.
func (u NetworkUse) orRegistry() NetworkUse {
	if u.Subject == "" {
		return NetworkUse{Subject: "registry host", AllowFlag: AllowNetworksFlag, DenyFlag: DenyNetworksFlag}
	}
	return u
}

// ParseNetworks parses a comma-separated list of CIDRs (a flag's value);
// "" is none.
func ParseNetworks(flagName, value string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range strings.Split(value, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a CIDR such as 127.0.0.0/8 or fd00::/8: %w", flagName, s, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// RefusedAddressError says a registry host resolved to an address the
// policy refuses.
type RefusedAddressError struct {
	Host string
	Addr netip.Addr
	What string
	Use  NetworkUse
}

func (e *RefusedAddressError) Error() string {
	use := e.Use.orRegistry()
	return fmt.Sprintf("%s %q resolves to %s (%s), which dc-controller does not connect to unless started with %s including it",
		use.Subject, e.Host, e.Addr, e.What, use.AllowFlag)
}

// Check returns a *RefusedAddressError when host's address addr may not be
// connected to.
func (p NetworkPolicy) Check(host string, addr netip.Addr) error {
	addr = addr.Unmap()
	use := p.Use.orRegistry()
	for _, d := range p.Deny {
		if d.Contains(addr) {
			return &RefusedAddressError{Host: host, Addr: addr, What: "denied by " + use.DenyFlag, Use: use}
		}
	}
	for _, a := range p.Allow {
		if a.Contains(addr) {
			return nil
		}
	}
	for _, r := range refusedNetworks {
		if r.prefix.Contains(addr) {
			return &RefusedAddressError{Host: host, Addr: addr, What: r.what, Use: use}
		}
	}
	return nil
}

// DialContext connects as a net.Dialer does, but checks every address the
// host resolves to right before connecting to it: a check of the resolved
// address, not of the name, so that DNS answering differently later
// (rebinding) cannot slip past it.
func (p NetworkPolicy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	d := &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(_, resolved string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(resolved)
			if err != nil {
				return fmt.Errorf("%s %q: unexpected address %q: %w", p.Use.orRegistry().Subject, host, resolved, err)
			}
			return p.Check(host, ap.Addr())
		},
	}
	return d.DialContext(ctx, network, address)
}

// Transport returns go-containerregistry's default transport with every
// connection checked by the policy. Requests through a proxy connect to
// the proxy, which the policy then checks instead of the registry.
func (p NetworkPolicy) Transport() http.RoundTripper {
	t := remote.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = p.DialContext
	return t
}

// HTTPClient is an HTTP client whose every connection, redirects and
// proxies included, the policy checks: for requests other than to
// registries that dc-controller makes for a DeploymentConfig's author,
// such as an analysis's queries.
func (p NetworkPolicy) HTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = p.DialContext
	return &http.Client{Transport: t}
}

// WithNetworkPolicy is the remote.Option that sends registry requests
// through the policy's transport.
func WithNetworkPolicy(p NetworkPolicy) remote.Option {
	return remote.WithTransport(p.Transport())
}
