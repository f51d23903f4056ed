package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/playground"
)

// sampleTimeout bounds how long the applied samples get to show up.
const sampleTimeout = 30 * time.Second

// upFlags are the flags of `dc-local up`.
type upFlags struct {
	nodes     int
	namespace string
}

func newUpCommand(g *globalFlags) *cobra.Command {
	f := &upFlags{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start (or reuse) the playground cluster, install the CRD and apply the samples",
		Long: `up starts the playground cluster, or reuses it when it is already running,
installs the DeploymentConfig CRD from config/crd/bases, applies the samples
of config/samples and prints how to use the cluster. Running it again is safe
and fast.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUp(cmd.Context(), cmd.OutOrStdout(), g, f)
		},
	}
	cmd.Flags().IntVar(&f.nodes, "nodes", playground.DefaultNodes, "number of fake (kwok) nodes, at least 1")
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "default", "namespace of the samples")
	return cmd
}

func runUp(ctx context.Context, out io.Writer, g *globalFlags, f *upFlags) error {
	if f.nodes < 1 {
		return fmt.Errorf("--nodes %d: want at least 1", f.nodes)
	}
	start := time.Now()
	root, err := g.checkout()
	if err != nil {
		return err
	}
	o, err := g.options(out)
	if err != nil {
		return err
	}
	o.Nodes = f.nodes
	cluster, err := playground.Create(ctx, o)
	if err != nil {
		return err
	}
	if err := cluster.InstallCRDs(ctx, filepath.Join(root, crdDir)); err != nil {
		return err
	}
	if err := startController(ctx, out, cluster); err != nil {
		return err
	}
	if err := applySamples(ctx, out, cluster, filepath.Join(root, samplesDir), f.namespace); err != nil {
		return err
	}
	if err := showDeploymentConfigs(ctx, out, cluster, f.namespace); err != nil {
		return err
	}
	printNextSteps(out, cluster, o.BinDir, time.Since(start))
	return nil
}

// startController runs dc-controller against the cluster once the
// playground has it; until then it says so.
func startController(ctx context.Context, out io.Writer, cluster *playground.Cluster) error {
	err := cluster.StartController(ctx)
	if errors.Is(err, playground.ErrNoController) {
		fmt.Fprintf(out, "Note: %v\n", err)
		return nil
	}
	return err
}

// applySamples applies the samples' kustomization and waits until its
// objects exist.
func applySamples(ctx context.Context, out io.Writer, cluster *playground.Cluster, dir, namespace string) error {
	ns, files, err := playground.KustomizationFiles(dir)
	if err != nil {
		return err
	}
	if ns != "" {
		namespace = ns
	}
	a, err := playground.NewApplier(cluster.Config)
	if err != nil {
		return err
	}
	objs, err := a.ApplyFiles(ctx, namespace, files...)
	if err != nil {
		return err
	}
	if err := a.WaitExist(ctx, namespace, sampleTimeout, objs...); err != nil {
		return err
	}
	fmt.Fprintf(out, "Applied %d sample(s) from %s to namespace %s\n", len(objs), dir, namespace)
	return nil
}

// showDeploymentConfigs prints the namespace's DeploymentConfigs like
// `kubectl get dc`.
func showDeploymentConfigs(ctx context.Context, out io.Writer, cluster *playground.Cluster, namespace string) error {
	table, err := playground.GetTable(ctx, cluster.Config, dcv1.GroupVersion.WithResource("deploymentconfigs"), namespace)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n$ kubectl get dc -n %s\n", namespace)
	return playground.WriteTable(out, table)
}

// printNextSteps tells the user how to reach the cluster and what to try.
func printNextSteps(out io.Writer, cluster *playground.Cluster, bin string, took time.Duration) {
	state := "started"
	if cluster.Reused {
		state = "reused"
	}
	fmt.Fprintf(out, `
Playground %q is ready (%s, %s). To use it:

  export KUBECONFIG=%s

Then try (kubectl is in %s):
  kubectl get dc                  the DeploymentConfigs
  kubectl describe dc hello       the sample's spec and status
  kubectl get nodes,pods          kwok's fake nodes and their pods
  kubectl dc rollout latest hello (the kubectl-dc plugin, coming later)

dc-local down removes the playground.
`, cluster.Name, state, took.Round(100*time.Millisecond), cluster.Kubeconfig, bin)
}
