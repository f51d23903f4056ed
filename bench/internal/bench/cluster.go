package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

const (
	// auditPolicyEnv is how kwokctl takes the API server's audit policy
	// from its environment (its --kube-audit-policy flag); the playground
	// passes its environment on to kwokctl.
	auditPolicyEnv = "KWOK_KUBE_AUDIT_POLICY"
	// auditLogName is where kwokctl has the API server write the audit
	// log, under the cluster's directory.
	auditLogName = "logs/audit.log"
	// benchUserAgent marks dc-bench's own requests in the audit log.
	benchUserAgent = "dc-bench"
	// namespaceGoneTimeout bounds the deletion of a scenario's namespace.
	namespaceGoneTimeout = 20 * time.Minute
)

// env is the benchmark's cluster and its clients.
type env struct {
	opts    Options
	cluster *playground.Cluster
	pg      playground.Options
	// dir is the cluster's directory (logs, audit log, runtime state).
	dir string
	// kube and client are dc-bench's own clients (user agent dc-bench).
	kube   kubernetes.Interface
	client client.Client
	// unlimited is a client without rate limit, for the raw write test.
	unlimited kubernetes.Interface
}

// newEnv creates a fresh cluster with the audit policy and the CRD.
func newEnv(ctx context.Context, o Options) (*env, error) {
	pg := playground.Options{Name: o.Name, BinDir: o.BinDir, Nodes: o.Nodes, Workdir: o.Workdir, Log: o.Log, ExtraArgs: o.kcmArgs()}
	dir, err := pg.ClusterDir()
	if err != nil {
		return nil, err
	}
	// A cluster of the same name left by an earlier run may lack the
	// audit policy; start from scratch.
	if err := playground.Delete(ctx, pg); err != nil {
		return nil, err
	}
	policy, err := writePolicy()
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(policy) }()
	// The playground has no option for API server flags; kwokctl reads
	// the audit policy from this variable too. It only matters to the
	// kwokctl child process, and is unset again once the cluster is up.
	if err := os.Setenv(auditPolicyEnv, policy); err != nil {
		return nil, fmt.Errorf("setting %s: %w", auditPolicyEnv, err)
	}
	cluster, err := playground.Create(ctx, pg)
	_ = os.Unsetenv(auditPolicyEnv)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, auditLogName)); err != nil {
		return nil, fmt.Errorf("the cluster has no audit log (kwokctl did not take the audit policy): %w", err)
	}
	if err := cluster.InstallCRDs(ctx, filepath.Join(o.Root, "config", "crd", "bases")); err != nil {
		return nil, err
	}
	e := &env{opts: o, cluster: cluster, pg: pg, dir: dir}
	return e, e.makeClients()
}

// writePolicy writes the audit policy to a temporary file, which kwokctl
// copies into the cluster's directory.
func writePolicy() (string, error) {
	f, err := os.CreateTemp("", "dc-bench-audit-*.yaml")
	if err != nil {
		return "", fmt.Errorf("writing the audit policy: %w", err)
	}
	_, werr := f.WriteString(audit.Policy)
	if err := f.Close(); werr != nil || err != nil {
		return "", fmt.Errorf("writing the audit policy: %v %v", werr, err)
	}
	return f.Name(), nil
}

// makeClients makes dc-bench's clients.
func (e *env) makeClients() error {
	cfg := rest.CopyConfig(e.cluster.Config)
	cfg.UserAgent = benchUserAgent
	cfg.QPS, cfg.Burst = float32(e.opts.BenchQPS), int(2*e.opts.BenchQPS)
	var err error
	if e.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("making dc-bench's client: %w", err)
	}
	scheme, err := controller.NewScheme()
	if err != nil {
		return err
	}
	if e.client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("making dc-bench's client: %w", err)
	}
	raw := rest.CopyConfig(cfg)
	// A negative QPS turns client-go's rate limiter off.
	raw.QPS, raw.Burst = -1, 0
	if e.unlimited, err = kubernetes.NewForConfig(raw); err != nil {
		return fmt.Errorf("making dc-bench's client: %w", err)
	}
	return nil
}

