package clusterenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

// pidSuffix ends the controllers' PID files.
const pidSuffix = ".pid"

// killControllers is the watchdog's step before it removes a cluster the
// test binary left: the controllers this package started run outside the
// cluster's own processes, so removing the cluster would not stop them.
func killControllers(o playground.Options) {
	if dir, err := o.ClusterDir(); err == nil {
		killControllerGroups(filepath.Join(dir, "dc-controllers"))
	}
}

// killControllerGroups kills the process groups of the controllers whose PID
// files are in dir, checking first that each PID still runs a controller
// of this cluster (its command line names dir).
func killControllerGroups(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*"+pidSuffix))
	for _, file := range files {
		pid, err := readPIDFile(file)
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		fmt.Printf("killed %s (pid %d)\n", strings.TrimSuffix(filepath.Base(file), pidSuffix), pid)
	}
}
