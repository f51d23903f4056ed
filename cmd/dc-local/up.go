package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

// sampleTimeout bounds how long the applied samples get to show up.
const sampleTimeout = 30 * time.Second

// upFlags are the flags of `dc-local up`.
type upFlags struct {
	nodes     int
	namespace string
	wait      time.Duration
	follow    bool
	node      string
}

func newUpCommand(g *globalFlags) *cobra.Command {
	f := &upFlags{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start (or reuse) the playground cluster, install the CRD and apply the samples",
		Long: `up starts the playground cluster, or reuses it when it is already running,
installs the DeploymentConfig CRD from config/crd/bases, starts 'dc-local
serve' (dc-controller and the local pod runtime) in the background, applies
the samples of config/samples, waits for their rollouts, rolls out the
analysis sample twice (measured by the Prometheus that serve runs on
loopback: one version passes its analysis, the next fails it and is rolled
back) and prints how to use the cluster. Running it again is safe and fast.

With --follow (what 'make run' does) it then shows the server's log until
Ctrl-C, which stops dc-controller and the pod runtime and leaves the cluster;
without it they keep running in the background until 'dc-local down'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUp(cmd.Context(), cmd.OutOrStdout(), g, f)
		},
	}
	cmd.Flags().IntVar(&f.nodes, "nodes", playground.DefaultNodes, "number of fake (kwok) nodes, at least 1")
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "default", "namespace of the samples")
	cmd.Flags().DurationVar(&f.wait, "wait", 3*time.Minute, "how long the samples' rollouts get to finish")
	cmd.Flags().StringVar(&f.node, "node", nodeKwok, "kind of node: kwok (simulated, fast, no root) or real (a kubelet with containerd, real containers; needs root)")
	cmd.Flags().BoolVar(&f.follow, "follow", false, "show the server's log until Ctrl-C, then stop dc-controller and the pod runtime (the cluster stays)")
	return cmd
}

func runUp(ctx context.Context, out io.Writer, g *globalFlags, f *upFlags) error {
	switch f.node {
	case nodeKwok:
	case nodeReal:
		return runUpReal(ctx, out, g, f)
	default:
		return fmt.Errorf("--node %q: want %s or %s", f.node, nodeKwok, nodeReal)
	}
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
	// The Gateway API's CRDs, so that trafficRouting's routes can be made
	// (docs/traffic-routing.md); kwok has no data plane to serve them.
	if err := cluster.InstallCRDs(ctx, filepath.Join(o.BinDir, gatewayAPICRDsDir)); err != nil {
		return fmt.Errorf("%w (run 'hack/tools.sh gateway-api-crds')", err)
	}
	server, err := startServer(ctx, out, cluster, o.BinDir)
	if err != nil {
		return err
	}
	dcs, namespace, err := applySamples(ctx, out, cluster, filepath.Join(root, samplesDir), f.namespace)
	if err != nil {
		return err
	}
	rolloutErr := waitSamples(ctx, out, cluster, namespace, dcs, f.wait)
	if rolloutErr != nil && cluster.Reused {
		// A reused playground may hold a rollout that failed before this
		// run, e.g. one that a Ctrl-C stopped; the new rollout below tells
		// whether everything works now.
		fmt.Fprintf(out, "Note: %v\nThe cluster was reused; starting a new rollout.\n", rolloutErr)
		rolloutErr = nil
	}
	if rolloutErr == nil && len(dcs) > 0 {
		rolloutErr = showSecondRollout(ctx, out, cluster, namespace, dcs[0], f.wait)
	}
	if rolloutErr == nil {
		rolloutErr = cluster.ShowAnalysisRollouts(ctx, out, o, namespace, f.wait)
	}
	if err := showDeploymentConfigs(ctx, out, cluster, namespace); err != nil {
		return err
	}
	printNextSteps(out, cluster, o.BinDir, server, time.Since(start), f.follow)
	if rolloutErr != nil || !f.follow {
		return rolloutErr
	}
	return followServer(ctx, out, o, server)
}

// showSecondRollout changes a sample's pod template, as a user would, and
// shows the rollout its ConfigChange trigger starts.
func showSecondRollout(ctx context.Context, out io.Writer, cluster *playground.Cluster, namespace, name string, timeout time.Duration) error {
	before, err := cluster.ChangeTemplate(ctx, namespace, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nChanged the pod template of dc/%s; waiting for the rollout it triggers...\n", name)
	start := time.Now()
	r, err := cluster.WaitRollout(ctx, namespace, name, timeout, func(r playground.Rollout) bool {
		return r.Version > before && r.Done()
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "dc/%s: deployment #%d %s (%s)\n", name, r.Version, r.Phase(), time.Since(start).Round(100*time.Millisecond))
	showDeployerLog(ctx, out, cluster, namespace, r.RC.Name)
	if r.Phase() != dcv1.DeploymentPhaseComplete {
		return fmt.Errorf("the rollout of dc/%s failed: %s", name, r.RC.Annotations[dcv1.DeploymentStatusReasonAnnotation])
	}
	return nil
}

// startServer starts `dc-local serve` for the cluster in the background,
// or reuses the one that runs.
func startServer(ctx context.Context, out io.Writer, cluster *playground.Cluster, bin string) (*playground.Server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding dc-local's own binary: %w", err)
	}
	server, err := cluster.StartServer(ctx, []string{exe, "serve", "--name", cluster.Name, "--bin", bin, "--prometheus"})
	if err != nil {
		return nil, err
	}
	if server.Reused {
		fmt.Fprintf(out, "Reusing dc-local serve (pid %d, log %s)\n", server.PID, server.Log)
	}
	return server, nil
}

// waitSamples waits for the rollout of every sample DeploymentConfig and
// prints how each ended, with the deployer's log. A failed rollout is
// returned as an error, after the others.
func waitSamples(ctx context.Context, out io.Writer, cluster *playground.Cluster, namespace string, dcs []string, timeout time.Duration) error {
	var errs []error
	for _, name := range dcs {
		fmt.Fprintf(out, "Waiting for the rollout of dc/%s...\n", name)
		start := time.Now()
		r, err := cluster.WaitRollout(ctx, namespace, name, timeout, playground.Rollout.Done)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(out, "dc/%s: deployment #%d %s (%s)\n", name, r.Version, r.Phase(), time.Since(start).Round(100*time.Millisecond))
		showDeployerLog(ctx, out, cluster, namespace, r.RC.Name)
		if r.Phase() != dcv1.DeploymentPhaseComplete {
			errs = append(errs, fmt.Errorf("the rollout of dc/%s failed: %s", name, r.RC.Annotations[dcv1.DeploymentStatusReasonAnnotation]))
		}
	}
	return errors.Join(errs...)
}

// showDeployerLog prints a deployment's deployer log like `kubectl logs`.
func showDeployerLog(ctx context.Context, out io.Writer, cluster *playground.Cluster, namespace, rc string) {
	log, err := cluster.DeployerLog(ctx, namespace, rc)
	if err != nil {
		fmt.Fprintf(out, "(no deployer log: %v)\n", err)
		return
	}
	fmt.Fprintf(out, "\n$ kubectl logs %s -n %s\n%s", deployment.DeployerPodName(rc), namespace, log)
}

// applySamples applies the samples' kustomization, waits until its objects
// exist, and returns the names of the DeploymentConfigs and their
// namespace.
func applySamples(ctx context.Context, out io.Writer, cluster *playground.Cluster, dir, namespace string) ([]string, string, error) {
	ns, files, err := playground.KustomizationFiles(dir)
	if err != nil {
		return nil, "", err
	}
	if ns != "" {
		namespace = ns
	}
	a, err := playground.NewApplier(cluster.Config)
	if err != nil {
		return nil, "", err
	}
	objs, err := a.ApplyFiles(ctx, namespace, files...)
	if err != nil {
		return nil, "", err
	}
	if err := a.WaitExist(ctx, namespace, sampleTimeout, objs...); err != nil {
		return nil, "", err
	}
	fmt.Fprintf(out, "Applied %d sample(s) from %s to namespace %s\n", len(objs), dir, namespace)
	var dcs []string
	for _, obj := range objs {
		if obj.GroupVersionKind() == dcv1.GroupVersion.WithKind("DeploymentConfig") {
			dcs = append(dcs, obj.GetName())
		}
	}
	return dcs, namespace, nil
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
func printNextSteps(out io.Writer, cluster *playground.Cluster, bin string, server *playground.Server, took time.Duration, follow bool) {
	state := "started"
	if cluster.Reused {
		state = "reused"
	}
	where := "To use it:"
	if follow {
		where = "To use it, in another terminal:"
	}
	fmt.Fprintf(out, `
Playground %q is ready (%s, %s). %s

  export KUBECONFIG=%s PATH=%s:$PATH

Then try:
  kubectl get dc,rc,pods                 the DeploymentConfigs, their deployments and pods
  kubectl dc rollout latest hello        roll out the sample again
  kubectl dc rollout status hello -w     follow the rollout
  kubectl dc logs hello                  the deployer's log of the latest rollout
  kubectl dc describe hello              strategy, triggers, deployments, events
  kubectl dc dashboard                   watch and steer rollouts in a browser: http://127.0.0.1:8990/

%s`, cluster.Name, state, took.Round(100*time.Millisecond), where, cluster.Kubeconfig, bin, serverNote(server, follow))
}

// serverNote says where dc-controller and the pod runtime run and how they
// stop.
func serverNote(server *playground.Server, follow bool) string {
	if follow {
		return fmt.Sprintf(`dc-controller and the pod runtime (dc-local serve, pid %d) run until you
press Ctrl-C; their log follows (also in %s). Ctrl-C leaves the cluster;
make down removes it.

`, server.PID, server.Log)
	}
	return fmt.Sprintf(`dc-controller and the pod runtime run in the background (dc-local serve,
pid %d; log %s).
dc-local down stops them and removes the playground.
`, server.PID, server.Log)
}
