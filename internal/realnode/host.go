package realnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// hostPackages are the Debian packages the node's runtime comes from, and
// a file or command each one provides.
var hostPackages = []struct{ pkg, provides string }{
	{"containerd", "containerd"},
	{"containerd", "ctr"},
	{"runc", "runc"},
	{"containernetworking-plugins", cniBinDir + "/bridge"},
	{"iptables", "iptables"},
	{"iproute2", "ip"},
	{"util-linux", "nsenter"},
}

// EnsureHost checks that this process can run a real node (root, and the
// Debian packages of the runtime) and installs missing packages with apt
// when it can. The error names what is missing and how to get it.
func EnsureHost(ctx context.Context, log io.Writer) error {
	if os.Geteuid() != 0 {
		return errors.New("the real node needs root (it makes a network namespace and runs containerd and a kubelet): run as root")
	}
	missing := missingPackages()
	if len(missing) == 0 {
		return nil
	}
	fmt.Fprintf(log, "installing Debian packages %s for the real node...\n", strings.Join(missing, " "))
	if err := aptInstall(ctx, missing); err != nil {
		return fmt.Errorf("the real node needs the Debian packages %s, and installing them failed: %w\n(install them with: apt-get update && apt-get install --no-install-recommends %s)",
			strings.Join(missing, " "), err, strings.Join(missing, " "))
	}
	if still := missingPackages(); len(still) > 0 {
		return fmt.Errorf("the real node needs the Debian packages %s: still missing after apt-get install", strings.Join(still, " "))
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

func aptInstall(ctx context.Context, pkgs []string) error {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return errors.New("apt-get not found (not a Debian system?)")
	}
	if err := run(ctx, "apt-get", "update"); err != nil {
		return err
	}
	args := append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, pkgs...)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, lastLines(string(out), 5))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
