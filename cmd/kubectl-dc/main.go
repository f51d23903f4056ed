// Command kubectl-dc is the kubectl plugin for DeploymentConfigs, used as
// `kubectl dc ...`. Everything but process setup lives in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/deployconfig/deployconfig/internal/cli"
)

func main() {
	// controller-runtime's client logs through this logger; without one it
	// complains on stderr after a while, which a CLI must not do.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	code := cli.Main(ctx, cli.NewFactory(streams), os.Args[1:])
	stop()
	os.Exit(code)
}
