package main

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/deployconfig/deployconfig/internal/deployer"
)

func TestRootCommand(t *testing.T) {
	env := map[string]string{
		"DC_DEPLOYMENT_NAME":             "web-3",
		"DC_DEPLOYMENT_NAMESPACE":        "shop",
		"OPENSHIFT_DEPLOYMENT_NAME":      "legacy-1",
		"OPENSHIFT_DEPLOYMENT_NAMESPACE": "legacy",
	}
	legacyOnly := map[string]string{"OPENSHIFT_DEPLOYMENT_NAME": "legacy-1", "OPENSHIFT_DEPLOYMENT_NAMESPACE": "legacy"}
	tests := []struct {
		name           string
		env            map[string]string
		args           []string
		wantNamespace  string
		wantName       string
		wantUntil      string
		wantKubeconfig string
		wantErr        bool
	}{
		{name: "from the environment", env: env, wantNamespace: "shop", wantName: "web-3"},
		{name: "flags win", env: env, args: []string{"--deployment", "web-4", "--namespace=other", "--until=50%"},
			wantNamespace: "other", wantName: "web-4", wantUntil: "50%"},
		{name: "OpenShift's variables as a fallback", env: legacyOnly, wantNamespace: "legacy", wantName: "legacy-1"},
		{name: "kubeconfig", env: env, args: []string{"--kubeconfig", "/tmp/kc", "--until", "100%"},
			wantNamespace: "shop", wantName: "web-3", wantUntil: "100%", wantKubeconfig: "/tmp/kc"},
		{name: "no positional arguments", env: env, args: []string{"web-3"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got deployer.Options
			var gotKubeconfig string
			called := false
			deploy := func(_ context.Context, opts deployer.Options, kubeconfig string) error {
				called, got, gotKubeconfig = true, opts, kubeconfig
				return nil
			}
			var out, errOut bytes.Buffer
			cmd := newRootCommand(&out, &errOut, func(k string) string { return tt.env[k] }, deploy)
			cmd.SetArgs(tt.args)
			err := cmd.ExecuteContext(t.Context())
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %t", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if !called {
				t.Fatal("deploy was not called")
			}
			if got.Namespace != tt.wantNamespace || got.Name != tt.wantName || got.Until != tt.wantUntil || gotKubeconfig != tt.wantKubeconfig {
				t.Errorf("got %s/%s until %q kubeconfig %q", got.Namespace, got.Name, got.Until, gotKubeconfig)
			}
			if got.Out != &out {
				t.Error("the rollout's log does not go to the command's output")
			}
		})
	}
}

func TestRootCommandError(t *testing.T) {
	failed := errors.New("pre hook failed: boom")
	cmd := newRootCommand(&bytes.Buffer{}, &bytes.Buffer{}, func(string) string { return "" },
		func(context.Context, deployer.Options, string) error { return failed })
	cmd.SetArgs(nil)
	if err := cmd.ExecuteContext(t.Context()); !errors.Is(err, failed) {
		t.Errorf("err = %v, want the deployer's error", err)
	}
}
