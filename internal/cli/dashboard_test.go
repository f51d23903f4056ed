package cli

import (
	"bytes"
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

func TestDashboardFlags(t *testing.T) {
	runCases(t, []commandCase{{
		name: "port out of range",
		args: []string{"dashboard", "--port", "70000"},
	}, {
		name: "port not a number",
		args: []string{"dashboard", "--port", "web"},
	}, {
		name: "an argument",
		args: []string{"dashboard", "web"},
	}})
}

// The dashboard's actions and logs are kubectl dc commands run in the same
// process with the dashboard's clients: the same output, the same changes,
// in the namespace --namespace names.
func TestDashboardRunsCommandsInProcess(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantOut    string
		wantErr    string
		wantPaused bool
	}{
		{
			name:       "pause",
			args:       []string{"rollout", "pause", "web", "--namespace", "default"},
			wantOut:    "deploymentconfig.apps.deployconfig.io/web paused\n",
			wantPaused: true,
		},
		{
			name:    "refused as the CLI refuses",
			args:    []string{"rollout", "resume", "web", "--namespace", "default"},
			wantErr: `deploymentconfig "web" is not paused`,
		},
		{
			name:    "another namespace",
			args:    []string{"rollout", "pause", "web", "--namespace", "shop"},
			wantErr: `deploymentconfig "web" not found in namespace "shop"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, []runtime.Object{newDC("web", 1)}...)
			var out, errOut bytes.Buffer
			a := &app{Factory: f.factory(&out, &errOut)}
			clients, err := a.Connect(genericclioptions.NewConfigFlags(false))
			if err != nil {
				t.Fatal(err)
			}
			var cmdOut, cmdErr bytes.Buffer
			err = a.inProcess(clients)(context.Background(), tt.args, &cmdOut, &cmdErr)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if cmdOut.String() != tt.wantOut {
				t.Errorf("output %q, want %q", cmdOut.String(), tt.wantOut)
			}
			if got := f.getDC("web").Spec.Paused; got != tt.wantPaused {
				t.Errorf("paused %t, want %t", got, tt.wantPaused)
			}
			if out.Len()+errOut.Len() > 0 {
				t.Errorf("the command wrote to the dashboard's own streams: %q %q", out.String(), errOut.String())
			}
		})
	}
}
