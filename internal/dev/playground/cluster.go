package playground

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// restartTimeout bounds how long a stopped cluster gets to serve again
	// after `kwokctl start cluster`.
	restartTimeout = time.Minute
	// healthTimeout bounds one health probe of the API server.
	healthTimeout = 5 * time.Second
	// cleanupTimeout bounds removing a cluster after its context has ended.
	cleanupTimeout = 2 * time.Minute
)

// Cluster is a running playground cluster.
type Cluster struct {
	// Name is the kwok cluster's name.
	Name string
	// Kubeconfig is the path of the cluster's kubeconfig.
	Kubeconfig string
	// Config is a client configuration for the cluster.
	Config *rest.Config
	// Clientset is a client for the cluster's built-in APIs.
	Clientset kubernetes.Interface
	// Reused is true when Create found the cluster already running.
	Reused bool

	opts Options
	// external is a cluster that dc-local serve does not drive (the real
	// node: dc-controller runs there as pods).
	external bool
}

// Attach returns a Cluster for the rollout helpers (WaitRollout,
// DeployerLog, ChangeTemplate) of a cluster that is not a kwok playground:
// the real node, whose dc-controller runs as pods, not in dc-local serve.
func Attach(name, kubeconfig string, cfg *rest.Config, cs kubernetes.Interface, reused bool) *Cluster {
	return &Cluster{Name: name, Kubeconfig: kubeconfig, Config: cfg, Clientset: cs, Reused: reused, external: true}
}

// Create starts the playground cluster described by o, or reuses the
// cluster of that name when it is already there (restarting it when it is
// stopped, recreating it when it cannot be restarted), and makes sure its
// fake nodes exist and are Ready.
func Create(ctx context.Context, o Options) (*Cluster, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := o.checkBinaries(clusterBinaries()...); err != nil {
		return nil, err
	}
	reused, err := ensureCluster(ctx, o)
	if err != nil {
		return nil, err
	}
	c, err := connect(o, reused)
	if err != nil {
		return nil, err
	}
	if err := ensureNodes(ctx, c.Clientset, o); err != nil {
		return nil, err
	}
	return c, nil
}

// Delete removes the cluster o names, with all its processes and state
// (its dc-local server is stopped first). A cluster that does not exist is
// not an error.
func Delete(ctx context.Context, o Options) error {
	o, err := o.withDefaults()
	if err != nil {
		return err
	}
	exists, err := exists(o)
	if err != nil || !exists {
		return err
	}
	if err := o.checkBinaries(KwokctlBinary); err != nil {
		return err
	}
	// The server first: it runs against the cluster, and its files are in
	// the cluster's directory.
	if err := StopServer(ctx, o); err != nil {
		return err
	}
	logf(o.Log, "Deleting cluster %q...", o.Name)
	return runKwokctl(ctx, o, deleteArgs(o)...)
}

// Exists reports whether kwokctl has a cluster of the name o gives, running
// or not.
func Exists(o Options) (bool, error) {
	o, err := o.withDefaults()
	if err != nil {
		return false, err
	}
	return exists(o)
}

// exists applies kwokctl's own rule: a cluster is a directory with a saved
// configuration.
func exists(o Options) (bool, error) {
	_, err := os.Stat(o.configPath())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking for cluster %q: %w", o.Name, err)
	}
	return true, nil
}

// ensureCluster makes sure the cluster exists and serves, and reports
// whether it was there already. It holds the creation lock throughout, so
// that concurrent calls neither pick the same ports nor both create the
// same cluster.
func ensureCluster(ctx context.Context, o Options) (reused bool, err error) {
	unlock, err := lockCreation(ctx, o)
	if err != nil {
		return false, err
	}
	defer unlock()
	found, err := exists(o)
	if err != nil {
		return false, err
	}
	if !found {
		return false, createCluster(ctx, o)
	}
	current, err := checkSavedConfig(o)
	if err != nil {
		return false, err
	}
	if !current {
		logf(o.Log, "Cluster %q was made by an older dc-local; creating it again", o.Name)
		if err := StopServer(ctx, o); err != nil {
			return false, err
		}
		if err := runKwokctl(ctx, o, deleteArgs(o)...); err != nil {
			return false, err
		}
		return false, createCluster(ctx, o)
	}
	if healthy(ctx, o) == nil {
		logf(o.Log, "Reusing cluster %q", o.Name)
		return true, nil
	}
	err = restartCluster(ctx, o)
	if err == nil {
		return true, nil
	}
	if ctx.Err() != nil {
		return false, err
	}
	logf(o.Log, "Cannot restart cluster %q (%v); creating it again", o.Name, err)
	if err := runKwokctl(ctx, o, deleteArgs(o)...); err != nil {
		return false, err
	}
	return false, createCluster(ctx, o)
}

