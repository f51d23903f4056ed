package podruntime

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// Every fake node gets a kubelet's client of its own: its own rate limiter
// at the runtime's QPS and burst, made once and kept.
func TestKubeletsPerNode(t *testing.T) {
	k := newKubelets(&rest.Config{Host: "https://127.0.0.1:1", QPS: 5, Burst: 10}, defaultQPS, defaultBurst)
	t.Cleanup(k.shutdown)
	a, err := k.of("node-a")
	if err != nil {
		t.Fatalf("of(node-a): %v", err)
	}
	again, err := k.of("node-a")
	if err != nil {
		t.Fatalf("of(node-a) again: %v", err)
	}
	b, err := k.of("node-b")
	if err != nil {
		t.Fatalf("of(node-b): %v", err)
	}
	if a != again {
		t.Error("a node's clients were made twice")
	}
	if a == b || a.client == b.client {
		t.Error("two nodes share a client")
	}
	if k.count() != 2 {
		t.Errorf("count() = %d, want 2", k.count())
	}
	cfg := k.newConfig("node-b")
	if cfg.QPS != defaultQPS || cfg.Burst != defaultBurst || cfg.RateLimiter != nil {
		t.Errorf("node config QPS %v burst %d limiter %v, want %v, %d and a limiter of its own", cfg.QPS, cfg.Burst, cfg.RateLimiter, defaultQPS, defaultBurst)
	}
	// The audit log knows the runtime by its user agent's prefix.
	if !strings.HasPrefix(cfg.UserAgent, Component) || !strings.Contains(cfg.UserAgent, "node-b") {
		t.Errorf("user agent %q, want %s… naming the node", cfg.UserAgent, Component)
	}
}
