package nodebench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// podCgroupDirs are where the kubelet may put a pod's memory cgroup: one
// directory per QoS class (Guaranteed pods sit at the top).
func podCgroupDirs(root string, uid types.UID) []string {
	name := "pod" + string(uid)
	return []string{
		filepath.Join(root, "besteffort", name),
		filepath.Join(root, "burstable", name),
		filepath.Join(root, name),
	}
}

// containerID strips the runtime's scheme from a container status's ID
// ("containerd://abc" is "abc"), which names the container's cgroup.
func containerID(statusID string) string {
	_, id, ok := strings.Cut(statusID, "://")
	if !ok {
		return statusID
	}
	return id
}

// parseBytes reads a cgroup file holding one number.
func parseBytes(data []byte) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a byte count: %q", strings.TrimSpace(string(data)))
	}
	return v, nil
}

// statValue is one key of a cgroup's memory.stat.
func statValue(data []byte, key string) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || k != key {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// Peaks are a deployer pod's memory high-water marks.
type Peaks struct {
	// Pod is the pod cgroup's memory.max_usage_in_bytes (every container
	// and the pause container, page cache included).
	Pod uint64
	// Container is the deployer container's own memory.max_usage_in_bytes.
	Container uint64
	// RSS is the largest total_rss of the container's memory.stat sampled.
	RSS uint64
}

// add keeps the larger of each figure.
func (p *Peaks) add(o Peaks) {
	p.Pod = max(p.Pod, o.Pod)
	p.Container = max(p.Container, o.Container)
	p.RSS = max(p.RSS, o.RSS)
}

// memorySampler samples one pod's memory cgroup until stopped: the kubelet
// removes the cgroup soon after the pod ends, and with it the high-water
// mark, so it is read while the pod runs.
type memorySampler struct {
	root     string
	uid      types.UID
	interval time.Duration

	mu        sync.Mutex
	container string
	peaks     Peaks
	seen      bool

	cancel context.CancelFunc
	done   chan struct{}
}

// startSampler samples the pod uid's cgroup every interval.
func startSampler(ctx context.Context, root string, uid types.UID, interval time.Duration) *memorySampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &memorySampler{root: root, uid: uid, interval: interval, cancel: cancel, done: make(chan struct{})}
	go s.loop(ctx)
	return s
}

// setContainer names the deployer container's cgroup, once its status has
// an ID.
func (s *memorySampler) setContainer(statusID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.container = containerID(statusID)
}

func (s *memorySampler) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		s.sample()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sample reads the cgroup files once; a cgroup not there (yet, or any
// more) reads as nothing.
func (s *memorySampler) sample() {
	s.mu.Lock()
	container := s.container
	s.mu.Unlock()
	var p Peaks
	found := false
	for _, dir := range podCgroupDirs(s.root, s.uid) {
		data, err := os.ReadFile(filepath.Join(dir, "memory.max_usage_in_bytes"))
		if err != nil {
			continue
		}
		found = true
		p.Pod, _ = parseBytes(data)
		if container == "" {
			break
		}
		if data, err := os.ReadFile(filepath.Join(dir, container, "memory.max_usage_in_bytes")); err == nil {
			p.Container, _ = parseBytes(data)
		}
		if data, err := os.ReadFile(filepath.Join(dir, container, "memory.stat")); err == nil {
			p.RSS, _ = statValue(data, "total_rss")
		}
		break
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = s.seen || found
	s.peaks.add(p)
}

// stop takes a last sample and returns the peaks, and whether the pod's
// cgroup was ever found.
func (s *memorySampler) stop() (Peaks, bool) {
	s.cancel()
	<-s.done
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peaks, s.seen
}
