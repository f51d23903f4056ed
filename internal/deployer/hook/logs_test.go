package hook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// endlessLog is a followed log that never ends by itself, as kwok serves
// them: it yields its lines, then (when trickle is set) a line every few
// milliseconds, until its context ends.
type endlessLog struct {
	ctx     context.Context
	lines   string
	trickle bool
	sent    bool
}

func (l *endlessLog) Read(p []byte) (int, error) {
	if !l.sent {
		l.sent = true
		return copy(p, l.lines), nil
	}
	if l.trickle {
		select {
		case <-l.ctx.Done():
			return 0, io.EOF
		case <-time.After(2 * time.Millisecond):
			return copy(p, "."), nil
		}
	}
	<-l.ctx.Done()
	return 0, io.EOF
}

func (l *endlessLog) Close() error { return nil }

func TestFollowerDrain(t *testing.T) {
	tests := []struct {
		name       string
		open       openLog
		wantPrefix string
		maxTime    time.Duration
		minTime    time.Duration
	}{
		{
			name: "ends by itself",
			open: func(context.Context, bool) (io.ReadCloser, error) {
				return io.NopCloser(strings.NewReader("a\nb\n")), nil
			},
			wantPrefix: "a\nb\n",
			maxTime:    time.Second,
		},
		{
			name: "never ends: cut once quiet, last line terminated",
			open: func(ctx context.Context, _ bool) (io.ReadCloser, error) {
				return &endlessLog{ctx: ctx, lines: "a\nno newline"}, nil
			},
			wantPrefix: "a\nno newline\n",
			minTime:    50 * time.Millisecond,
			maxTime:    time.Second,
		},
		{
			name: "never quiet: cut at the limit",
			open: func(ctx context.Context, _ bool) (io.ReadCloser, error) {
				return &endlessLog{ctx: ctx, lines: "a\n", trickle: true}, nil
			},
			wantPrefix: "a\n.",
			minTime:    300 * time.Millisecond,
			maxTime:    2 * time.Second,
		},
		{
			name: "unreadable",
			open: func(context.Context, bool) (io.ReadCloser, error) {
				return nil, errors.New("no logs found")
			},
			wantPrefix: "--> pre: Unable to read the hook pod's log: no logs found\n",
			maxTime:    time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			f := startFollower(t.Context(), tt.open, true, &out, Pre)
			start := time.Now()
			f.drain(50*time.Millisecond, 300*time.Millisecond)
			took := time.Since(start)
			if !strings.HasPrefix(out.String(), tt.wantPrefix) || !strings.HasSuffix(out.String(), "\n") {
				t.Errorf("output %q, want it to start with %q and end a line", out.String(), tt.wantPrefix)
			}
			if took < tt.minTime || took > tt.maxTime {
				t.Errorf("drain took %s, want between %s and %s", took, tt.minTime, tt.maxTime)
			}
		})
	}
}
