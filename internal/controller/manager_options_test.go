package controller

import (
	"testing"
	"time"
)

// TestManagerOptions: the manager waits for running syncs at shutdown no
// longer than GracefulShutdownTimeout, well within the 30 s a pod gets
// between SIGTERM and SIGKILL (controller-runtime's default wait is the
// whole 30 s, so a stuck sync held every shutdown until the kill).
func TestManagerOptions(t *testing.T) {
	const podGrace = 30 * time.Second
	tests := []struct {
		name string
		opts Options
		want time.Duration
	}{
		{name: "default", opts: Options{}, want: GracefulShutdownTimeout},
		{name: "with leader election", opts: Options{LeaderElection: true, LeaderElectionNamespace: "ns"}, want: GracefulShutdownTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scheme, err := NewScheme()
			if err != nil {
				t.Fatal(err)
			}
			got := managerOptions(tc.opts, scheme)
			if got.GracefulShutdownTimeout == nil || *got.GracefulShutdownTimeout != tc.want {
				t.Fatalf("GracefulShutdownTimeout = %v, want %v", got.GracefulShutdownTimeout, tc.want)
			}
			if *got.GracefulShutdownTimeout >= podGrace {
				t.Fatalf("GracefulShutdownTimeout %v is not below the pod's grace period %v", *got.GracefulShutdownTimeout, podGrace)
			}
			if got.Scheme != scheme || got.LeaderElection != tc.opts.LeaderElection || got.LeaderElectionID != LeaderElectionID || !got.LeaderElectionReleaseOnCancel {
				t.Fatalf("options %+v do not carry the controller's options", got)
			}
		})
	}
}