// maker is one of the clients that make the footprint's objects.
type maker struct {
	kube   kubernetes.Interface
	client client.Client
}

// makers returns n clients of dc-bench, each with a rate limiter of its
// own (BenchQPS): one client's limiter, shared by every worker, made
// 50,000 RCs take ~25 min. The first is dc-bench's own client.
func (e *env) makers(n int) ([]maker, error) {
	out := []maker{{kube: e.kube, client: e.client}}
	scheme, err := controller.NewScheme()
	if err != nil {
		return nil, err
	}
	for len(out) < n {
		cfg := rest.CopyConfig(e.cluster.Config)
		cfg.UserAgent = benchUserAgent
		cfg.QPS, cfg.Burst = float32(e.opts.BenchQPS), int(2*e.opts.BenchQPS)
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("making a client of dc-bench: %w", err)
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return nil, fmt.Errorf("making a client of dc-bench: %w", err)
		}
		out = append(out, maker{kube: kube, client: c})
	}
	return out, nil
}

// close removes the cluster unless the run keeps it.
func (e *env) close(ctx context.Context) error {
	if e.opts.Keep {
		fmt.Fprintf(e.opts.Log, "Keeping cluster %q: export KUBECONFIG=%s\n", e.opts.Name, e.cluster.Kubeconfig)
		return nil
	}
	return playground.Delete(context.WithoutCancel(ctx), e.pg)
}

// auditLogs are the API server's audit log files. The API server rotates
// its log at 100 MB (its --audit-log-maxsize is 0, which its log writer
// takes as that default) into audit-<time>.log beside it, keeping every
// backup; a run's log is all of them.
func (e *env) auditLogs() ([]string, error) {
	pattern := filepath.Join(e.dir, strings.TrimSuffix(auditLogName, ".log")+"*.log")
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no audit log matches %s", pattern)
	}
	return files, nil
}

// createNamespace creates a scenario's namespace.
func (e *env) createNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := e.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// deleteNamespace deletes a scenario's namespace and waits until it is
// gone, so that the next scenario runs on a quiet cluster.
func (e *env) deleteNamespace(ctx context.Context, name string) error {
	err := e.kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting namespace %s: %w", name, err)
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, namespaceGoneTimeout, false, func(ctx context.Context) (bool, error) {
		_, err := e.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for namespace %s to go: %w", name, err)
	}
	return nil
}

// versions reports what ran; what cannot be found is left empty.
func (e *env) versions(ctx context.Context) report.Versions {
	v := report.Versions{Go: runtime.Version()}
	if info, err := e.kube.Discovery().ServerVersion(); err == nil {
		v.Kubernetes = info.GitVersion
	}
	v.Kwok = firstLine(ctx, filepath.Join(e.opts.BinDir, playground.KwokctlBinary), "--version")
	v.Etcd = firstLine(ctx, filepath.Join(e.opts.BinDir, playground.EtcdBinary), "--version")
	v.Deployconfig = firstLine(ctx, "git", "-C", e.opts.Root, "describe", "--always", "--dirty")
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "sigs.k8s.io/controller-runtime" {
				v.ControllerRun = dep.Version
			}
		}
	}
	return v
}

// firstLine runs a command and returns the first line of its output, ""
// when it fails.
func firstLine(ctx context.Context, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// controlPlaneCPU reads the CPU seconds used so far by each control-plane
// process of the cluster, found by the PID files kwokctl keeps; a process
// it cannot read is left out.
func (e *env) controlPlaneCPU() map[string]float64 {
	out := make(map[string]float64, len(report.ControlPlaneProcesses))
	for _, name := range report.ControlPlaneProcesses {
		data, err := os.ReadFile(filepath.Join(e.dir, "pids", name+".pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			continue
		}
		if u, err := procstat.Read(pid); err == nil {
			out[name] = u.CPUSeconds
		}
	}
	return out
}

// cpuSince is the CPU each process used between two readings, for the
// processes read both times.
func cpuSince(before, after map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(after))
	for name, a := range after {
		if b, ok := before[name]; ok && a >= b {
			out[name] = a - b
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
