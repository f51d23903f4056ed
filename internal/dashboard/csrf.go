package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Limits of the page tokens: a token is good for tokenLifetime after its
// page loaded, and at most maxTokens are kept (the oldest go first).
const (
	tokenLifetime = 12 * time.Hour
	maxTokens     = 10000
)

// tokens are the anti-CSRF tokens: one per page load, written into the
// page and required with every action it posts. A page of another site
// cannot read them.
type tokens struct {
	mu     sync.Mutex
	issued map[string]time.Time
	now    func() time.Time
}

func newTokens(now func() time.Time) *tokens {
	return &tokens{issued: map[string]time.Time{}, now: now}
}

// issue returns a new token.
func (t *tokens) issue() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a page token: %w", err)
	}
	token := hex.EncodeToString(b)
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if len(t.issued) >= maxTokens {
		t.dropOldest(now)
	}
	t.issued[token] = now
	return token, nil
}

// dropOldest removes the expired tokens, and the oldest one if none had
// expired.
func (t *tokens) dropOldest(now time.Time) {
	oldest, when := "", now
	for token, at := range t.issued {
		if now.Sub(at) > tokenLifetime {
			delete(t.issued, token)
			continue
		}
		if at.Before(when) || oldest == "" {
			oldest, when = token, at
		}
	}
	if len(t.issued) >= maxTokens {
		delete(t.issued, oldest)
	}
}

// valid reports whether token was issued and has not expired.
func (t *tokens) valid(token string) bool {
	if token == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.issued[token]
	return ok && t.now().Sub(at) <= tokenLifetime
}

// checkOrigin refuses a request that another site's page sent: its Origin
// must be this server's own (scheme http, the Host it was sent to), and a
// browser's Sec-Fetch-Site, when present, must say same-origin.
func checkOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return fmt.Errorf("the request has no Origin header")
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Host != r.Host {
		return fmt.Errorf("the request comes from %q, not from the dashboard (http://%s)", origin, r.Host)
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return fmt.Errorf("the request is %s, not same-origin", site)
	}
	return nil
}

// loopbackHost reports whether a request's Host names a loopback address:
// a dashboard bound to loopback answers nothing else, so that a page whose
// own name resolves to 127.0.0.1 (DNS rebinding) cannot read it.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
