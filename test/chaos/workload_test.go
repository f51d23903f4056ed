package chaos

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deployconfig/deployconfig/test/rollout"
)

// rolloutTimeout bounds how long a scenario waits for one rollout, or for
// a DeploymentConfig to settle after one.
const rolloutTimeout = 3 * time.Minute

// waitFor is rollout.Poll that fails the test on timeout.
func waitFor(t *testing.T, ctx context.Context, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := rollout.Poll(ctx, timeout, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// oneLine shortens command output for logs.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
