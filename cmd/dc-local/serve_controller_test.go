package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// serve runs dc-controller unless told not to; without it, the
// controller's part only waits for serve to end, and ends with it.
func TestServeWithoutController(t *testing.T) {
	cmd, _, err := newRootCommand(nil).Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	if f := cmd.Flags().Lookup("controller"); f == nil || f.DefValue != "true" {
		t.Fatalf("flag --controller: %v, want default true", f)
	}
	run, err := newController(nil, &serveFlags{controller: false})
	if err != nil {
		t.Fatalf("newController without the controller: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the controller's part = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the controller's part did not return when serve ended")
	}
}

// A poll interval that is not positive is refused, naming the flag, before
// anything starts.
func TestServeRefusesNonPositiveImagePollInterval(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		_, err := newController(nil, &serveFlags{controller: true, imagePollInterval: d})
		if err == nil || !strings.Contains(err.Error(), "--image-poll-interval") {
			t.Errorf("newController with --image-poll-interval %s: %v, want an error naming the flag", d, err)
		}
	}
}
