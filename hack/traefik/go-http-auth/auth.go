// Package auth stands in for the go-http-auth fork that Traefik's BasicAuth
// and DigestAuth middlewares use, which the Go module proxy does not serve.
// It has the names those middlewares call and refuses every request: an
// authentication middleware in this build never lets anyone through.
package auth

import "net/http"

// SecretProvider returns the stored secret of a user in a realm, or "".
type SecretProvider func(user, realm string) string

// CheckSecret reports whether password matches secret: never, here.
func CheckSecret(_, _ string) bool { return false }

// BasicAuth answers requests that fail HTTP basic authentication.
type BasicAuth struct {
	Realm   string
	Secrets SecretProvider
}

// RequireAuth asks the client to authenticate.
func (a *BasicAuth) RequireAuth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("WWW-Authenticate", `Basic realm="`+a.Realm+`"`)
	http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
}

// DigestAuth answers requests that fail HTTP digest authentication.
type DigestAuth struct {
	Realm   string
	Secrets SecretProvider
}

// NewDigestAuthenticator returns a DigestAuth for realm.
func NewDigestAuthenticator(realm string, secrets SecretProvider) *DigestAuth {
	return &DigestAuth{Realm: realm, Secrets: secrets}
}

// CheckAuth returns the authenticated user: nobody, here.
func (a *DigestAuth) CheckAuth(_ *http.Request) (string, *string) { return "", nil }

// RequireAuth refuses the request.
func (a *DigestAuth) RequireAuth(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
}

// RequireAuthStale refuses the request.
func (a *DigestAuth) RequireAuthStale(w http.ResponseWriter, r *http.Request) { a.RequireAuth(w, r) }

// DigestAuthParams parses a digest Authorization header: this build reads
// none.
func DigestAuthParams(_ string) map[string]string { return nil }
