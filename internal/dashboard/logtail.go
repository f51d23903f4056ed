package dashboard

import (
	"context"
	"io"
	"strconv"
	"sync"
	"time"
)

// Bounds of the followed logs.
const (
	// maxLogTail is how much of a log a tail keeps: its end, where the
	// latest measurements are.
	maxLogTail = 256 << 10
	// maxLogTails is how many rollouts' logs are kept at once; the one
	// read least recently goes first.
	maxLogTails = 64
	// logRetryInterval is how soon a log that could not be read (no
	// deployer yet) is asked for again, at most.
	logRetryInterval = 5 * time.Second
)

// logTails reads each rollout's deployer log once and follows it
// (`kubectl dc logs --follow`), however many pages show its analyses and
// however often they render: every render reads the tail in memory, and
// each new piece of the log wakes the pages of its DeploymentConfig.
type logTails struct {
	// ctx is the dashboard's lifetime, which the followers end with.
	ctx context.Context
	run Runner
	hub *hub
	now func() time.Time

	mu    sync.Mutex
	byKey map[logKey]*logTail
}

// logKey names one rollout.
type logKey struct {
	namespace, dc string
	version       int64
}

// logTail is the end of one rollout's log, as far as it has been read.
type logTail struct {
	mu       sync.Mutex
	text     []byte
	running  bool
	failedAt time.Time // when the last read failed; zero when it did not
	usedAt   time.Time
	// stop ends the follower (nil when none runs).
	stop context.CancelFunc
}

func newLogTails(ctx context.Context, run Runner, h *hub, now func() time.Time) *logTails {
	return &logTails{ctx: ctx, run: run, hub: h, now: now, byKey: map[logKey]*logTail{}}
}

// read returns what has been read of a rollout's log, and starts
// following it unless that is under way, done, or failed less than
// logRetryInterval ago.
func (l *logTails) read(namespace, dc string, version int64) string {
	key := logKey{namespace, dc, version}
	now := l.now()
	l.mu.Lock()
	t, ok := l.byKey[key]
	if !ok {
		l.evictLocked()
		t = &logTail{}
		l.byKey[key] = t
	}
	t.mu.Lock()
	t.usedAt = now
	start := !t.running && (!ok || !t.failedAt.IsZero() && now.Sub(t.failedAt) >= logRetryInterval)
	var ctx context.Context
	if start {
		t.running, t.text = true, nil
		ctx, t.stop = context.WithCancel(l.ctx)
	}
	text := string(t.text)
	t.mu.Unlock()
	l.mu.Unlock()
	if start {
		go l.follow(ctx, key, t)
	}
	return text
}

// evictLocked makes room for one more tail: it drops the one read least
// recently, and stops its follower.
func (l *logTails) evictLocked() {
	if len(l.byKey) < maxLogTails {
		return
	}
	var oldest *logTail
	var key logKey
	for k, t := range l.byKey {
		t.mu.Lock()
		older := oldest == nil || t.usedAt.Before(oldest.usedAt)
		t.mu.Unlock()
		if older {
			oldest, key = t, k
		}
	}
	oldest.mu.Lock()
	if oldest.stop != nil {
		oldest.stop()
	}
	oldest.mu.Unlock()
	delete(l.byKey, key)
}

// follow reads the log to its end (the rollout's), then wakes the pages.
func (l *logTails) follow(ctx context.Context, key logKey, t *logTail) {
	args := []string{"logs", key.dc, "--version", strconv.FormatInt(key.version, 10), "--follow", "--namespace", key.namespace}
	err := l.run(ctx, args, tailWriter{t: t, wake: func() { l.hub.notify(key.namespace, key.dc) }}, io.Discard)
	t.mu.Lock()
	t.stop()
	t.running = false
	t.failedAt = time.Time{}
	if err != nil {
		t.failedAt = l.now()
	}
	t.mu.Unlock()
	l.hub.notify(key.namespace, key.dc)
}

// tailWriter appends to a tail, keeping its last maxLogTail bytes.
type tailWriter struct {
	t    *logTail
	wake func()
}

func (w tailWriter) Write(p []byte) (int, error) {
	w.t.mu.Lock()
	w.t.text = append(w.t.text, p...)
	if over := len(w.t.text) - maxLogTail; over > 0 {
		w.t.text = append([]byte(nil), w.t.text[over:]...)
	}
	w.t.mu.Unlock()
	w.wake()
	return len(p), nil
}
