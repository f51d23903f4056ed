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

// Each extra argument reaches kwokctl as one --extra-args value.
func TestCreateArgsExtraArgs(t *testing.T) {
	o := Options{Name: "x", ExtraArgs: []string{"kube-controller-manager=kube-api-qps=100", "kube-controller-manager=kube-api-burst=150"}}
	joined := strings.Join(createArgs(o, "/c.yaml"), " ")
	for _, want := range []string{"--extra-args kube-controller-manager=kube-api-qps=100", "--extra-args kube-controller-manager=kube-api-burst=150"} {
		if !strings.Contains(joined, want) {
			t.Errorf("create args %q lack %q", joined, want)
		}
	}
	if joined := strings.Join(createArgs(Options{Name: "x"}, "/c.yaml"), " "); strings.Contains(joined, "--extra-args") {
		t.Errorf("create args %q pass extra args nobody asked for", joined)
	}
}
