package playground

import (
	"strings"
	"testing"
)

// A cluster gets the kube-apiserver port it asks for, and kwokctl's
// choice otherwise.
func TestCreateArgsAPIServerPort(t *testing.T) {
	if joined := strings.Join(createArgs(Options{Name: "x", APIServerPort: 23456}, "/c.yaml"), " "); !strings.Contains(joined, "--kube-apiserver-port 23456") {
		t.Errorf("create args %q lack the kube-apiserver port", joined)
	}
	if joined := strings.Join(createArgs(Options{Name: "x"}, "/c.yaml"), " "); strings.Contains(joined, "--kube-apiserver-port") {
		t.Errorf("create args %q set a kube-apiserver port nobody asked for", joined)
	}
}
