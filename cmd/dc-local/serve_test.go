package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/deployconfig/deployconfig/internal/dev/playground"
	"github.com/deployconfig/deployconfig/internal/imagetrigger"
)

// runBoth stops the other function when one returns, and returns the
// errors of both.
func TestRunBoth(t *testing.T) {
	failed := errors.New("cache did not sync")
	waits := func(ctx context.Context) error { <-ctx.Done(); return nil }
	fails := func(context.Context) error { return failed }
	tests := []struct {
		name    string
		cancel  bool
		fns     []func(context.Context) error
		wantErr error
	}{
		{name: "one fails, the other stops", fns: []func(context.Context) error{waits, fails}, wantErr: failed},
		{name: "the context ends", cancel: true, fns: []func(context.Context) error{waits, waits}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			done := make(chan error, 1)
			go func() { done <- runBoth(ctx, logr.Discard(), tt.fns...) }()
			select {
			case err := <-done:
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
					t.Errorf("runBoth = %v, want %v", err, tt.wantErr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("runBoth did not return")
			}
		})
	}
}

// The serve command is part of dc-local, with the playground's defaults.
func TestServeCommand(t *testing.T) {
	cmd, _, err := newRootCommand(nil).Find([]string{"serve"})
	if err != nil || cmd.Name() != "serve" {
		t.Fatalf("no serve command: %v", err)
	}
	for flag, want := range map[string]string{
		"deployer-image":               localDeployerImage,
		"metrics-bind-address":         "0",
		"health-probe-bind-address":    "0",
		"impersonate-service-accounts": "true",
		"image-poll-interval":          imagetrigger.DefaultPollInterval.String(),
	} {
		if f := cmd.Flags().Lookup(flag); f == nil || f.DefValue != want {
			t.Errorf("flag --%s: %v, want default %q", flag, f, want)
		}
	}
}

// serve stops when its cluster is removed behind its back.
func TestWatchCluster(t *testing.T) {
	o := playground.Options{Name: "gone", Workdir: t.TempDir()}
	done := make(chan error, 1)
	go func() { done <- watchCluster(t.Context(), o, 10*time.Millisecond) }()
	select {
	case err := <-done:
		if !errors.Is(err, errClusterGone) {
			t.Errorf("watchCluster = %v, want errClusterGone", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watchCluster did not notice that the cluster is gone")
	}
}
