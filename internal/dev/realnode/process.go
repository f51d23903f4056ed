package realnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a daemon gets between SIGTERM and SIGKILL.
const stopGrace = 10 * time.Second

// daemon is one long-running process of the cluster.
type daemon struct {
	name string
	// inNamespace runs it with `nsenter --net=` in the cluster's network
	// namespace; otherwise it runs in the caller's.
	inNamespace bool
	args        []string
}

// start starts d in a process group of its own (a Ctrl-C in the terminal
// that made the cluster does not stop it), with its output in
// logs/NAME.log, and records its PID and start time in pids/NAME so that
// Delete stops it even after this process died, and never stops another
// process that reused the PID.
func (s *state) start(d daemon) error {
	args := d.args
	if d.inNamespace {
		args = append([]string{"nsenter", "--net=" + netnsPath(s.Netns), "--"}, args...)
	}
	logFile, err := os.OpenFile(s.logPath(d.name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("start %s: %w", d.name, err)
	}
	defer logFile.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", d.name, err)
	}
	// Reap it when it exits; Delete and stop only read /proc.
	go func() { _ = cmd.Wait() }()
	started, err := startTime(cmd.Process.Pid)
	if err != nil {
		return fmt.Errorf("start %s: %w", d.name, err)
	}
	record := fmt.Sprintf("%d %d\n", cmd.Process.Pid, started)
	if err := os.WriteFile(s.pidPath(d.name), []byte(record), 0o644); err != nil {
		return fmt.Errorf("start %s: %w", d.name, err)
	}
	return nil
}

// pid is the running PID of the daemon called name, or 0 when it is not
// running (no record, exited, or its PID now belongs to another process).
func (s *state) pid(name string) int {
	data, err := os.ReadFile(s.pidPath(name))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0
	}
	pid, err1 := strconv.Atoi(fields[0])
	want, err2 := strconv.ParseUint(fields[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	if got, err := startTime(pid); err != nil || got != want {
		return 0
	}
	return pid
}

// stop stops the daemon called name: SIGTERM, then SIGKILL after
// stopGrace. A daemon that is not running is no error.
func (s *state) stop(ctx context.Context, name string) error {
	pid := s.pid(name)
	if pid == 0 {
		return nil
	}
	if err := stopPID(ctx, pid); err != nil {
		return fmt.Errorf("stop %s: %w", name, err)
	}
	return os.Remove(s.pidPath(name))
}

// stopPID sends SIGTERM to pid, waits for it to go, and sends SIGKILL when
// it has not gone within stopGrace.
func stopPID(ctx context.Context, pid int) error {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	if waitGone(ctx, pid, stopGrace) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitGone(ctx, pid, stopGrace) {
		return nil
	}
	return fmt.Errorf("process %d did not exit after SIGKILL", pid)
}

// waitGone waits until pid has exited (or is a zombie nobody reaps yet).
func waitGone(ctx context.Context, pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if !alive(pid) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !alive(pid)
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := statFields(string(data))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// startTime is the process's start time in clock ticks since boot (field
// 22 of /proc/PID/stat): with the PID it names one process for ever.
func startTime(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	fields := statFields(string(data))
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// statFields are the fields of /proc/PID/stat after the command name
// (which may hold spaces), starting with the state.
func statFields(stat string) []string {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(stat[i+1:])
}

// processesMentioning lists the PIDs of running processes whose command
// line contains s (containerd's shims name their containerd's socket).
func processesMentioning(s string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// unmountAll unmounts every mount point under dir, deepest first (the
// kubelet's volume tmpfs, containerd's rootfs overlays, pod network
// namespaces).
func unmountAll(dir string) error {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("unmount under %s: %w", dir, err)
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		point := unescapeMount(fields[4])
		if point == dir || strings.HasPrefix(point, dir+"/") {
			points = append(points, point)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
