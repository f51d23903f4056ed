package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

// globalFlags are the flags every command shares.
type globalFlags struct {
	name    string
	root    string
	bin     string
	verbose bool
}

// newRootCommand builds the dc-local command tree; output goes to out.
func newRootCommand(out io.Writer) *cobra.Command {
	g := &globalFlags{}
	cmd := &cobra.Command{
		Use:   "dc-local",
		Short: "Run deployconfig's local playground cluster",
		Long: `dc-local runs a local Kubernetes cluster for trying deployconfig: a real
etcd, kube-apiserver, kube-controller-manager and kube-scheduler, with kwok
playing the kubelet of a few fake nodes (pods become Running without
containers), and dc-controller with a local pod runtime that really runs
deployer pods (dc-deploy, in-process) and hook pods (their command, as a
local process), so that rollouts happen and 'kubectl logs' shows them. No
Docker and no downloads: the binaries come from bin/, built by 'make tools'
and 'make build'. The cluster's state lives in kwokctl's directory
(~/.kwok/clusters/NAME).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(out)
	flags := cmd.PersistentFlags()
	flags.StringVar(&g.name, "name", playground.DefaultName, "name of the playground cluster")
	flags.StringVar(&g.root, "root", "", "the deployconfig checkout, for config/ and bin/ (default: found from the working directory or this binary)")
	flags.StringVar(&g.bin, "bin", "", "directory of kube-apiserver, etcd, kwok, kwokctl, ... (default: ROOT/bin)")
	flags.BoolVarP(&g.verbose, "verbose", "v", false, "also show kwokctl's own output")
	cmd.AddCommand(newUpCommand(g), newDownCommand(g), newKubeconfigCommand(g), newServeCommand(g),
		newNodeRegistryCommand(), newNodeForwardCommand())
	return cmd
}

// binDir is --bin, or ROOT/bin.
func (g *globalFlags) binDir() (string, error) {
	if g.bin != "" {
		return filepath.Abs(g.bin)
	}
	root, err := g.checkout()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin"), nil
}

// options turns the global flags into playground options.
func (g *globalFlags) options(log io.Writer) (playground.Options, error) {
	bin := g.bin
	if bin == "" {
		root, err := g.checkout()
		if err != nil {
			return playground.Options{}, err
		}
		bin = filepath.Join(root, "bin")
	}
	return playground.Options{Name: g.name, BinDir: bin, Log: log, Verbose: g.verbose}, nil
}

// checkout is the deployconfig checkout: --root, else the one around the
// working directory, else the one this binary was built into (ROOT/bin).
func (g *globalFlags) checkout() (string, error) {
	if g.root != "" {
		if !isCheckout(g.root) {
			return "", fmt.Errorf("--root %s is not a deployconfig checkout (no %s)", g.root, crdDir)
		}
		return filepath.Abs(g.root)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, start := range starts {
		if root, ok := findCheckout(start); ok {
			return root, nil
		}
	}
	return "", errors.New("cannot find the deployconfig checkout: run dc-local inside it or pass --root")
}

// crdDir and samplesDir are where a checkout keeps the CRDs and samples;
// gatewayAPICRDsDir is where hack/tools.sh puts the Gateway API's CRDs, in
// the binaries' directory.
const (
	crdDir            = "config/crd/bases"
	samplesDir        = "config/samples"
	gatewayAPICRDsDir = "gateway-api-crds"
)

// findCheckout walks up from dir to the first directory that is a
// deployconfig checkout.
func findCheckout(dir string) (string, bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		if isCheckout(dir) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// isCheckout reports whether dir has a go.mod and the CRD directory.
func isCheckout(dir string) bool {
	for _, p := range []string{"go.mod", crdDir} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return false
		}
	}
	return true
}
