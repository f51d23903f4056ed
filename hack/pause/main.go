// Command pause is the pod sandbox's process in the deployconfig/pause
// image (containerd's sandbox_image on the project's real node): it holds
// the pod's namespaces, reaps the zombies it inherits as PID 1, and exits 0
// on SIGTERM or SIGINT.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT)
	// One line once the signals are ours: a test waits for it.
	fmt.Fprintln(os.Stderr, "pause: holding the pod's namespaces")
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap waits for every child that has exited; signals coalesce, so one
// SIGCHLD may stand for many.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil && err != syscall.ECHILD {
			fmt.Fprintf(os.Stderr, "pause: wait: %v\n", err)
		}
		if pid <= 0 {
			return
		}
	}
}
