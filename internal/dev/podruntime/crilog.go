package podruntime

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// The CRI log format, which kwok (like the kubelet) insists on: one record
// per line, "TIMESTAMP STREAM TAG TEXT", where TAG is F for the end of a line
// of output and P for part of a longer one.
const (
	criTimeFormat = "2006-01-02T15:04:05.000000000Z07:00"
	streamStdout  = "stdout"
	streamStderr  = "stderr"
	tagFull       = "F"
	tagPartial    = "P"
	// maxLogLine is where a line without an end is cut into partial
	// records, as container runtimes do (containerd uses 16 KiB too).
	maxLogLine = 16 * 1024
)

// Limits of a termination message taken from the log, the kubelet's for
// terminationMessagePolicy FallbackToLogsOnError.
const (
	maxMessageBytes = 2048
	maxMessageLines = 80
)

// formatCRILine formats one record of the CRI log format. text holds no
// line end: the tag says whether the line ends here.
func formatCRILine(t time.Time, stream string, partial bool, text []byte) []byte {
	tag := tagFull
	if partial {
		tag = tagPartial
	}
	line := make([]byte, 0, len(criTimeFormat)+len(stream)+len(text)+5)
	line = t.UTC().AppendFormat(line, criTimeFormat)
	line = append(line, ' ')
	line = append(line, stream...)
	line = append(line, ' ')
	line = append(line, tag...)
	line = append(line, ' ')
	line = append(line, text...)
	return append(line, '\n')
}

// criLog writes a container's stdout and stderr to one file in the CRI log
// format. Records are written whole, one at a time, so that the two streams
// (and a deployer's goroutines) never mix within a line. It also keeps the
// last of the output, for termination messages.
type criLog struct {
	mu   sync.Mutex
	w    io.Writer
	now  func() time.Time
	tail []byte
	err  error
}

// newCRILog returns a criLog writing to w, timestamping records with now.
func newCRILog(w io.Writer, now func() time.Time) *criLog {
	return &criLog{w: w, now: now}
}

// stream returns a writer for one output stream (stdout or stderr). It
// buffers an unfinished line until it ends; Close writes what is left.
func (l *criLog) stream(name string) *criStream {
	return &criStream{log: l, name: name}
}

// record writes one record; the first write error is kept and stops further
// writing, but never fails the container, as a full disk does not stop a
// container either.
func (l *criLog) record(stream string, partial bool, text []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keepTail(text, partial)
	if l.err != nil {
		return
	}
	_, l.err = l.w.Write(formatCRILine(l.now(), stream, partial, text))
}

// keepTail remembers the end of the output.
func (l *criLog) keepTail(text []byte, partial bool) {
	l.tail = append(l.tail, text...)
	if !partial {
		l.tail = append(l.tail, '\n')
	}
	if over := len(l.tail) - 2*maxMessageBytes; over > 0 {
		l.tail = append(l.tail[:0], l.tail[over:]...)
	}
}

// lastOutput returns the end of the output the way the kubelet makes a
// termination message from a log: at most maxMessageLines lines and
// maxMessageBytes bytes.
func (l *criLog) lastOutput() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return tailOf(l.tail, maxMessageLines, maxMessageBytes)
}

// tailOf returns the last lines (at most maxLines) and bytes (at most
// maxBytes) of text, without a trailing line end.
func tailOf(text []byte, maxLines, maxBytes int) string {
	text = bytes.TrimRight(text, "\n")
	if len(text) > maxBytes {
		text = text[len(text)-maxBytes:]
	}
	lines := 0
	for i := len(text) - 1; i >= 0; i-- {
		if text[i] != '\n' {
			continue
		}
		lines++
		if lines == maxLines {
			text = text[i+1:]
			break
		}
	}
	return string(text)
}

// criStream is one output stream of a criLog.
type criStream struct {
	log     *criLog
	name    string
	mu      sync.Mutex
	pending []byte
}

// Write records every finished line of p and keeps the rest for later.
func (s *criStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, p...)
	for {
		i := bytes.IndexByte(s.pending, '\n')
		switch {
		case i >= 0 && i <= maxLogLine:
			s.log.record(s.name, false, s.pending[:i])
			s.pending = s.pending[i+1:]
		case len(s.pending) > maxLogLine:
			s.log.record(s.name, true, s.pending[:maxLogLine])
			s.pending = s.pending[maxLogLine:]
		default:
			s.pending = bytes.Clone(s.pending)
			return len(p), nil
		}
	}
}

// Close records an unfinished last line as a full one: the output has
// ended, and readers should see the line.
func (s *criStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) > 0 {
		s.log.record(s.name, false, s.pending)
		s.pending = nil
	}
	return nil
}