// createCluster creates the cluster with kwokctl and removes what is left
// of it when that fails.
func createCluster(ctx context.Context, o Options) error {
	config, err := StageConfig(o.UnmanagedPodLabels)
	if err != nil {
		return err
	}
	file, err := writeTemp("dc-playground-kwok-*.yaml", config)
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(file) }()

	logf(o.Log, "Creating cluster %q (kwok, binary runtime, from %s)...", o.Name, o.BinDir)
	start := time.Now()
	if err := runKwokctl(ctx, o, createArgs(o, file)...); err != nil {
		cleanup(ctx, o)
		return err
	}
	if err := waitHealthy(ctx, o, o.Wait); err != nil {
		cleanup(ctx, o)
		return err
	}
	logf(o.Log, "Cluster %q is up (%s)", o.Name, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// restartCluster starts the processes of a stopped cluster again.
func restartCluster(ctx context.Context, o Options) error {
	logf(o.Log, "Cluster %q exists but does not answer; starting it again...", o.Name)
	if err := runKwokctl(ctx, o, startArgs(o)...); err != nil {
		return err
	}
	return waitHealthy(ctx, o, restartTimeout)
}

// cleanup removes a half-made cluster, even when ctx has ended (for
// example on an interrupt during creation).
func cleanup(ctx context.Context, o Options) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := runKwokctl(ctx, o, deleteArgs(o)...); err != nil {
		logf(o.Log, "Could not remove the half-made cluster %q: %v", o.Name, err)
	}
}

// checkSavedConfig refuses to reuse a cluster whose kwok would run the pods
// that the playground runs itself, such as one made by hand with kwokctl;
// it reports whether a cluster the playground made is current (an older
// dc-local's cluster lacks what the pod runtime needs).
func checkSavedConfig(o Options) (current bool, err error) {
	saved, err := os.ReadFile(o.configPath())
	if err != nil {
		return false, fmt.Errorf("reading the configuration of cluster %q: %w", o.Name, err)
	}
	for _, label := range o.UnmanagedPodLabels {
		if !strings.Contains(string(saved), label) {
			return false, fmt.Errorf("cluster %q was not made by the playground (its kwok would run pods labelled %s); delete it with `kwokctl delete cluster --name %s` or pick another name", o.Name, label, o.Name)
		}
	}
	return savedConfigCurrent(saved, o.UnmanagedPodLabels), nil
}

// savedConfigCurrent reports whether kwokctl's saved configuration of a
// cluster is what createCluster makes today: kwok reads kwokCRDs from the
// cluster, and every pod stage leaves the unmanaged pods alone.
func savedConfigCurrent(saved []byte, unmanagedLabels []string) bool {
	docs, err := decodeDocuments(saved)
	if err != nil {
		return false
	}
	crds := false
	for _, doc := range docs {
		switch doc["kind"] {
		case "KwokctlConfiguration":
			enabled, _, _ := unstructured.NestedStringSlice(doc, "options", "enableCRDs")
			crds = containsAll(enabled, kwokCRDs())
		case "Stage":
			if isPodStage(doc) && !excludesAll(doc, unmanagedLabels) {
				return false
			}
		}
	}
	return crds
}

// excludesAll reports whether a stage's selector skips pods with each of
// the labels.
func excludesAll(stage map[string]any, labels []string) bool {
	exprs, _, _ := unstructured.NestedSlice(stage, "spec", "selector", "matchExpressions")
	for _, label := range labels {
		found := false
		for _, e := range exprs {
			expr, _ := e.(map[string]any)
			// kwokctl saves the expression as {jq: {key, operator}}.
			if jq, ok := expr["jq"].(map[string]any); ok {
				expr = jq
			}
			if expr["key"] == labelKeyExpr(label) && expr["operator"] == "DoesNotExist" {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// containsAll reports whether have holds every one of want.
func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// healthy asks the cluster's API server whether it is ready.
func healthy(ctx context.Context, o Options) error {
	cfg, err := loadConfig(o.kubeconfigPath())
	if err != nil {
		return err
	}
	cfg.Timeout = healthTimeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("making a client for cluster %q: %w", o.Name, err)
	}
	if _, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		return fmt.Errorf("cluster %q is not ready: %w", o.Name, err)
	}
	return nil
}

// waitHealthy waits until the cluster's API server is ready.
func waitHealthy(ctx context.Context, o Options, timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = healthy(ctx, o)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("waiting for cluster %q: %w", o.Name, last)
	}
	return err
}

// connect makes the clients of a serving cluster.
func connect(o Options, reused bool) (*Cluster, error) {
	cfg, err := loadConfig(o.kubeconfigPath())
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making a client for cluster %q: %w", o.Name, err)
	}
	return &Cluster{
		Name:       o.Name,
		Kubeconfig: o.kubeconfigPath(),
		Config:     cfg,
		Clientset:  cs,
		Reused:     reused,
		opts:       o,
	}, nil
}

// loadConfig reads a kubeconfig, with client rate limits that suit tests
// and a playground rather than a shared cluster.
func loadConfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

// writeTemp writes data to a new temporary file and returns its path.
func writeTemp(pattern string, data []byte) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", fmt.Errorf("writing kwok's configuration: %w", err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("writing kwok's configuration: %w", err)
	}
	return f.Name(), nil
}
