package hook

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// openLog opens a pod container's log; follow keeps it open while the
// container runs.
type openLog func(ctx context.Context, follow bool) (io.ReadCloser, error)

// follower copies one log stream into the deployer's output in the
// background. Only one follower runs at a time and nothing else writes to
// the output while it runs, so the output needs no lock.
type follower struct {
	cancel context.CancelFunc
	done   chan struct{}
	out    *activityWriter
}

// startFollower opens the log and copies it to out until it ends or is
// cancelled. A log that cannot be read is reported on out, not returned: the
// hook's outcome does not depend on it.
func startFollower(ctx context.Context, open openLog, follow bool, out io.Writer, label string) *follower {
	ctx, cancel := context.WithCancel(ctx)
	f := &follower{cancel: cancel, done: make(chan struct{}), out: newActivityWriter(out)}
	go func() {
		defer close(f.done)
		stream, err := open(ctx, follow)
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(out, "--> %s: Unable to read the hook pod's log: %v\n", label, err)
			}
			return
		}
		defer stream.Close()
		_, _ = io.Copy(f.out, stream)
		f.out.endLine()
	}()
	return f
}

// drain waits for the stream to end by itself, as a kubelet ends a followed
// log when the container exits. Some log servers (kwok's) never end a
// followed log, so the stream is cancelled once it has been quiet for idle,
// or after max at the latest.
func (f *follower) drain(idle, max time.Duration) {
	limit := time.NewTimer(max)
	defer limit.Stop()
	start := time.Now()
	for {
		last := f.out.lastWrite()
		if last.Before(start) {
			last = start
		}
		quiet := time.Since(last)
		if quiet >= idle {
			f.abort()
			return
		}
		wait := time.NewTimer(idle - quiet)
		select {
		case <-f.done:
			wait.Stop()
			return
		case <-limit.C:
			wait.Stop()
			f.abort()
			return
		case <-wait.C:
		}
	}
}

// abort stops the stream and waits for the copy to end.
func (f *follower) abort() {
	f.cancel()
	<-f.done
}

// activityWriter remembers when it was last written to, and whether the
// last byte ended a line, so that the deployer's own lines never get glued
// to a hook's unterminated last line.
type activityWriter struct {
	w        io.Writer
	last     atomic.Int64
	wrote    bool
	lastByte byte
}

func newActivityWriter(w io.Writer) *activityWriter {
	a := &activityWriter{w: w}
	a.last.Store(time.Now().UnixNano())
	return a
}

func (a *activityWriter) Write(p []byte) (int, error) {
	a.last.Store(time.Now().UnixNano())
	if len(p) > 0 {
		a.wrote = true
		a.lastByte = p[len(p)-1]
	}
	return a.w.Write(p)
}

func (a *activityWriter) lastWrite() time.Time { return time.Unix(0, a.last.Load()) }

// endLine terminates an unterminated last line.
func (a *activityWriter) endLine() {
	if a.wrote && a.lastByte != '\n' {
		_, _ = a.w.Write([]byte("\n"))
	}
}
