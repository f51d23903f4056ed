package deployment

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// RequestKind is what a person asks of a running rollout.
type RequestKind string

const (
	// RequestPromote ends one wait for a person (a pause, a blue-green
	// promotion, an Inconclusive analysis). It never skips a gate: an
	// analysis that runs goes on running.
	RequestPromote RequestKind = "promote"
	// RequestPromoteFull skips every remaining step and analysis, stopping
	// one that runs, and goes to 100% (a blue-green rollout switches for
	// good).
	RequestPromoteFull RequestKind = "promote-full"
)

// Request is a promote request on a running deployment: the only thing
// clients (the CLI, the dashboard through it, dc-controller for Argo CD's
// actions) write on it. The runner acts on it at most once and records so
// in the progress record. Its JSON is the RC's
// deployconfig.io/promote-request annotation.
type Request struct {
	// ID tells this request from every other; the runner records it.
	ID string `json:"id"`
	// Kind is what is asked.
	Kind RequestKind `json:"kind"`
	// Gate, for RequestPromote, is the wait it ends (Wait.Gate as the
	// client read it): a request for a wait that is over ends no other.
	Gate string `json:"gate,omitempty"`
}

// ReadRequest returns the deployment's promote request, if it has one.
// Requests written before the record existed ("full", or the step number
// whose pause they ended) read as such requests, named by their value.
func ReadRequest(rc *corev1.ReplicationController) (Request, bool) {
	raw, ok := rc.Annotations[dcv1.PromoteRequestAnnotation]
	if !ok || raw == "" {
		return Request{}, false
	}
	var req Request
	if err := json.Unmarshal([]byte(raw), &req); err == nil && req.ID != "" {
		switch req.Kind {
		case RequestPromote, RequestPromoteFull:
			return req, true
		}
		return Request{}, false
	}
	if raw == legacyFull {
		return Request{ID: "legacy-full", Kind: RequestPromoteFull}, true
	}
	if k, err := strconv.Atoi(raw); err == nil && k >= 1 {
		return Request{ID: "legacy-" + raw, Kind: RequestPromote, Gate: StepGate(k)}, true
	}
	return Request{}, false
}

// Encode returns the request as its annotation's value.
func (r Request) Encode() string {
	data, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("encode request: %v", err))
	}
	return string(data)
}

// RequestPatch returns the merge patch that writes the request on a
// deployment.
func RequestPatch(r Request) ([]byte, error) {
	return json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{dcv1.PromoteRequestAnnotation: r.Encode()}}})
}

// Pending returns the request on rc that the runner has not acted on yet
// and that applies at gate: a full promote applies anywhere, a promote
// only to the wait it names.
func Pending(rc *corev1.ReplicationController, p Progress, gate string) (Request, bool) {
	req, ok := ReadRequest(rc)
	if !ok || p.HasConsumed(req.ID) {
		return Request{}, false
	}
	if req.Kind == RequestPromoteFull || req.Gate == gate {
		return req, true
	}
	return Request{}, false
}

// PendingFull returns an unconsumed full promote on rc.
func PendingFull(rc *corev1.ReplicationController, p Progress) (Request, bool) {
	req, ok := ReadRequest(rc)
	if !ok || p.HasConsumed(req.ID) || req.Kind != RequestPromoteFull {
		return Request{}, false
	}
	return req, true
}

// legacyFull is the value of a full promote before requests had IDs.
const legacyFull = "full"

// newRequestID returns a fresh request ID: random, so that two clients
// promoting at once never write the same one.
func newRequestID() string {
	return rand.Text()[:16]
}
