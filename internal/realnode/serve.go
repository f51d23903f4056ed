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
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	dialer := Dialer{Netns: netns}
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("forward %s: %w", listen, err)
		}
		go join(ctx, conn, dialer, target)
	}
}

// join copies bytes both ways between conn and a new connection to target.
func join(ctx context.Context, conn net.Conn, dialer Dialer, target string) {
	defer conn.Close()
	dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	upstream, err := dialer.DialContext(dialCtx, "tcp", target)
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
