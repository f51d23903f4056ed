package podruntime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestPlanContainer(t *testing.T) {
	deployerImages := []string{"deployconfig.io/deployer:local", "ghcr.io/deployconfig/dc-deploy"}
	pod := func(containers ...corev1.Container) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: containers}}
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		wantMode runMode
		wantArgv []string
		wantErr  string
	}{
		{
			name:     "the deployer pod: dc-deploy in-process",
			pod:      pod(corev1.Container{Image: "deployconfig.io/deployer:local", Command: []string{"dc-deploy"}}),
			wantMode: modeInProcess,
		},
		{
			name:     "a custom strategy calling dc-deploy by path, with arguments",
			pod:      pod(corev1.Container{Image: "example.com/tools:1", Command: []string{"/usr/bin/dc-deploy", "--until=50%"}, Args: []string{"-v", "2"}}),
			wantMode: modeInProcess, wantArgv: []string{"--until=50%", "-v", "2"},
		},
		{
			name:     "OpenShift's name for the deployer",
			pod:      pod(corev1.Container{Image: "x", Command: []string{"openshift-deploy"}}),
			wantMode: modeInProcess,
		},
		{
			name:     "the deployer image's entrypoint, any tag",
			pod:      pod(corev1.Container{Image: "ghcr.io/deployconfig/dc-deploy:v1.2@sha256:abc", Args: []string{"--until=pre"}}),
			wantMode: modeInProcess, wantArgv: []string{"--until=pre"},
		},
		{
			name:     "a hook: its command as a process",
			pod:      pod(corev1.Container{Image: "registry.k8s.io/pause:3.10", Command: []string{"/bin/sh", "-c", "echo hi"}}),
			wantMode: modeProcess, wantArgv: []string{"/bin/sh", "-c", "echo hi"},
		},
		{
			name:     "a custom strategy's script that calls dc-deploy itself",
			pod:      pod(corev1.Container{Image: "example.com/tools:1", Command: []string{"/bin/sh", "-c"}, Args: []string{"dc-deploy --until=50% && dc-deploy"}}),
			wantMode: modeProcess, wantArgv: []string{"/bin/sh", "-c", "dc-deploy --until=50% && dc-deploy"},
		},
		{
			name:    "another image's entrypoint cannot be known",
			pod:     pod(corev1.Container{Image: "example.com/deployer:1"}),
			wantErr: "image example.com/deployer:1 would run its own entrypoint",
		},
		{
			name:    "two containers",
			pod:     pod(corev1.Container{Command: []string{"a"}}, corev1.Container{Command: []string{"b"}}),
			wantErr: "pods of one container; this one has 2",
		},
		{
			name: "init containers",
			pod: &corev1.Pod{Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Command: []string{"init"}}},
				Containers:     []corev1.Container{{Command: []string{"a"}}},
			}},
			wantErr: "does not run init containers",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := planContainer(tt.pod, deployerImages)
			if tt.wantErr != "" {
				if !errors.Is(err, errNotRunnable) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.mode != tt.wantMode || strings.Join(p.argv, " ") != strings.Join(tt.wantArgv, " ") {
				t.Errorf("plan %v %q, want %v %q", p.mode, p.argv, tt.wantMode, tt.wantArgv)
			}
		})
	}
}

func TestImageRepository(t *testing.T) {
	tests := map[string]string{
		"app":                             "app",
		"app:1":                           "app",
		"registry:5000/team/app":          "registry:5000/team/app",
		"registry:5000/team/app:1.2":      "registry:5000/team/app",
		"registry:5000/app@sha256:0123":   "registry:5000/app",
		"ghcr.io/deployconfig/dc-deploy:": "ghcr.io/deployconfig/dc-deploy",
	}
	for in, want := range tests {
		if got := imageRepository(in); got != want {
			t.Errorf("imageRepository(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tool := write("tool", 0o755)
	write("data", 0o644)
	other := t.TempDir()
	tests := []struct {
		name, cmd, path, want, wantErr string
	}{
		{name: "found on the PATH", cmd: "tool", path: other + ":" + dir, want: tool},
		{name: "not executable", cmd: "data", path: dir, wantErr: "not found in $PATH"},
		{name: "missing", cmd: "nope", path: dir, wantErr: "not found in $PATH"},
		{name: "a path is used as it is", cmd: tool, path: "", want: tool},
		{name: "a path that is not there", cmd: filepath.Join(dir, "nope"), wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lookPath(tt.cmd, tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("lookPath = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestSearchPath(t *testing.T) {
	tests := []struct {
		own               []string
		podPath, hostPath string
		want              string
	}{
		{own: []string{"/repo/bin", "/state/bin"}, hostPath: "/usr/bin", want: "/repo/bin:/state/bin:/usr/bin"},
		{own: []string{"/repo/bin"}, podPath: "/opt/bin:/bin", hostPath: "/usr/bin", want: "/repo/bin:/opt/bin:/bin"},
		{own: []string{"", "/state/bin"}, want: "/state/bin"},
	}
	for _, tt := range tests {
		if got := searchPath(tt.own, tt.podPath, tt.hostPath); got != tt.want {
			t.Errorf("searchPath(%q, %q, %q) = %q, want %q", tt.own, tt.podPath, tt.hostPath, got, tt.want)
		}
	}
}
