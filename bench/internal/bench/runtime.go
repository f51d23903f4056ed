package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/deployconfig/deployconfig/internal/dev/playground"
	"github.com/deployconfig/deployconfig/internal/dev/podruntime"
)

// runtimeQPS and runtimeBurst are each fake node's kubelet client in the
// pod runtime: the kubelet's defaults (kubeAPIQPS 50, kubeAPIBurst 100),
// one client per node as each node has its kubelet.
const (
	runtimeQPS   = 50
	runtimeBurst = 100
)

// startRuntime runs the playground's pod runtime in dc-bench's process: it
// plays the kubelet of deployer pods, running each deployer in-process with
// its own client (dc-deploy's settings and user agent, acting as the pod's
// service account). It returns a function that stops it and waits.
func startRuntime(ctx context.Context, e *env, logPath string) (stop func(), err error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the pod runtime's log: %w", err)
	}
	rt, err := podruntime.New(podruntime.Options{
		Config:                     e.cluster.Config,
		Kubeconfig:                 e.cluster.Kubeconfig,
		StateDir:                   filepath.Join(e.dir, "dc-bench-runtime"),
		BinDir:                     e.opts.BinDir,
		Deploy:                     podruntime.DeployInProcess,
		DeployerImages:             []string{deployerImage},
		NodeSelector:               labels.SelectorFromSet(labels.Set{playground.FakeNodeLabel: playground.FakeNodeLabelValue}),
		ImpersonateServiceAccounts: true,
		QPS:                        runtimeQPS,
		Burst:                      runtimeBurst,
		Log:                        zap.New(zap.WriteTo(logFile)),
	})
	if err != nil {
		_ = logFile.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := rt.Run(ctx); err != nil {
			fmt.Fprintf(logFile, "pod runtime: %v\n", err)
		}
	}()
	return func() {
		cancel()
		<-done
		_ = logFile.Close()
	}, nil
}
