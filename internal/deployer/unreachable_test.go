package deployer

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// refused is the error of a dial to a port nobody listens on.
var refused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

// scriptedServer answers requests with errs in turn, then with 200, and
// /readyz with readyz in turn, then with 200. It records what it was sent.
type scriptedServer struct {
	mu     sync.Mutex
	errs   []error
	readyz []int
	sent   []string
	bodies []string
	// onSend runs before each answer to a request other than /readyz.
	onSend func(n int)
	// cutBodies is how many answers break off in their bodies.
	cutBodies int
}

func (s *scriptedServer) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.URL.Path == "/readyz" {
		status := http.StatusOK
		if len(s.readyz) > 0 {
			status, s.readyz = s.readyz[0], s.readyz[1:]
		}
		s.sent = append(s.sent, "readyz "+http.StatusText(status))
		return &http.Response{StatusCode: status, Body: http.NoBody}, nil
	}
	body := ""
	if req.Body != nil {
		data, _ := io.ReadAll(req.Body)
		body = string(data)
	}
	s.bodies = append(s.bodies, body)
	n := len(s.bodies)
	if s.onSend != nil {
		s.onSend(n)
	}
	if n <= len(s.errs) {
		s.sent = append(s.sent, req.Method+" "+req.URL.Path+" failed")
		return nil, s.errs[n-1]
	}
	if s.cutBodies > 0 {
		s.cutBodies--
		s.sent = append(s.sent, req.Method+" "+req.URL.Path+" cut off")
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(io.MultiReader(strings.NewReader(`{"kind":`), failingReader{}))}, nil
	}
	s.sent = append(s.sent, req.Method+" "+req.URL.Path)
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(`{"kind":"Scale"}`))}, nil
}

// failingReader is a body whose connection broke.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// An answer cut off in its body is asked for again, and the caller gets
// the whole of the next one.
func TestRetryUnreachableBodyCutOff(t *testing.T) {
	server := &scriptedServer{cutBodies: 1}
	rt := &retryUnreachable{next: server, sleep: noSleep, giveUp: time.Minute}
	resp, err := rt.RoundTrip(newRequest(t, t.Context(), http.MethodGet))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != `{"kind":"Scale"}` {
		t.Errorf("body %q, %v; want the second answer's", body, err)
	}
	if got, want := server.log(), "GET /api/v1/x cut off, readyz OK, GET /api/v1/x"; got != want {
		t.Errorf("the server saw:\n%s\nwant:\n%s", got, want)
	}
}

// A watch's answer is a stream, left to the caller to read.
func TestRetryUnreachableStreams(t *testing.T) {
	server := &scriptedServer{cutBodies: 1}
	rt := &retryUnreachable{next: server, sleep: noSleep, giveUp: time.Minute}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://127.0.0.1:1/api/v1/pods?watch=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("reading the watch: %v, want the break passed on", err)
	}
}

func (s *scriptedServer) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.sent, ", ")
}

// noSleep lets waits pass at once.
func noSleep(context.Context, time.Duration) bool { return true }

