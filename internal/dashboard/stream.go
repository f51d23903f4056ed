package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// stream is a server-sent event stream.
type stream struct {
	w http.ResponseWriter
	f http.Flusher
}

// openStream starts a server-sent event stream; ok is false when the
// connection cannot stream.
func openStream(w http.ResponseWriter) (*stream, bool) {
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported on this connection", http.StatusInternalServerError)
		return nil, false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	f.Flush()
	return &stream{w: w, f: f}, true
}

// send writes one event; data may span lines. SSE ends a line at "\r\n",
// "\r" or "\n", so each of them in data starts a data line of its own:
// nothing in user text (an annotation, an event's message, a log line)
// can end the event early or start a field of its own, such as "event:".
func (st *stream) send(event, data string) error {
	var b strings.Builder
	b.WriteString("event: " + event + "\n")
	data = strings.ReplaceAll(strings.ReplaceAll(data, "\r\n", "\n"), "\r", "\n")
	for _, line := range strings.Split(data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	if _, err := io.WriteString(st.w, b.String()); err != nil {
		return err
	}
	st.f.Flush()
	return nil
}

// heartbeat writes a comment, which the browser ignores.
func (st *stream) heartbeat() error {
	if _, err := io.WriteString(st.w, ": heartbeat\n\n"); err != nil {
		return err
	}
	st.f.Flush()
	return nil
}

// push keeps a page's live part current: it renders fragment now and after
// every change of namespace ("" for any), at most once per
// renderInterval, and sends it when it differs from what the page shows.
func (s *Server) push(w http.ResponseWriter, r *http.Request, namespace, dc string, fragment func(io.Writer) error) {
	st, ok := openStream(w)
	if !ok {
		return
	}
	sub, cancel := s.store.hub.subscribe(namespace, dc)
	defer cancel()
	heartbeat := time.NewTicker(heartbeatInterval)
	defer heartbeat.Stop()
	// last is the digest of what the page shows: at first what it was
	// rendered with.
	last := r.URL.Query().Get("shown")
	for {
		var buf bytes.Buffer
		if err := fragment(&buf); err != nil {
			s.opts.Log.Error(err, "render a page's live part", "path", r.URL.Path)
			return
		}
		if d := digest(buf.Bytes()); d != last {
			if st.send("update", buf.String()) != nil {
				return
			}
			last = d
		}
		// The interval passes before the next render, so that a burst of
		// changes (a rollout's step scales two RCs and their pods) is one
		// update.
		select {
		case <-r.Context().Done():
			return
		case <-time.After(renderInterval):
		}
		if !s.waitChange(r.Context(), st, sub, heartbeat) {
			return
		}
	}
}

// waitChange waits for a change, keeping the stream alive; false when the
// page went away.
func (s *Server) waitChange(ctx context.Context, st *stream, sub *subscription, heartbeat *time.Ticker) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-sub.changed:
			return true
		case <-heartbeat.C:
			if st.heartbeat() != nil {
				return false
			}
		}
	}
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	d := s.listData(r)
	s.push(w, r, d.Namespace, "", func(out io.Writer) error {
		d.Rows, d.Policies = listRows(s.store, d.Namespace, d.Query), policyRows(s.store, d.Namespace)
		return s.pages["list"].ExecuteTemplate(out, "live", d)
	})
}

func (s *Server) dcEvents(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	s.push(w, r, ns, name, func(out io.Writer) error {
		v := s.dcData(r.Context(), ns, name)
		if v == nil {
			_, err := fmt.Fprintf(out, "<p class=\"gone\">deploymentconfig %s no longer exists.</p>", template.HTMLEscapeString(name))
			return err
		}
		return s.pages["dc"].ExecuteTemplate(out, "live", v)
	})
}

// policyEvents pushes a RolloutPolicy's page: its status, and the
// messages of the DeploymentConfigs in its line, change with any object
// of its namespace.
func (s *Server) policyEvents(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	s.push(w, r, ns, "", func(out io.Writer) error {
		v := buildPolicyView(s.store, ns, name, s.opts.Now())
		if v == nil {
			_, err := fmt.Fprintf(out, "<p class=\"gone\">rolloutpolicy %s no longer exists.</p>", template.HTMLEscapeString(name))
			return err
		}
		return s.pages["policy"].ExecuteTemplate(out, "live", v)
	})
}

// lineWriter sends what is written to it as one "line" event per line.
type lineWriter struct {
	st      *stream
	partial []byte
}

func (lw *lineWriter) Write(p []byte) (int, error) {
	lw.partial = append(lw.partial, p...)
	for {
		i := bytes.IndexByte(lw.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		if err := lw.st.send("line", string(lw.partial[:i])); err != nil {
			return 0, err
		}
		lw.partial = lw.partial[i+1:]
	}
}

// logEvents streams a rollout's deployer log as `kubectl dc logs -f`
// follows it, then an "end" event that says why it ended.
func (s *Server) logEvents(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	version, err := strconv.ParseInt(r.URL.Query().Get("version"), 10, 64)
	if err != nil || version < 1 {
		http.Error(w, "version: expected a rollout number", http.StatusBadRequest)
		return
	}
	st, ok := openStream(w)
	if !ok {
		return
	}
	lines := &lineWriter{st: st}
	var errOut bytes.Buffer
	args := []string{"logs", name, "--version", strconv.FormatInt(version, 10), "--follow", "--namespace", ns}
	err = s.opts.Run(r.Context(), args, lines, &errOut)
	if len(lines.partial) > 0 {
		_ = st.send("line", string(lines.partial))
	}
	end := "The deployer of rollout #" + strconv.FormatInt(version, 10) + " ended."
	if err != nil {
		end = "The log ended: " + err.Error()
	}
	_ = st.send("end", end)
}
