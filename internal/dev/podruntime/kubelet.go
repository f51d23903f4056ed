package podruntime

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/deployconfig/deployconfig/internal/deployer"
)

// nodeClients are what one fake node's kubelet writes with: a client with
// a rate limiter of its own (QPS and Burst of Options), as every kubelet of
// a real cluster has, and an event recorder sending through it. Giving all
// nodes one client would make the runtime a single kubelet for the whole
// cluster, slower at scale than any real one.
type nodeClients struct {
	client  kubernetes.Interface
	dynamic dynamic.Interface
	// recorder is the node's event recorder; broadcaster sends its
	// events and is shut down with the runtime.
	recorder    record.EventRecorder
	broadcaster record.EventBroadcaster
}

// kubelets holds the clients of every node the runtime has run a pod on,
// made on first use.
type kubelets struct {
	// newConfig returns the client configuration of a node's kubelet.
	newConfig func(node string) *rest.Config

	mu    sync.Mutex
	ctx   context.Context
	nodes map[string]*nodeClients
}

// newKubelets returns the node clients of a runtime whose base
// configuration is cfg: each node's client is a copy with its own rate
// limiter and a user agent naming the runtime and the node.
func newKubelets(cfg *rest.Config, qps float32, burst int) *kubelets {
	return &kubelets{
		newConfig: func(node string) *rest.Config {
			c := rest.CopyConfig(cfg)
			c.QPS, c.Burst, c.RateLimiter = qps, burst, nil
			c.UserAgent = Component + " (node " + node + ")"
			return c
		},
		nodes: map[string]*nodeClients{},
	}
}

// start sets the context the nodes' event broadcasters run in; nodes made
// before it is called send their events once it is.
func (k *kubelets) start(ctx context.Context) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ctx = ctx
}

// of returns the clients of a node's kubelet, making them on first use.
func (k *kubelets) of(node string) (*nodeClients, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if n, ok := k.nodes[node]; ok {
		return n, nil
	}
	cfg := k.newConfig(node)
	// A kubelet speaks protobuf to the API server.
	client, err := kubernetes.NewForConfig(deployer.Protobuf(cfg))
	if err != nil {
		return nil, fmt.Errorf("making the client of node %s: %w", node, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making the client of node %s: %w", node, err)
	}
	ctx := k.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	n := &nodeClients{
		client:      client,
		dynamic:     dyn,
		broadcaster: broadcaster,
		recorder:    broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: Component, Host: node}),
	}
	k.nodes[node] = n
	return n, nil
}

// shutdown stops every node's event broadcaster.
func (k *kubelets) shutdown() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, n := range k.nodes {
		n.broadcaster.Shutdown()
	}
}

// count is the number of nodes with clients.
func (k *kubelets) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.nodes)
}
