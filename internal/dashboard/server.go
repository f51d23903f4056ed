// Package dashboard is `kubectl dc dashboard`: a web UI that lists
// DeploymentConfigs, follows one's rollout live (steps, pods of each
// version, hooks, analysis measurements, the deployer's log, events,
// history with template diffs) and runs the rollout actions. It acts as
// the user: the pages read the cluster through watches made with the
// user's kubeconfig, and every action runs the kubectl dc command of the
// same name in-process (Runner), so the API server's RBAC decides and
// nothing is installed on the cluster. Pages are rendered on the server
// (html/template, go:embed); a little JavaScript swaps in the parts that
// server-sent events push and asks before an action.
package dashboard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Timing of the server.
const (
	// renderInterval is the least time between two pushes to one page:
	// changes that come closer together are shown together.
	renderInterval = 300 * time.Millisecond
	// heartbeatInterval keeps an idle event stream open through proxies.
	heartbeatInterval = 25 * time.Second
	// actionTimeout bounds an action; retry waits up to a minute for the old
	// deployer pods to go.
	actionTimeout = 2 * time.Minute
	// shutdownTimeout bounds closing the open pages on exit.
	shutdownTimeout = 5 * time.Second
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Runner runs a kubectl dc command line (without "kubectl dc") in the same
// process, with the dashboard's connection to the cluster, writing what
// the command prints to stdout and stderr. Every action and every log the
// dashboard shows goes through it, so they are the CLI's own code paths.
type Runner func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// Options configure a dashboard.
type Options struct {
	// Address and Port are where it listens; Port 0 picks a free port.
	Address string
	Port    int
	// ReadOnly hides the actions and refuses them.
	ReadOnly bool
	// Kube and DC reach the cluster as the user.
	Kube kubernetes.Interface
	DC   client.WithWatch
	// Namespace is the kubeconfig's namespace, shown when the user may not
	// list DeploymentConfigs in every namespace.
	Namespace string
	// Run runs kubectl dc commands (actions, logs).
	Run Runner
	// Out receives the line that gives the dashboard's URL.
	Out io.Writer
	// Log receives the server's own log.
	Log logr.Logger
	// Now is the clock the page tokens expire by; nil is time.Now.
	Now func() time.Time
}

// Server serves the dashboard's pages, event streams and actions.
type Server struct {
	opts   Options
	store  *store
	tokens *tokens
	// tails follow the deployer logs whose measurements pages show.
	tails    *logTails
	pages    map[string]*template.Template
	static   http.Handler
	mux      *http.ServeMux
	loopback bool
}

// New reads the cluster (it returns once the watches have their first
// lists) and returns the dashboard's handler.
func New(ctx context.Context, o Options) (*Server, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	st, err := newStore(ctx, o.Kube, o.DC, o.Namespace, o.Log)
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, fmt.Errorf("open the embedded static files: %w", err)
	}
	s := &Server{opts: o, store: st, tokens: newTokens(o.Now), pages: pages, tails: newLogTails(ctx, o.Run, st.hub, o.Now),
		static: http.StripPrefix("/static/", http.FileServerFS(static)), loopback: loopbackHost(o.Address)}
	s.routes()
	return s, nil
}

// routes maps the dashboard's URLs to their handlers.
func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /{$}", s.listPage)
	s.mux.HandleFunc("GET /dc/{namespace}/{name}", s.dcPage)
	s.mux.HandleFunc("GET /dc/{namespace}/{name}/diff", s.diffPage)
	s.mux.HandleFunc("GET /policy/{namespace}/{name}", s.policyPage)
	s.mux.HandleFunc("GET /events/list", s.listEvents)
	s.mux.HandleFunc("GET /events/dc/{namespace}/{name}", s.dcEvents)
	s.mux.HandleFunc("GET /events/policy/{namespace}/{name}", s.policyEvents)
	s.mux.HandleFunc("GET /log/{namespace}/{name}", s.logEvents)
	s.mux.HandleFunc("POST /dc/{namespace}/{name}/actions", s.act)
	if s.static != nil {
		s.mux.Handle("GET /static/", s.static)
	}
}

// Serve runs the dashboard until ctx ends. It prints the URL to o.Out once
// it listens.
func Serve(ctx context.Context, o Options) error {
	s, err := New(ctx, o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.Address, strconv.Itoa(o.Port)))
	if err != nil {
		return fmt.Errorf("listen on %s port %d: %w", o.Address, o.Port, err)
	}
	fmt.Fprintf(o.Out, "Serving the dashboard at http://%s/ (Ctrl-C stops it)\n", ln.Addr())
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve the dashboard: %w", err)
	}
	return nil
}

