package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// maxLine bounds one audit record; Metadata-level records are a few hundred
// bytes, so this only guards against a corrupt file.
const maxLine = 4 << 20

// Event is the part of an audit.k8s.io/v1 Event the benchmark reads.
type Event struct {
	Stage            string     `json:"stage"`
	Verb             string     `json:"verb"`
	User             UserInfo   `json:"user"`
	ImpersonatedUser *UserInfo  `json:"impersonatedUser,omitempty"`
	UserAgent        string     `json:"userAgent"`
	ObjectRef        *ObjectRef `json:"objectRef,omitempty"`
	ResponseStatus   *Status    `json:"responseStatus,omitempty"`
	// RequestReceived is when the API server got the request; Completed
	// is when it finished answering it (the record's stage timestamp).
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	Completed       time.Time `json:"stageTimestamp"`
}

// UserInfo is who made a request.
type UserInfo struct {
	Username string `json:"username"`
}

// ObjectRef is what a request was about.
type ObjectRef struct {
	Resource    string `json:"resource"`
	Subresource string `json:"subresource"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	APIGroup    string `json:"apiGroup"`
}

// Status is a request's result.
type Status struct {
	Code int `json:"code"`
}

// Username is who the request acted as: the impersonated user when there
// is one (deployer pods in the playground act as their service account
// through impersonation), else the authenticated one.
func (e Event) Username() string {
	if e.ImpersonatedUser != nil && e.ImpersonatedUser.Username != "" {
		return e.ImpersonatedUser.Username
	}
	return e.User.Username
}

// Code is the response's HTTP status code; 0 when it is not recorded.
func (e Event) Code() int {
	if e.ResponseStatus == nil {
		return 0
	}
	return e.ResponseStatus.Code
}

// Succeeded reports whether the request succeeded (2xx).
func (e Event) Succeeded() bool {
	return e.Code() >= 200 && e.Code() < 300
}

// IsWrite reports whether the request changes state: what the benchmark
// counts as a write.
func (e Event) IsWrite() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// Namespace is the namespace of the object, "" for cluster-scoped objects
// and non-resource requests.
func (e Event) Namespace() string {
	if e.ObjectRef == nil {
		return ""
	}
	return e.ObjectRef.Namespace
}

// Resource is "resource" or "resource/subresource", "" for non-resource
// requests.
func (e Event) Resource() string {
	if e.ObjectRef == nil {
		return ""
	}
	if e.ObjectRef.Subresource != "" {
		return e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
	}
	return e.ObjectRef.Resource
}

// Name is the object's name. The API server fills it in for creates from
// the object in the request, so it is empty only for objects created with
// generateName.
func (e Event) Name() string {
	if e.ObjectRef == nil {
		return ""
	}
	return e.ObjectRef.Name
}

// Read calls fn for every completed request in an audit log (records of
// the ResponseComplete and Panic stages; other stages describe the same
// request again). A line that is not JSON is an error naming its number.
func Read(r io.Reader, fn func(Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if len(strings.TrimSpace(string(text))) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(text, &e); err != nil {
			return fmt.Errorf("audit log line %d: %w", line, err)
		}
		if e.Stage != "ResponseComplete" && e.Stage != "Panic" {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the audit log: %w", err)
	}
	return nil
}
