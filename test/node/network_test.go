package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deployconfig/deployconfig/internal/realnode"
)

// The cluster's network namespace has no route out: its only routes are
// loopback's and the pod bridge's, and a connection to an address outside
// them fails at once, without sending a packet ("network is unreachable").
func TestClusterNetworkHasNoRouteOut(t *testing.T) {
	t.Parallel()
	routes, err := realnode.Routes(context.Background(), suite.cluster.Netns)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(routes), "\n") {
		if line == "" {
			continue
		}
		dev := strings.Contains(line, "dev "+realnode.BridgeName) || strings.Contains(line, "dev lo")
		if strings.HasPrefix(line, "default") || !dev {
			t.Errorf("route %q leads out of the cluster's namespace; want only lo and %s routes", line, realnode.BridgeName)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// 192.0.2.1 is TEST-NET-1 (RFC 5737): documentation only, never routed.
	conn, err := realnode.Dialer{Netns: suite.cluster.NetnsPath()}.DialContext(ctx, "tcp", "192.0.2.1:80")
	if err == nil {
		conn.Close()
		t.Fatal("a connection from the cluster's namespace to 192.0.2.1:80 succeeded; want network is unreachable")
	}
	if !strings.Contains(err.Error(), "network is unreachable") {
		t.Errorf("dial 192.0.2.1:80 from the cluster's namespace: %v; want network is unreachable", err)
	}
}
