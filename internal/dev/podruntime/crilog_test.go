package podruntime

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestFormatCRILine(t *testing.T) {
	at := time.Date(2026, 11, 29, 18, 12, 35, 123456789, time.UTC)
	tests := []struct {
		name    string
		t       time.Time
		stream  string
		partial bool
		text    string
		want    string
	}{
		{name: "full stdout line", t: at, stream: streamStdout, text: "the text", want: "2026-11-29T18:12:35.123456789Z stdout F the text\n"},
		{name: "partial stderr line", t: at, stream: streamStderr, partial: true, text: "part", want: "2026-11-29T18:12:35.123456789Z stderr P part\n"},
		{name: "empty line", t: at, stream: streamStdout, want: "2026-11-29T18:12:35.123456789Z stdout F \n"},
		{name: "nanoseconds keep their width", t: time.Date(2026, 1, 2, 3, 4, 5, 1000, time.UTC), stream: streamStdout, text: "x", want: "2026-01-02T03:04:05.000001000Z stdout F x\n"},
		{name: "other zones are written in UTC", t: at.In(time.FixedZone("CET", 3600)), stream: streamStdout, text: "x", want: "2026-11-29T18:12:35.123456789Z stdout F x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(formatCRILine(tt.t, tt.stream, tt.partial, []byte(tt.text))); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCRIStream(t *testing.T) {
	long := strings.Repeat("x", maxLogLine)
	tests := []struct {
		name   string
		writes []string
		// want are the records' stream, tag and text, without timestamps.
		want []string
	}{
		{name: "lines", writes: []string{"a\nb\n"}, want: []string{"stdout F a", "stdout F b"}},
		{name: "a line in pieces", writes: []string{"hel", "lo", "\nwor", "ld\n"}, want: []string{"stdout F hello", "stdout F world"}},
		{name: "an unfinished last line is written on close", writes: []string{"a\nno end"}, want: []string{"stdout F a", "stdout F no end"}},
		{name: "empty lines", writes: []string{"\n\n"}, want: []string{"stdout F ", "stdout F "}},
		{name: "a long line is cut into partial records", writes: []string{long + "yz\n"}, want: []string{"stdout P " + long, "stdout F yz"}},
		{name: "a line of exactly the limit", writes: []string{long + "\n"}, want: []string{"stdout F " + long}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			l := newCRILog(&out, func() time.Time { return time.Unix(0, 0) })
			s := l.stream(streamStdout)
			for _, w := range tt.writes {
				if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
				_, record, _ := strings.Cut(line, " ")
				got = append(got, record)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("records\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestTailOf(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		maxLines int
		maxBytes int
		want     string
	}{
		{name: "short", text: "a\nb\n", maxLines: 80, maxBytes: 2048, want: "a\nb"},
		{name: "last lines", text: "1\n2\n3\n4\n", maxLines: 2, maxBytes: 2048, want: "3\n4"},
		{name: "last bytes", text: "abcdef\n", maxLines: 80, maxBytes: 3, want: "def"},
		{name: "empty", text: "", maxLines: 80, maxBytes: 2048, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tailOf([]byte(tt.text), tt.maxLines, tt.maxBytes); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// The log keeps the end of the output across streams, for termination
// messages.
func TestCRILogLastOutput(t *testing.T) {
	l := newCRILog(&bytes.Buffer{}, time.Now)
	out, errOut := l.stream(streamStdout), l.stream(streamStderr)
	for i := range 100 {
		_, _ = out.Write([]byte(strings.Repeat("o", 10) + "\n"))
		if i == 99 {
			_, _ = errOut.Write([]byte("error: boom"))
		}
	}
	_ = errOut.Close()
	got := l.lastOutput()
	if !strings.HasSuffix(got, "\nerror: boom") || strings.Count(got, "\n") != maxMessageLines-1 {
		t.Errorf("lastOutput() = %q, want the last %d lines ending with the error", got, maxMessageLines)
	}
}
