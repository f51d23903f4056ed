// Package procstat reads what the benchmark reports about processes and
// the machine from /proc: a process's resident memory (current and peak)
// and CPU time, and the machine's cores, memory and CPU model.
package procstat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/PID/stat. It
// is 100 on every Linux architecture Go supports; reading it would need
// cgo (sysconf).
const clockTicks = 100

// Usage is a process's resource use so far.
type Usage struct {
	// RSSBytes is the resident set size now (VmRSS).
	RSSBytes uint64 `json:"rssBytes"`
	// PeakRSSBytes is the largest resident set size so far (VmHWM).
	PeakRSSBytes uint64 `json:"peakRssBytes"`
	// AnonBytes and FileBytes split the resident set now (RssAnon and
	// RssFile): the process's own memory, and the pages of files it maps,
	// mostly its executable, which the kernel can drop and read again.
	AnonBytes uint64 `json:"anonBytes,omitempty"`
	FileBytes uint64 `json:"fileBytes,omitempty"`
	// CPUSeconds is user plus system CPU time.
	CPUSeconds float64 `json:"cpuSeconds"`
}

// Read returns the usage of process pid.
func Read(pid int) (Usage, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	u, err := parseStatus(status)
	if err != nil {
		return Usage{}, fmt.Errorf("process %d: %w", pid, err)
	}
	if u.CPUSeconds, err = parseCPUSeconds(stat); err != nil {
		return Usage{}, fmt.Errorf("process %d: %w", pid, err)
	}
	return u, nil
}

// parseStatus reads VmRSS and VmHWM, and RssAnon and RssFile where the
// kernel has them (since Linux 4.5), in kB from /proc/PID/status.
func parseStatus(data []byte) (Usage, error) {
	var u Usage
	var found int
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *uint64
		switch key {
		case "VmRSS":
			dst = &u.RSSBytes
		case "VmHWM":
			dst = &u.PeakRSSBytes
		case "RssAnon":
			dst = &u.AnonBytes
		case "RssFile":
			dst = &u.FileBytes
		default:
			continue
		}
		kb, err := parseKB(value)
		if err != nil {
			return u, fmt.Errorf("%s: %w", key, err)
		}
		*dst = kb * 1024
		if key == "VmRSS" || key == "VmHWM" {
			found++
		}
	}
	if found != 2 {
		return u, fmt.Errorf("no VmRSS and VmHWM in /proc status")
	}
	return u, nil
}

// parseKB parses a "   1234 kB" value.
func parseKB(value string) (uint64, error) {
	fields := strings.Fields(value)
	if len(fields) == 0 {
		return 0, fmt.Errorf("empty value")
	}
	return strconv.ParseUint(fields[0], 10, 64)
}

// parseCPUSeconds reads utime and stime (fields 14 and 15) of
// /proc/PID/stat. The command name (field 2) is in parentheses and may
// contain spaces, so fields are counted after its closing parenthesis.
func parseCPUSeconds(data []byte) (float64, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, fmt.Errorf("malformed /proc stat")
	}
	fields := strings.Fields(string(data[end+1:]))
	// fields[0] is field 3 (state), so field n is fields[n-3].
	if len(fields) < 13 {
		return 0, fmt.Errorf("malformed /proc stat: %d fields", len(fields))
	}
	utime, err1 := strconv.ParseUint(fields[11], 10, 64)
	stime, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed CPU times in /proc stat")
	}
	return float64(utime+stime) / clockTicks, nil
}

// Machine describes the computer the benchmark ran on.
type Machine struct {
	Cores       int    `json:"cores"`
	MemoryBytes uint64 `json:"memoryBytes"`
	CPUModel    string `json:"cpuModel"`
	OS          string `json:"os"`
	Kernel      string `json:"kernel"`
}

// ReadMachine describes this machine; what cannot be read is left empty.
func ReadMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemoryBytes = parseMemTotal(data)
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = parseCPUModel(data)
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	return m
}

// parseMemTotal reads MemTotal from /proc/meminfo, in bytes; 0 if absent.
func parseMemTotal(data []byte) uint64 {
	for line := range strings.SplitSeq(string(data), "\n") {
		if value, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := parseKB(value)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// parseCPUModel reads the first "model name" of /proc/cpuinfo.
func parseCPUModel(data []byte) string {
	for line := range strings.SplitSeq(string(data), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// LoadAverage is the 1-minute load average, as /proc/loadavg gives it;
// "unknown" when it cannot be read.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	first, _, _ := strings.Cut(string(data), " ")
	return first
}
