package imagebuild

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// ShellPackage is the Debian package the deployer image's shell comes from:
// one statically linked BusyBox holding sh and the usual commands.
const ShellPackage = "busybox-static"

// shellApplets are the BusyBox applets the deployer image links into /bin:
// what custom-strategy and hook scripts commonly run.
func shellApplets() []string {
	return []string{
		"[", "awk", "base64", "basename", "cat", "chmod", "cp", "cut", "date", "dirname",
		"echo", "env", "expr", "false", "find", "grep", "head", "hostname", "id", "kill",
		"ln", "ls", "mkdir", "mktemp", "mv", "printf", "ps", "pwd", "readlink", "rm",
		"rmdir", "sed", "seq", "sh", "sleep", "sort", "stat", "tail", "tee", "test",
		"timeout", "touch", "tr", "true", "uname", "uniq", "wc", "wget", "which", "xargs",
	}
}

// Shell is a static BusyBox to put into the deployer image.
type Shell struct {
	// Path is the binary's path on this machine.
	Path string
	// Version is the version the binary reports, e.g.
	// "BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1)".
	Version string
}

// FindShell returns the path of a statically linked BusyBox for arch (a
// GOARCH) from Debian's busybox-static package, extracted into the user's
// cache directory (deployconfig/busybox-static). It downloads the package
// with `apt-get download` into deployconfig/debs when no copy is cached
// (after `apt-get update` if that fails and this process is root), and
// extracts it with `dpkg-deb -x`: nothing is installed system-wide
// (busybox-static conflicts with the busybox package). Another
// architecture's package comes from package lists of that architecture
// kept in deployconfig/apt-ARCH, so the machine's own apt configuration is
// left alone. When that is impossible the error says what is missing and
// how to get the package.
func FindShell(ctx context.Context, arch string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the shell: %w", err)
	}
	cache = filepath.Join(cache, "deployconfig")
	debs := filepath.Join(cache, "debs")
	deb, err := cachedDeb(debs, arch)
	if err != nil {
		return "", err
	}
	if deb == "" {
		a := apt{dir: debs, arch: arch}
		if arch != runtime.GOARCH {
			a.lists = filepath.Join(cache, "apt-"+arch)
		}
		if deb, err = a.downloadDeb(ctx); err != nil {
			return "", err
		}
	}
	return extractShell(ctx, deb, filepath.Join(cache, ShellPackage))
}

// cachedDeb is the newest busybox-static package for arch in dir by file
// name, "" when there is none.
func cachedDeb(dir, arch string) (string, error) {
	debs, err := filepath.Glob(filepath.Join(dir, ShellPackage+"_*_"+arch+".deb"))
	if err != nil || len(debs) == 0 {
		return "", err
	}
	sort.Strings(debs)
	return debs[len(debs)-1], nil
}

// apt downloads a package for arch into dir, with package lists of its
// own in lists when arch is not this machine's.
type apt struct {
	dir, arch, lists string
}

// downloadDeb fetches the busybox-static package into a.dir with apt-get.
func (a apt) downloadDeb(ctx context.Context) (string, error) {
	pkg := ShellPackage + ":" + a.arch
	howTo := fmt.Sprintf("the deployer image needs a static BusyBox from Debian's %s package: "+
		"put %s_*_%s.deb into %s (apt-get download %s, as root after apt-get update), "+
		"or pass a static busybox binary (go run ./hack/images --shell PATH)", ShellPackage, ShellPackage, a.arch, a.dir, pkg)
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", fmt.Errorf("apt-get not found: %s", howTo)
	}
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return "", fmt.Errorf("make the package cache: %w", err)
	}
	out, err := a.run(ctx, "download", pkg)
	if err != nil && (os.Geteuid() == 0 || a.lists != "") {
		// The package lists may be missing or stale (a fresh container).
		if out, err = a.run(ctx, "update"); err == nil {
			out, err = a.run(ctx, "download", pkg)
		}
	}
	if err != nil {
		return "", fmt.Errorf("apt-get: %w: %s\n%s", err, strings.TrimSpace(out), howTo)
	}
	deb, err := cachedDeb(a.dir, a.arch)
	if err != nil || deb == "" {
		return "", fmt.Errorf("apt-get download %s left no package in %s: %s", pkg, a.dir, howTo)
	}
	return deb, nil
}

