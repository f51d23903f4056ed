package playground

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveWorkdir(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	tests := []struct {
		name, explicit, env string
		home                func() (string, error)
		want, wantErr       string
	}{
		{name: "explicit wins", explicit: "/w", env: "/e", home: home, want: "/w"},
		{name: "then KWOK_WORKDIR", env: "/e", home: home, want: "/e"},
		{name: "then ~/.kwok", home: home, want: "/home/u/.kwok"},
		{name: "no home", home: noHome, wantErr: "no home"},
		{name: "no home needed", explicit: "/w", home: noHome, want: "/w"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveWorkdir(tt.explicit, tt.env, tt.home)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestOptionsPaths(t *testing.T) {
	o := Options{Name: "demo", Workdir: "/w"}
	kubeconfig, err := o.KubeconfigPath()
	if err != nil || kubeconfig != "/w/clusters/demo/kubeconfig.yaml" {
		t.Errorf("KubeconfigPath() = %q, %v", kubeconfig, err)
	}
	dir, err := Options{Workdir: "/w"}.ClusterDir()
	if err != nil || dir != "/w/clusters/"+DefaultName {
		t.Errorf("ClusterDir() of the default cluster = %q, %v", dir, err)
	}
}

func TestOptionsValidation(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{name: "defaults", o: Options{Workdir: "/w"}},
		{name: "upper case name", o: Options{Name: "Demo", Workdir: "/w"}, wantErr: "invalid cluster name"},
		{name: "path in name", o: Options{Name: "a/b", Workdir: "/w"}, wantErr: "invalid cluster name"},
		{name: "negative nodes", o: Options{Nodes: -1, Workdir: "/w"}, wantErr: "invalid node count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.o.withDefaults()
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestCheckBinaries(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("kwokctl", 0o755)
	write("etcd", 0o644) // not executable
	o := Options{BinDir: dir}
	if err := o.checkBinaries("kwokctl"); err != nil {
		t.Errorf("kwokctl is there: %v", err)
	}
	err := o.checkBinaries("kwokctl", "etcd", "kube-apiserver")
	if err == nil || !strings.Contains(err.Error(), "missing etcd, kube-apiserver") {
		t.Errorf("error %v, want one naming etcd and kube-apiserver", err)
	}
	if err := (Options{}).checkBinaries("kwokctl"); err == nil {
		t.Error("no binary directory: want an error")
	}
}
