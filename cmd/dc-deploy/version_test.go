package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/deployconfig/deployconfig/internal/deployer"
)

// dc-deploy --version prints its build and deploys nothing.
func TestVersionFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	deployed := false
	cmd := newRootCommand(&out, &errOut, func(string) string { return "" }, func(context.Context, deployer.Options, string) error {
		deployed = true
		return nil
	})
	cmd.SetArgs([]string{"--version"})
	if err := cmd.ExecuteContext(context.Background()); err != nil || deployed || !strings.HasPrefix(out.String(), "dc-deploy dev (commit ") {
		t.Errorf("dc-deploy --version: err %v, deployed %v, stdout %q", err, deployed, out.String())
	}
}
