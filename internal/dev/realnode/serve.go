package realnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// ServeRegistry serves an in-memory OCI registry on addr until ctx ends.
// The cluster runs it inside its namespace (dc-local node-registry), so it
// lives exactly as long as the cluster and needs no disk.
func ServeRegistry(ctx context.Context, addr string, logs io.Writer) error {
	srv := &http.Server{
		Addr:              addr,
		Handler:           registry.New(registry.Logger(log.New(logs, "registry: ", log.LstdFlags))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("registry on %s: %w", addr, err)
	}
	return nil
}

// Forward accepts connections on listen, in the caller's network
// namespace, and joins each to target dialled from inside the namespace
// whose bind mount is netns: the way kubectl and the tests reach the
// cluster's API server from the host. It writes the address it listens
// on to addrFile once it accepts.
func Forward(ctx context.Context, listen, netns, target, addrFile string) error {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("forward %s: %w", listen, err)
	}
	defer l.Close()
	if err := os.WriteFile(addrFile, []byte(l.Addr().String()), 0o644); err != nil {
		return fmt.Errorf("forward %s: %w", listen, err)
	}
	return serveJoined(ctx, l, Dialer{Netns: netns}.DialContext, target)
}

// Expose makes the host address target (a test's Prometheus on loopback,
// say) reachable from the cluster's pods: it listens on the node's address
// inside the cluster's network namespace and joins each connection to
// target, dialled in the caller's namespace, until ctx ends. It returns
// the address it listens on.
func (c *Cluster) Expose(ctx context.Context, target string) (string, error) {
	l, err := c.Listen(ctx, NodeIP+":0")
	if err != nil {
		return "", err
	}
	var dialer net.Dialer
	go func() { _ = serveJoined(ctx, l, dialer.DialContext, target) }()
	return l.Addr().String(), nil
}

// ExposeRegistry makes a registry on the host's loopback (host is
// 127.0.0.1:PORT) reachable from the node under the same name, until ctx
// ends: it listens on that address inside the cluster's network namespace,
// joins each connection to the host's, and lets containerd pull from it
// over plain HTTP. An image a user pushed to the host's registry (a
// release, say) then runs under the reference the user pushed it to.
func (c *Cluster) ExposeRegistry(ctx context.Context, host string) error {
	if ip, _, err := net.SplitHostPort(host); err != nil || ip != "127.0.0.1" {
		return fmt.Errorf("expose registry %q: want 127.0.0.1:PORT", host)
	}
	if err := writeFiles(map[string]string{c.registryHostsPath(host): registryHosts(host)}); err != nil {
		return fmt.Errorf("expose registry %s: %w", host, err)
	}
	l, err := c.Listen(ctx, host)
	if err != nil {
		return err
	}
	var dialer net.Dialer
	go func() { _ = serveJoined(ctx, l, dialer.DialContext, host) }()
	return nil
}

// Listen opens a TCP listener inside the cluster's network namespace; it
// stays there whatever thread accepts on it.
func (c *Cluster) Listen(ctx context.Context, addr string) (net.Listener, error) {
	var l net.Listener
	err := Dialer{Netns: c.NetnsPath()}.inNamespace(func() error {
		var err error
		l, err = (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listen on %s in %s: %w", addr, c.Netns, err)
	}
	return l, nil
}

// serveJoined accepts connections on l until ctx ends and joins each to
// target, dialled with dial.
func serveJoined(ctx context.Context, l net.Listener, dial dialFunc, target string) error {
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("forward %s: %w", l.Addr(), err)
		}
		go join(ctx, conn, dial, target)
	}
}

// dialFunc is net.Dialer.DialContext, or Dialer's.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// join copies bytes both ways between conn and a new connection to target.
func join(ctx context.Context, conn net.Conn, dial dialFunc, target string) {
	defer conn.Close()
	dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	upstream, err := dial(dialCtx, "tcp", target)
	if err != nil {
		return
	}
	defer upstream.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(upstream, conn)
		closeWrite(upstream)
	}()
	go func() {
		defer wg.Done()
		_, _ = io.Copy(conn, upstream)
		closeWrite(conn)
	}()
	wg.Wait()
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}
