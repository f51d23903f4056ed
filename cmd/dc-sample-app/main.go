// Command dc-sample-app is a small HTTP server to roll out as a sample
// application: GET / says which pod and version answered, and the
// environment controls when it is ready and when it exits (see
// internal/dev/sampleapp). Image: deployconfig/sample-app.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/deployconfig/deployconfig/internal/dev/sampleapp"
)

func main() {
	os.Exit(run())
}

// run starts the server and returns the process's exit code.
func run() int {
	cfg, err := sampleapp.ParseConfig(os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dc-sample-app: %v\n", err)
		return 2
	}
	hostname, err := os.Hostname()
	if err != nil {
		hostname = "unknown"
	}
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(cfg.Port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "dc-sample-app: %v\n", err)
		return 1
	}
	// The kubelet stops a container with SIGTERM: exit 0 promptly.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return sampleapp.Run(ctx, cfg, ln, hostname, os.Stdout)
}
