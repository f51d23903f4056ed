package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deployconfig/deployconfig/internal/dev/realnode"
)

// The cluster's network namespace has no way out: its only interfaces are
// loopback, the pod bridge and the pods' veths on that bridge (whose other
// ends are in the pods), it has no default route, and a connection to an
// address outside it fails at once, without sending a packet ("network is
// unreachable").
func TestClusterNetworkHasNoRouteOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := suite.cluster.Netns
	links, err := realnode.IP(ctx, ns, "-o", "link", "show")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(links), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		name := strings.SplitN(strings.TrimSuffix(fields[1], ":"), "@", 2)[0]
		if name != "lo" && name != realnode.BridgeName && !strings.Contains(line, "master "+realnode.BridgeName) {
			t.Errorf("interface %s is neither lo, %s nor a pod's veth on it: %s", name, realnode.BridgeName, line)
		}
	}
	for _, family := range []string{"-4", "-6"} {
		routes, err := realnode.IP(ctx, ns, family, "route", "show", "default")
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(routes) != "" {
			t.Errorf("the cluster's namespace has an IPv%s default route: %s", family[1:], routes)
		}
	}
	dialCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// 192.0.2.1 is TEST-NET-1 (RFC 5737): documentation only, never routed.
	conn, err := realnode.Dialer{Netns: suite.cluster.NetnsPath()}.DialContext(dialCtx, "tcp", "192.0.2.1:80")
	if err == nil {
		conn.Close()
		t.Fatal("a connection from the cluster's namespace to 192.0.2.1:80 succeeded; want network is unreachable")
	}
	if !strings.Contains(err.Error(), "network is unreachable") {
		t.Errorf("dial 192.0.2.1:80 from the cluster's namespace: %v; want network is unreachable", err)
	}
}
