package deployer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// How the deployer rides out a restarting API server (an upgrade, a crash):
// it does not listen for a few seconds, then serves for a few more before
// it is ready, answering with errors such as Forbidden while its
// authorizer's caches fill. A rollout should wait that out rather than fail.
const (
	unreachableFirstDelay = 200 * time.Millisecond
	unreachableMaxDelay   = 2 * time.Second
	// unreachableGiveUp bounds how long requests wait for the API server.
	unreachableGiveUp = 2 * time.Minute
	// readyzTimeout bounds one look at /readyz.
	readyzTimeout = 5 * time.Second
)

// retryUnreachable is a RoundTripper that holds requests back while the API
// server is away. A request whose connection is refused, or whose exchange
// broke off (the server died mid-answer), is sent again once the API server
// says it is ready (/readyz); until then every request waits, since a
// server that is back but not ready may refuse what it would allow. The
// answers of requests other than watches and followed logs are read here
// in full, so that one cut off in its body is sent again too.
//
// Sending a write again is safe because every write the deployer makes is:
// it sets scales to fixed counts, merge-patches annotations to fixed values,
// and creates hook pods that it reuses when they exist. A new kind of write must be safe to repeat too.
type retryUnreachable struct {
	next   http.RoundTripper
	sleep  func(context.Context, time.Duration) bool
	giveUp time.Duration

	mu sync.Mutex
	// back is closed once the API server is ready again; nil while it is
	// not known to be away.
	back chan struct{}
}

// newRetryUnreachable wraps next; it fits rest.Config's WrapTransport.
func newRetryUnreachable(next http.RoundTripper) http.RoundTripper {
	return &retryUnreachable{next: next, sleep: sleepFor, giveUp: unreachableGiveUp}
}

// RoundTrip sends the request once the API server is not known to be away,
// and again after it was found away, for up to giveUp or until the
// request's context ends.
func (t *retryUnreachable) RoundTrip(req *http.Request) (*http.Response, error) {
	deadline := time.Now().Add(t.giveUp)
	for {
		if !t.waitBack(req.Context()) {
			return nil, req.Context().Err()
		}
		resp, err := t.send(req)
		if err == nil || !away(err) || time.Now().After(deadline) {
			return resp, err
		}
		again, ok := rewound(req)
		if !ok {
			return resp, err
		}
		t.markAway(req)
		req = again
	}
}

// send sends req and, unless the answer is a stream, reads its body in
// full.
func (t *retryUnreachable) send(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil || streaming(req) {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the answer to %s %s: %w", req.Method, req.URL.Path, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// streaming reports whether the answer to req is a stream: a watch or a
// followed log.
func streaming(req *http.Request) bool {
	q := req.URL.Query()
	return q.Get("watch") == "true" || q.Get("watch") == "1" || q.Get("follow") == "true"
}

// away reports whether err means that the API server is away: the
// connection was refused, or the exchange broke off.
func away(err error) bool {
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "http2: client connection lost")
}

// waitBack waits until the API server is not known to be away; false when
// ctx ends first.
func (t *retryUnreachable) waitBack(ctx context.Context) bool {
	t.mu.Lock()
	back := t.back
	t.mu.Unlock()
	if back == nil {
		return true
	}
	select {
	case <-back:
		return true
	case <-ctx.Done():
		return false
	}
}

// markAway records that the API server is away and, unless it is already
// being watched, watches its /readyz (with req's address and credentials)
// until it is ready or giveUp has passed.
func (t *retryUnreachable) markAway(req *http.Request) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.back != nil {
		select {
		case <-t.back:
		default:
			return
		}
	}
	back := make(chan struct{})
	t.back = back
	go t.watchReady(req, back)
}

// watchReady polls /readyz until it answers OK, then closes back.
func (t *retryUnreachable) watchReady(req *http.Request, back chan struct{}) {
	defer close(back)
	delay := unreachableFirstDelay
	for start := time.Now(); time.Since(start) < t.giveUp; delay = min(2*delay, unreachableMaxDelay) {
		if !t.sleep(context.Background(), delay) || t.ready(req) {
			return
		}
	}
}

// ready reports whether the API server's /readyz answers OK.
func (t *retryUnreachable) ready(req *http.Request) bool {
	ctx, cancel := context.WithTimeout(context.Background(), readyzTimeout)
	defer cancel()
	probe := req.Clone(ctx)
	probe.Method = http.MethodGet
	probe.URL.Path, probe.URL.RawPath, probe.URL.RawQuery = "/readyz", "", ""
	probe.Body, probe.GetBody, probe.ContentLength = nil, nil, 0
	probe.Header.Del("Content-Type")
	resp, err := t.next.RoundTrip(probe)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

// rewound returns a copy of req to send again, with its body read anew;
// false when the body cannot be read again.
func rewound(req *http.Request) (*http.Request, bool) {
	again := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return again, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	again.Body = body
	return again, true
}

// sleepFor waits d, and reports false when ctx ends first.
func sleepFor(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
