package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

const (
	// followPoll is how often a followed server's log and liveness are
	// looked at.
	followPoll = 250 * time.Millisecond
	// followStopTimeout bounds stopping the server after Ctrl-C.
	followStopTimeout = time.Minute
)

// followServer copies what the server writes to its log from now on until
// ctx ends (Ctrl-C), then stops the server: dc-controller and the pod
// runtime stop, the cluster stays. It fails when the server exits by
// itself.
func followServer(ctx context.Context, out io.Writer, o playground.Options, server *playground.Server) error {
	log, err := os.Open(server.Log)
	if err != nil {
		return fmt.Errorf("following the server log: %w", err)
	}
	defer log.Close()
	if _, err := log.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("following the server log %s: %w", server.Log, err)
	}
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		if _, err := io.Copy(out, log); err != nil {
			return fmt.Errorf("following the server log %s: %w", server.Log, err)
		}
		if !playground.ServerRunning(o) {
			return fmt.Errorf("dc-local serve (pid %d) exited; its log is %s", server.PID, server.Log)
		}
		select {
		case <-ctx.Done():
			return stopFollowed(out, o)
		case <-tick.C:
		}
	}
}

// stopFollowed stops the server after Ctrl-C and says what is left.
func stopFollowed(out io.Writer, o playground.Options) error {
	// The command's context has ended; stopping gets a bounded one.
	ctx, cancel := context.WithTimeout(context.Background(), followStopTimeout)
	defer cancel()
	if err := playground.StopServer(ctx, o); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stopping dc-local serve: %w", err)
	}
	fmt.Fprintf(out, "\nStopped dc-controller and the pod runtime. The cluster %q is still there:\n"+
		"make run (or dc-local up) starts them again, make down removes it.\n", o.Name)
	return nil
}
