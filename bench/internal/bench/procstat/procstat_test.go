package procstat

import (
	"os"
	"testing"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    Usage
		wantErr bool
	}{
		{
			name: "both present",
			data: "Name:\tdc-controller\nVmPeak:\t 900000 kB\nVmHWM:\t   81234 kB\nVmRSS:\t   70000 kB\nThreads:\t12\n",
			want: Usage{RSSBytes: 70000 * 1024, PeakRSSBytes: 81234 * 1024},
		},
		{
			name: "split into anonymous and file pages",
			data: "VmHWM:\t   81234 kB\nVmRSS:\t   70000 kB\nRssAnon:\t   30000 kB\nRssFile:\t   40000 kB\nRssShmem:\t       0 kB\n",
			want: Usage{RSSBytes: 70000 * 1024, PeakRSSBytes: 81234 * 1024, AnonBytes: 30000 * 1024, FileBytes: 40000 * 1024},
		},
		{name: "kernel thread has neither", data: "Name:\tkthreadd\nState:\tS\n", wantErr: true},
		{name: "garbage value", data: "VmHWM:\tlots kB\nVmRSS:\t1 kB\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.data))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseCPUSeconds(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    float64
		wantErr bool
	}{
		{
			name: "plain name",
			data: "4242 (dc-controller) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 0 0",
			want: 3,
		},
		{
			name: "name with spaces and parentheses",
			data: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 0 0",
			want: 0.03,
		},
		{name: "truncated", data: "7 (x) R 1 2", wantErr: true},
		{name: "no name", data: "7 x R", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCPUSeconds([]byte(tt.data))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseMachineFiles(t *testing.T) {
	if got := parseMemTotal([]byte("MemTotal:       24576000 kB\nMemFree: 1 kB\n")); got != 24576000*1024 {
		t.Errorf("parseMemTotal = %d", got)
	}
	if got := parseMemTotal([]byte("nothing\n")); got != 0 {
		t.Errorf("parseMemTotal without MemTotal = %d", got)
	}
	cpu := "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n"
	if got := parseCPUModel([]byte(cpu)); got != "AMD EPYC 7B13" {
		t.Errorf("parseCPUModel = %q", got)
	}
}

func TestReadSelf(t *testing.T) {
	u, err := Read(os.Getpid())
	if err != nil {
		t.Fatalf("reading this process's usage from /proc: %v", err)
	}
	if u.RSSBytes == 0 || u.PeakRSSBytes < u.RSSBytes {
		t.Errorf("implausible usage of this test: %+v", u)
	}
}
