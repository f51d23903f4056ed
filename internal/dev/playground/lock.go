//go:build unix

package playground

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockFile is the file in kwokctl's working directory that serializes
// cluster creation between processes.
const lockFile = "dc-playground.lock"

// lockPoll is how often a waiting process tries the lock again.
const lockPoll = 200 * time.Millisecond

// lockCreation takes an exclusive lock on the working directory, so that
// only one process at a time creates or repairs a cluster there. kwokctl
// picks "free" ports by probing them, so two clusters created at once could
// pick the same ports; holding the lock until the new cluster serves avoids
// that. It waits for the lock until ctx ends.
func lockCreation(ctx context.Context, o Options) (unlock func(), err error) {
	if err := os.MkdirAll(o.Workdir, 0o755); err != nil {
		return nil, fmt.Errorf("locking %s: %w", o.Workdir, err)
	}
	f, err := os.OpenFile(filepath.Join(o.Workdir, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", o.Workdir, err)
	}
	if err := waitFlock(ctx, f, o); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// waitFlock tries the lock until it gets it or ctx ends.
func waitFlock(ctx context.Context, f *os.File, o Options) error {
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("locking %s: %w", f.Name(), err)
		}
		if !told {
			logf(o.Log, "Waiting for another process to finish creating a cluster...")
			told = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the lock %s: %w", f.Name(), ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}
