package playground

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCreateArgs(t *testing.T) {
	o := Options{Name: "demo", BinDir: "/opt/bin", Wait: 90 * time.Second}
	args := createArgs(o, "/tmp/kwok.yaml")
	joined := strings.Join(args, " ")
	for _, want := range []string{
		"--config /tmp/kwok.yaml create cluster",
		"--name demo",
		"--runtime binary",
		"--kube-apiserver-binary /opt/bin/kube-apiserver",
		"--kube-controller-manager-binary /opt/bin/kube-controller-manager",
		"--kube-scheduler-binary /opt/bin/kube-scheduler",
		"--etcd-binary /opt/bin/etcd",
		"--kwok-controller-binary /opt/bin/kwok",
		"--enable-crds=Logs",
		"--wait 1m30s",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("create args %q lack %q", joined, want)
		}
	}
	// The user's own kubeconfig is left alone.
	if !slices.Contains(args, "--kubeconfig=") {
		t.Errorf("create args %q do not clear --kubeconfig", joined)
	}
	o.Workdir = "/w"
	if del := strings.Join(deleteArgs(o), " "); !strings.Contains(del, "--kubeconfig /w/clusters/demo/kubeconfig.yaml") {
		t.Errorf("delete args %q do not point --kubeconfig at the cluster's own", del)
	}
}

func TestCommandWords(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{createArgs(Options{Name: "x"}, "/c.yaml"), "create cluster"},
		{deleteArgs(Options{Name: "x"}), "delete cluster"},
		{startArgs(Options{Name: "x"}), "start cluster"},
		{[]string{"get", "clusters"}, "get clusters"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(commandWords(tt.args), " "); got != tt.want {
			t.Errorf("commandWords(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestLastLine(t *testing.T) {
	tests := []struct{ out, want string }{
		{"", ""},
		{"\n\n", ""},
		{"one", ": one"},
		{"one\ntwo\n\n", ": two"},
		{"  spaced  \n", ": spaced"},
		{`{"level":"ERROR","msg":"Execute exit","err":"empty path"}`, ": Execute exit: empty path"},
		{`{"level":"INFO","msg":"Cluster is ready"}`, ": Cluster is ready"},
		{`{"level":"INFO","msg":"Cluster is stopped","elapsed":{"nanosecond":11954512,"human":"11.954512ms"}}`, ": Cluster is stopped (11.954512ms)"},
		{`{"not":"a log record"}`, `: {"not":"a log record"}`},
	}
	for _, tt := range tests {
		if got := lastLine(tt.out); got != tt.want {
			t.Errorf("lastLine(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}

func TestLineWriter(t *testing.T) {
	var out strings.Builder
	lw := &lineWriter{w: &out}
	for _, chunk := range []string{`{"level":"INFO","msg":"Clus`, "ter is creating\"}\nplain", " text\n\n", "tail"} {
		if _, err := lw.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	lw.flush()
	want := "  kwokctl: Cluster is creating\n  kwokctl: plain text\n  kwokctl: tail\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