func newRequest(t *testing.T, ctx context.Context, method string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, "https://127.0.0.1:1/api/v1/x", strings.NewReader(`{"spec":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestRetryUnreachable(t *testing.T) {
	other := errors.New("tls: handshake failure")
	tests := []struct {
		name    string
		method  string
		errs    []error
		readyz  []int
		want    string
		wantErr error
	}{
		{name: "reached at once", method: http.MethodPut, want: "PUT /api/v1/x"},
		{name: "refused while the API server restarts, sent again once it is ready",
			method: http.MethodPut, errs: []error{refused, refused}, readyz: []int{http.StatusServiceUnavailable},
			want: "PUT /api/v1/x failed, readyz Service Unavailable, readyz OK, PUT /api/v1/x failed, readyz OK, PUT /api/v1/x"},
		{name: "a read that broke off is sent again", method: http.MethodGet, errs: []error{io.ErrUnexpectedEOF},
			want: "GET /api/v1/x failed, readyz OK, GET /api/v1/x"},
		{name: "a write that broke off is sent again", method: http.MethodPost, errs: []error{io.ErrUnexpectedEOF},
			want: "POST /api/v1/x failed, readyz OK, POST /api/v1/x"},
		{name: "another error is not retried", method: http.MethodGet, errs: []error{other},
			want: "GET /api/v1/x failed", wantErr: other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := &scriptedServer{errs: tt.errs, readyz: tt.readyz}
			rt := &retryUnreachable{next: server, sleep: noSleep, giveUp: time.Minute}
			resp, err := rt.RoundTrip(newRequest(t, t.Context(), tt.method))
			if !errors.Is(err, tt.wantErr) || (err == nil) != (resp != nil) {
				t.Fatalf("RoundTrip() = %v, %v; want error %v", resp, err, tt.wantErr)
			}
			if got := server.log(); got != tt.want {
				t.Errorf("the server saw:\n%s\nwant:\n%s", got, tt.want)
			}
			for i, body := range server.bodies {
				if body != `{"spec":{}}` {
					t.Errorf("attempt %d sent body %q, want the request's body", i+1, body)
				}
			}
		})
	}
}

// While the API server is away, other requests wait for it too: a server
// that is back but not ready may refuse what it would allow.
func TestRetryUnreachableHoldsOtherRequests(t *testing.T) {
	server := &scriptedServer{errs: []error{refused}, readyz: []int{http.StatusServiceUnavailable}}
	var wg sync.WaitGroup
	var rt *retryUnreachable
	var once sync.Once
	rt = &retryUnreachable{next: server, giveUp: time.Minute, sleep: func(context.Context, time.Duration) bool {
		// The API server is known to be away: another request starts.
		once.Do(func() {
			wg.Go(func() {
				if _, err := rt.RoundTrip(newRequest(t, context.Background(), http.MethodPatch)); err != nil {
					t.Errorf("the other request: %v", err)
				}
			})
		})
		return true
	}}
	if _, err := rt.RoundTrip(newRequest(t, t.Context(), http.MethodPut)); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	got := server.log()
	if ready := strings.Index(got, "readyz OK"); ready < 0 || strings.Index(got, "PATCH") < ready {
		t.Errorf("the other request was sent before the API server was ready: %s", got)
	}
}

// A request whose context ends while the API server is away returns.
func TestRetryUnreachableContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	release := make(chan struct{})
	server := &scriptedServer{errs: []error{refused}, onSend: func(int) { cancel() }}
	rt := &retryUnreachable{next: server, giveUp: time.Minute, sleep: func(context.Context, time.Duration) bool {
		<-release
		return false
	}}
	defer close(release)
	if _, err := rt.RoundTrip(newRequest(t, ctx, http.MethodGet)); !errors.Is(err, context.Canceled) {
		t.Errorf("RoundTrip() = %v, want the context's end", err)
	}
}

// A body that cannot be read again is sent once.
func TestRetryUnreachableOneShotBody(t *testing.T) {
	server := &scriptedServer{errs: []error{refused}}
	rt := &retryUnreachable{next: server, sleep: noSleep, giveUp: time.Minute}
	req, err := http.NewRequest(http.MethodPost, "https://127.0.0.1:1/api/v1/x", io.NopCloser(strings.NewReader("once")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.RoundTrip(req); !errors.Is(err, refused) || len(server.bodies) != 1 {
		t.Errorf("RoundTrip() = %v after %d sends, want the refusal after 1", err, len(server.bodies))
	}
}

// An API server that never gets ready is given up on: the request ends
// with the refusal.
func TestRetryUnreachableGivesUp(t *testing.T) {
	errs := make([]error, 1000)
	for i := range errs {
		errs[i] = refused
	}
	server := &scriptedServer{errs: errs}
	rt := &retryUnreachable{next: server, giveUp: 50 * time.Millisecond, sleep: func(ctx context.Context, _ time.Duration) bool {
		return sleepFor(ctx, time.Millisecond)
	}}
	if _, err := rt.RoundTrip(newRequest(t, t.Context(), http.MethodGet)); !errors.Is(err, refused) {
		t.Fatalf("RoundTrip() = %v, want the refusal", err)
	}
}