// run runs apt-get in a.dir and returns its combined output.
func (a apt) run(ctx context.Context, args ...string) (string, error) {
	opts := []string{"-q"}
	if a.lists != "" {
		for _, d := range []string{"lists/partial", "cache/archives/partial"} {
			if err := os.MkdirAll(filepath.Join(a.lists, d), 0o755); err != nil {
				return "", fmt.Errorf("make the package lists of %s: %w", a.arch, err)
			}
		}
		opts = append(opts, "-o", "APT::Architecture="+a.arch, "-o", "APT::Architectures::="+a.arch,
			"-o", "Dir::State::Lists="+filepath.Join(a.lists, "lists"), "-o", "Dir::Cache="+filepath.Join(a.lists, "cache"),
			// The lists are ours alone: apt's system-wide lock is not needed.
			"-o", "Debug::NoLocking=1")
	}
	cmd := exec.CommandContext(ctx, "apt-get", append(opts, args...)...)
	cmd.Dir = a.dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// extractShell extracts bin/busybox from deb into a directory of cache named
// after the package file, once, and returns its path.
func extractShell(ctx context.Context, deb, cache string) (string, error) {
	dir := filepath.Join(cache, strings.TrimSuffix(filepath.Base(deb), ".deb"))
	busybox := filepath.Join(dir, "bin", "busybox")
	if _, err := os.Stat(busybox); err == nil {
		return busybox, checkStatic(busybox, "")
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		return "", fmt.Errorf("dpkg-deb not found: it extracts busybox from %s (Debian's dpkg package has it)", deb)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("make the shell cache: %w", err)
	}
	tmp, err := os.MkdirTemp(cache, ".extract-")
	if err != nil {
		return "", fmt.Errorf("make the shell cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, tmp).CombinedOutput(); err != nil {
		return "", fmt.Errorf("dpkg-deb -x %s: %w: %s", deb, err, strings.TrimSpace(string(out)))
	}
	if err := checkStatic(filepath.Join(tmp, "bin", "busybox"), ""); err != nil {
		return "", fmt.Errorf("%s: %w", deb, err)
	}
	// Another build may have extracted it meanwhile: either copy will do.
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(busybox); statErr != nil {
			return "", fmt.Errorf("store the shell: %w", err)
		}
	}
	return busybox, nil
}

// elfMachines maps GOARCH to the ELF machine its binaries have.
func elfMachines() map[string]elf.Machine {
	return map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
}

// checkStatic refuses a file that is not a statically linked ELF executable
// for arch (any architecture when arch is empty): a dynamic one (with a
// PT_INTERP program header) would need a C library the images do not have.
func checkStatic(path, arch string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("shell %s is not an ELF executable: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("shell %s is dynamically linked (it has an interpreter): use the static busybox of Debian's %s package", path, ShellPackage)
		}
	}
	if want, ok := elfMachines()[arch]; ok && f.Machine != want {
		return fmt.Errorf("shell %s is built for %s, the images for %s", path, f.Machine, arch)
	}
	return nil
}

// loadShell reads and checks the BusyBox at path, built for arch.
func loadShell(path, arch string) (Shell, []byte, error) {
	if err := checkStatic(path, arch); err != nil {
		return Shell{}, nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Shell{}, nil, fmt.Errorf("read the shell: %w", err)
	}
	version, err := busyboxVersion(data)
	if err != nil {
		return Shell{}, nil, fmt.Errorf("shell %s: %w", path, err)
	}
	return Shell{Path: path, Version: version}, data, nil
}

// busyboxVersion finds the banner BusyBox prints ("BusyBox v1.35.0 (Debian
// 1:1.35.0-4+deb12u1+b1)") in its binary: the longest string starting with
// "BusyBox v" (others, such as syslogd's, lack the build).
func busyboxVersion(binary []byte) (string, error) {
	const marker = "BusyBox v"
	best := ""
	for rest := binary; ; {
		i := bytes.Index(rest, []byte(marker))
		if i < 0 {
			break
		}
		banner := rest[i:min(i+120, len(rest))]
		if end := bytes.IndexAny(banner, "\x00\n"); end >= 0 {
			banner = banner[:end]
		}
		if s := strings.TrimSpace(string(banner)); len(s) > len(best) {
			best = s
		}
		rest = rest[i+len(marker):]
	}
	if best == "" {
		return "", errors.New("not a BusyBox binary (no version banner)")
	}
	return best, nil
}
