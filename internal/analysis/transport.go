package analysis

import (
	"fmt"
	"io"
	"net/http"
)

// MaxResponseBytes bounds the body of a Prometheus answer. An instant
// query that conditions can judge is a vector of a few series; a larger
// answer (a query over every series of a big cluster, or something that is
// not Prometheus) is an Error measurement rather than memory without
// bound in the deployer.
const MaxResponseBytes = 1 << 20

// limitResponses is client (or a default one) with every response body
// cut at MaxResponseBytes: reading past it is an error naming the limit.
func limitResponses(client *http.Client) *http.Client {
	c := &http.Client{}
	if client != nil {
		*c = *client
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = limitedTransport{base: base}
	return c
}

// limitedTransport wraps the bodies of its responses in limitedBody.
type limitedTransport struct {
	base http.RoundTripper
}

// RoundTrip sends req through the base transport and limits the body of
// its response.
func (t limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{body: resp.Body, left: MaxResponseBytes}
	return resp, nil
}

// limitedBody reads at most left more bytes of body; a byte beyond them
// is an error.
type limitedBody struct {
	body io.ReadCloser
	left int64
}

// Read reads from the body within the limit.
func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.body.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("the response is over the limit of %d MiB", MaxResponseBytes>>20)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

// Close closes the body.
func (b *limitedBody) Close() error {
	return b.body.Close()
}
