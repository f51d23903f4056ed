package realnode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// hostPackages are the Debian packages the node's runtime comes from, and
// a file or command each one provides; hack/node-deps.sh installs them.
var hostPackages = []struct{ pkg, provides string }{
	{"containerd", "containerd"},
	{"containerd", "ctr"},
	{"runc", "runc"},
	{"containernetworking-plugins", cniBinDir + "/bridge"},
	{"iptables", "iptables"},
	{"iproute2", "ip"},
	{"util-linux", "nsenter"},
}

// CheckHost checks that this process can run a real node: root, and the
// Debian packages of the runtime. The error names what is missing and how
// to get it.
func CheckHost() error {
	if os.Geteuid() != 0 {
		return errors.New("the real node needs root (it makes a network namespace and runs containerd and a kubelet): run as root")
	}
	if missing := missingPackages(); len(missing) > 0 {
		return fmt.Errorf("the real node needs the Debian packages %s: run hack/node-deps.sh as root (or: apt-get install --no-install-recommends %s)",
			strings.Join(missing, " "), strings.Join(missing, " "))
	}
	return nil
}

// missingPackages lists the packages whose file or command is missing.
func missingPackages() []string {
	var missing []string
	seen := map[string]bool{}
	for _, p := range hostPackages {
		if seen[p.pkg] || present(p.provides) {
			continue
		}
		seen[p.pkg] = true
		missing = append(missing, p.pkg)
	}
	return missing
}

func present(fileOrCommand string) bool {
	if strings.HasPrefix(fileOrCommand, "/") {
		_, err := os.Stat(fileOrCommand)
		return err == nil
	}
	_, err := exec.LookPath(fileOrCommand)
	return err == nil
}

// lastLines is the end of a log, for an error.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
