//go:build unix

package playground

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

func TestLockCreation(t *testing.T) {
	o := Options{Workdir: t.TempDir(), Log: io.Discard}
	unlock, err := lockCreation(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := lockCreation(ctx, o); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while held: %v, want a deadline error", err)
	}
	unlock()
	unlock2, err := lockCreation(t.Context(), o)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}
