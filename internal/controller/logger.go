package controller

import (
	"slices"

	"github.com/go-logr/logr"
)

// deferValues returns a logger that writes through l's sink but keeps the
// key/value pairs given to WithValues until a line is written.
//
// controller-runtime gives every reconcile a logger with the request's
// name and a reconcile ID. zap encodes such values the moment they are
// added, into a buffer of a kilobyte or more, and most reconciles write no
// line at all: when dc-controller starts it reconciles every
// DeploymentConfig and every unfinished deployment, and at 20,000
// DeploymentConfigs those buffers were a twentieth of all it allocated
// while its caches filled, at the moment its memory peaks.
func deferValues(l logr.Logger) logr.Logger {
	sink := l.GetSink()
	if sink == nil {
		return l
	}
	if withDepth, ok := sink.(logr.CallDepthLogSink); ok {
		// One more frame, deferredSink's own, between the caller and sink.
		sink = withDepth.WithCallDepth(1)
	}
	return logr.New(&deferredSink{sink: sink})
}

// deferredSink is deferValues' sink: it passes its values to the sink it
// wraps with each line written.
type deferredSink struct {
	sink   logr.LogSink
	values []any
}

var _ logr.CallDepthLogSink = (*deferredSink)(nil)

// Init does nothing: the wrapped sink was initialised by the logger it
// came from, and initialising it again would skip its callers twice.
func (s *deferredSink) Init(logr.RuntimeInfo) {}

// Enabled is the wrapped sink's.
func (s *deferredSink) Enabled(level int) bool { return s.sink.Enabled(level) }

// Info writes a line with the deferred values before its own.
func (s *deferredSink) Info(level int, msg string, keysAndValues ...any) {
	s.sink.Info(level, msg, s.with(keysAndValues)...)
}

// Error writes an error line with the deferred values before its own.
func (s *deferredSink) Error(err error, msg string, keysAndValues ...any) {
	s.sink.Error(err, msg, s.with(keysAndValues)...)
}

// WithValues adds values without encoding them.
func (s *deferredSink) WithValues(keysAndValues ...any) logr.LogSink {
	return &deferredSink{sink: s.sink, values: append(slices.Clip(s.values), keysAndValues...)}
}

// WithName names the wrapped sink.
func (s *deferredSink) WithName(name string) logr.LogSink {
	return &deferredSink{sink: s.sink.WithName(name), values: s.values}
}

// WithCallDepth skips more callers in the wrapped sink, if it can.
func (s *deferredSink) WithCallDepth(depth int) logr.LogSink {
	withDepth, ok := s.sink.(logr.CallDepthLogSink)
	if !ok {
		return s
	}
	return &deferredSink{sink: withDepth.WithCallDepth(depth), values: s.values}
}

// with is the deferred values followed by more, for one line.
func (s *deferredSink) with(more []any) []any {
	if len(s.values) == 0 {
		return more
	}
	return append(slices.Clip(s.values), more...)
}
