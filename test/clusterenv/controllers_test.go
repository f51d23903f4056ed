package clusterenv

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A replica leads when controller-runtime's leadership gauge says 1.
func TestReplicaLeading(t *testing.T) {
	tests := []struct {
		name    string
		metrics string
		status  int
		want    bool
		wantErr bool
	}{
		{name: "leader", status: http.StatusOK, want: true,
			metrics: "# TYPE leader_election_master_status gauge\n" + leaderMetric + " 1\n"},
		{name: "standby", status: http.StatusOK, metrics: leaderMetric + " 0\n"},
		{name: "no leader election", status: http.StatusOK, metrics: "workqueue_depth{name=\"deployer\"} 0\n"},
		{name: "another lease", status: http.StatusOK, metrics: `leader_election_master_status{name="other"} 1` + "\n"},
		{name: "not serving", status: http.StatusServiceUnavailable, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.metrics))
			}))
			defer srv.Close()
			r := &Replica{Name: "dc-controller-1", metricsURL: srv.URL}
			got, err := r.Leading(t.Context())
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("Leading() = %t, %v; want %t, error %t", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// The kube-apiserver's port is free and outside the ports kwokctl and the
// kernel hand out.
func TestAPIServerPort(t *testing.T) {
	port, err := apiServerPort()
	if err != nil {
		t.Fatal(err)
	}
	if port < minAPIServerPort || port >= maxAPIServerPort || !portFree(port) {
		t.Errorf("apiServerPort() = %d: want a free port in [%d, %d)", port, minAPIServerPort, maxAPIServerPort)
	}
}

// A replica gets --deployer-mode only when the spec names one, so that an
// empty mode runs dc-controller with its default.
func TestReplicaArgsDeployerMode(t *testing.T) {
	tests := []struct {
		mode string
		want string
	}{
		{mode: "", want: ""},
		{mode: "pod", want: "--deployer-mode=pod"},
		{mode: "controller-when-possible", want: "--deployer-mode=controller-when-possible"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			var got []string
			for _, arg := range replicaArgs("kubeconfig", "127.0.0.1:1", "127.0.0.1:2", ControllerSpec{Replicas: 1, DeployerMode: tt.mode}) {
				if strings.HasPrefix(arg, "--deployer-mode") {
					got = append(got, arg)
				}
			}
			if (tt.want == "" && len(got) != 0) || (tt.want != "" && (len(got) != 1 || got[0] != tt.want)) {
				t.Errorf("replicaArgs(mode %q) has %v, want %q", tt.mode, got, tt.want)
			}
		})
	}
}