// ServeHTTP answers a request after the checks every request gets.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.loopback && !loopbackHost(r.Host) {
		http.Error(w, "this dashboard answers only requests for its loopback address", http.StatusMisdirectedRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

// parsePages parses each page with the layout.
func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{"lower": strings.ToLower, "query": url.QueryEscape}
	pages := map[string]*template.Template{}
	for _, name := range []string{"list", "dc", "policy", "diff", "error"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parse the %s page: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// page is what the layout needs, and the page's own data.
type page struct {
	Title    string
	Token    string
	ReadOnly bool
	// Stream is the URL of the page's event stream, "" for none.
	Stream string
	Data   any
}

// listData is the list page's data.
type listData struct {
	Namespace, Query string
	// Namespaces are those the dashboard shows, nil for all.
	Namespaces []string
	Missing    []string
	Rows       []listRow
	Policies   []policyRow
}

// render writes a whole page.
func (s *Server) render(w http.ResponseWriter, name string, status int, p page) {
	token, err := s.tokens.issue()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	p.Token, p.ReadOnly = token, s.opts.ReadOnly
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		s.opts.Log.Error(err, "render a page", "page", name)
		http.Error(w, "render the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderError writes the error page.
func (s *Server) renderError(w http.ResponseWriter, status int, message string) {
	s.render(w, "error", status, page{Title: http.StatusText(status), Data: message})
}

func (s *Server) listData(r *http.Request) listData {
	ns, q := r.URL.Query().Get("namespace"), r.URL.Query().Get("q")
	namespaces := s.store.Namespaces()
	if len(namespaces) == 1 {
		ns = namespaces[0]
	}
	return listData{Namespace: ns, Query: q, Namespaces: namespaces, Missing: s.store.missing, Rows: listRows(s.store, ns, q), Policies: policyRows(s.store, ns)}
}

func (s *Server) listPage(w http.ResponseWriter, r *http.Request) {
	d := s.listData(r)
	shown, err := s.fragmentHash("list", d)
	if err != nil {
		s.renderError(w, http.StatusInternalServerError, err.Error())
		return
	}
	stream := "/events/list?namespace=" + url.QueryEscape(d.Namespace) + "&q=" + url.QueryEscape(d.Query) + "&shown=" + shown
	s.render(w, "list", http.StatusOK, page{Title: "DeploymentConfigs", Stream: stream, Data: d})
}

// fragmentHash renders a page's live part and returns its digest: the
// page's event stream starts with it, so that it pushes nothing until the
// live part changes (a push replaces the part, and what had the focus).
func (s *Server) fragmentHash(page string, data any) (string, error) {
	var buf bytes.Buffer
	if err := s.pages[page].ExecuteTemplate(&buf, "live", data); err != nil {
		return "", fmt.Errorf("render the %s page's live part: %w", page, err)
	}
	return digest(buf.Bytes()), nil
}

// digest is a short digest of a rendered fragment.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// dcData reads one DeploymentConfig's page, with the measurements of its
// latest rollout's analyses from the deployer log.
func (s *Server) dcData(ctx context.Context, namespace, name string) *dcView {
	v := buildDCView(s.store, namespace, name, s.opts.ReadOnly)
	if v == nil || v.Rollout == nil {
		return v
	}
	dc := s.store.DeploymentConfig(namespace, name)
	for _, rc := range deploymentsOf(s.store, dc) {
		if deployment.Version(rc) != v.Rollout.Version || !hasAnalyses(rc) {
			continue
		}
		v.Analyses = buildAnalyses(rc, s.tails.read(namespace, name, v.Rollout.Version))
	}
	return v
}

func (s *Server) dcPage(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	v := s.dcData(r.Context(), ns, name)
	if v == nil {
		s.renderError(w, http.StatusNotFound, fmt.Sprintf("deploymentconfig %q not found in namespace %q (or you may not read it)", name, ns))
		return
	}
	shown, err := s.fragmentHash("dc", v)
	if err != nil {
		s.renderError(w, http.StatusInternalServerError, err.Error())
		return
	}
	stream := "/events/dc/" + url.PathEscape(ns) + "/" + url.PathEscape(name) + "?shown=" + shown
	s.render(w, "dc", http.StatusOK, page{Title: name, Stream: stream, Data: v})
}

func (s *Server) policyPage(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	v := buildPolicyView(s.store, ns, name, s.opts.Now())
	if v == nil {
		s.renderError(w, http.StatusNotFound, fmt.Sprintf("rolloutpolicy %q not found in namespace %q (or you may not read it)", name, ns))
		return
	}
	shown, err := s.fragmentHash("policy", v)
	if err != nil {
		s.renderError(w, http.StatusInternalServerError, err.Error())
		return
	}
	stream := "/events/policy/" + url.PathEscape(ns) + "/" + url.PathEscape(name) + "?shown=" + shown
	s.render(w, "policy", http.StatusOK, page{Title: "RolloutPolicy " + name, Stream: stream, Data: v})
}

// diffData is the diff page's data.
type diffData struct {
	Namespace, Name string
	From, To        int64
	Versions        []int64
	Lines           []diffLine
	Error           string
}

func (s *Server) diffPage(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	dc := s.store.DeploymentConfig(ns, name)
	if dc == nil {
		s.renderError(w, http.StatusNotFound, fmt.Sprintf("deploymentconfig %q not found in namespace %q (or you may not read it)", name, ns))
		return
	}
	d := diffData{Namespace: ns, Name: name}
	d.From, _ = strconv.ParseInt(r.URL.Query().Get("from"), 10, 64)
	d.To, _ = strconv.ParseInt(r.URL.Query().Get("to"), 10, 64)
	texts := map[int64]string{}
	for _, rc := range deploymentsOf(s.store, dc) {
		v := deployment.Version(rc)
		d.Versions = append(d.Versions, v)
		if v == d.From || v == d.To {
			text, err := templateYAML(rc)
			if err != nil {
				d.Error = err.Error()
			}
			texts[v] = text
		}
	}
	_, hasFrom := texts[d.From]
	_, hasTo := texts[d.To]
	switch {
	case d.Error != "":
	case !hasFrom || !hasTo:
		d.Error = "pick two revisions that still exist"
	default:
		lines, err := diffLines(texts[d.From], texts[d.To])
		if err != nil {
			d.Error = err.Error()
		}
		d.Lines = lines
	}
	s.render(w, "diff", http.StatusOK, page{Title: name + ": revisions " + strconv.FormatInt(d.From, 10) + " and " + strconv.FormatInt(d.To, 10), Data: d})
}
