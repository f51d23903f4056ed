package podruntime

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/deployconfig/deployconfig/internal/deployer"
)

// Client limits of an in-process deployer: client-go's defaults, which the
// dc-deploy binary in a real deployer pod has.
const (
	deployerQPS   = 5
	deployerBurst = 10
)

// DeployerRun is one in-process run of the deployer for a deployer pod's
// container.
type DeployerRun struct {
	// Config is the pod's own client configuration: a copy with no rate
	// limiter of its own (client-go makes one per client from QPS and
	// Burst, which are client-go's defaults), acting as the pod's service
	// account when the runtime impersonates service accounts.
	Config *rest.Config
	// Args are the container's arguments after the dc-deploy command
	// (e.g. --until=50%).
	Args []string
	// Getenv reads the container's environment (DC_DEPLOYMENT_NAME, ...).
	Getenv func(string) string
	// Stdout and Stderr are the container's output streams.
	Stdout, Stderr io.Writer
	// Log receives diagnostics for the runtime's own log.
	Log logr.Logger
}

// DeployFunc runs the deployer's code in-process for a deployer pod, as
// dc-deploy's main would with that environment and those arguments, until
// the rollout ends or ctx is cancelled (the pod was deleted or ran out of
// time). It returns the error dc-deploy would exit with; the runtime prints
// it as dc-deploy does ("error: ...") and the container exits 1.
type DeployFunc func(ctx context.Context, run DeployerRun) error

// exitCodeDeployerPanic is dc-deploy's exit code for an internal error.
const exitCodeDeployerPanic = 2

// runInProcess runs deploy like a process: its error is printed to stderr
// and becomes exit code 1 (and the termination message); a panic becomes
// exit code 2. When ctx ends, deploy gets grace() to return, as a process
// gets between SIGTERM and SIGKILL; one that does not is abandoned (a
// goroutine cannot be killed) and the container reported killed.
func runInProcess(ctx context.Context, deploy DeployFunc, run DeployerRun, grace func() time.Duration) (code int32, message string) {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- panicError{value: r}
			}
		}()
		done <- deploy(ctx, run)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		timer := time.NewTimer(grace())
		defer timer.Stop()
		select {
		case err = <-done:
		case <-timer.C:
			run.Log.Info("The in-process deployer did not stop within its grace period; abandoning it")
			return exitCodeKilled, ""
		}
	}
	return deployerExit(err, run.Stderr)
}

// deployerExit turns the deployer's result into an exit code and
// termination message, printing the error as dc-deploy's main does.
func deployerExit(err error, stderr io.Writer) (int32, string) {
	if err == nil {
		return 0, ""
	}
	if p, ok := err.(panicError); ok {
		fmt.Fprintf(stderr, "error: internal error: %v\n", p.value)
		return exitCodeDeployerPanic, "internal error: " + fmt.Sprint(p.value)
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	return 1, err.Error()
}

// panicError carries a recovered panic of the deployer.
type panicError struct{ value any }

func (p panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// deployerConfig is the client configuration of one deployer pod: its own
// rate limits, its own user agent, and the pod's service account when
// serviceAccount is set.
func deployerConfig(base *rest.Config, podName, serviceAccount, namespace string) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.RateLimiter = nil
	cfg.QPS, cfg.Burst = deployerQPS, deployerBurst
	cfg.UserAgent = DeployerCommand + " (" + namespace + "/" + podName + ")"
	if serviceAccount != "" {
		cfg.Impersonate = serviceAccountIdentity(namespace, serviceAccount)
	}
	return cfg
}

// serviceAccountIdentity is who a pod's service account token
// authenticates as.
func serviceAccountIdentity(namespace, name string) rest.ImpersonationConfig {
	return rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
}

// DeployInProcess is the DeployFunc of dc-local and dc-bench: it runs
// dc-deploy's code for a deployer pod, reading the container's arguments
// and environment as the binary does, with the pod's own client
// configuration.
func DeployInProcess(ctx context.Context, run DeployerRun) error {
	opts, err := deployer.ParseArgs(run.Args, run.Getenv)
	if err != nil {
		return err
	}
	opts.Out = run.Stdout
	opts.Config = run.Config
	opts.Log = run.Log
	return deployer.Run(ctx, opts)
}
