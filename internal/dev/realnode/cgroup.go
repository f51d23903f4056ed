package realnode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A cluster's kubelet puts its pods under a cgroup root of its own
// (/dc-NAME/kubepods, not /kubepods): a kubelet removes the pod cgroups it
// does not know under its root, so two nodes on one machine (a test suite
// beside the playground or a benchmark) must not share one.

// cgroupRoot is the kubelet's cgroupRoot for the cluster.
func (s *state) cgroupRoot() string { return "/" + s.Netns }

// MemoryCgroup is the cgroup v1 memory directory under which the cluster's
// kubelet puts its pods (cgroupfs driver: kubepods, then a directory per
// QoS class but Guaranteed).
func (c *Cluster) MemoryCgroup() string {
	return filepath.Join("/sys/fs/cgroup/memory", c.cgroupRoot(), "kubepods")
}

// cgroupMounts lists the mount points of the cgroup hierarchies (v1 and v2).
func cgroupMounts() ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var mounts []string
	for _, line := range strings.Split(string(data), "\n") {
		// The filesystem type follows the " - " separator.
		parts := strings.SplitN(line, " - ", 2)
		if len(parts) != 2 {
			continue
		}
		fstype := strings.Fields(parts[1])
		fields := strings.Fields(parts[0])
		if len(fstype) > 0 && (fstype[0] == "cgroup" || fstype[0] == "cgroup2") && len(fields) >= 5 {
			mounts = append(mounts, unescapeMount(fields[4]))
		}
	}
	return mounts, nil
}

// createCgroupRoot makes the cluster's cgroup in every hierarchy, as the
// kubelet requires its cgroupRoot to exist; a cpuset cgroup gets its
// parent's CPUs and memory nodes, without which no task may join it.
func (s *state) createCgroupRoot() error {
	mounts, err := cgroupMounts()
	if err != nil {
		return fmt.Errorf("cgroup root: %w", err)
	}
	for _, m := range mounts {
		dir := filepath.Join(m, s.cgroupRoot())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cgroup root: %w", err)
		}
		for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
			parent, err := os.ReadFile(filepath.Join(m, file))
			if err != nil {
				continue // not a cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(dir, file), parent, 0o644); err != nil {
				return fmt.Errorf("cgroup root %s: %w", file, err)
			}
		}
	}
	return nil
}

// removeCgroupRoot removes the cluster's cgroups, deepest first; it runs
// once no process of the cluster is left in them.
func (s *state) removeCgroupRoot() error {
	if s.Netns == "" {
		return nil
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return fmt.Errorf("cgroup root: %w", err)
	}
	var dirs []string
	for _, m := range mounts {
		root := filepath.Join(m, s.cgroupRoot())
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	var errs []error
	for _, d := range dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}
