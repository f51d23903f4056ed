package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindCheckout(t *testing.T) {
	root := t.TempDir()
	mustMkdir := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustMkdir("repo/config/crd/bases")
	mustMkdir("repo/cmd/dc-local")
	mustMkdir("repo/bin")
	mustMkdir("elsewhere")
	if err := os.WriteFile(filepath.Join(root, "repo/go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		start string
		want  string
		ok    bool
	}{
		{start: "repo", want: "repo", ok: true},
		{start: "repo/cmd/dc-local", want: "repo", ok: true},
		{start: "repo/bin", want: "repo", ok: true},
		{start: "elsewhere", ok: false},
	}
	for _, tt := range tests {
		got, ok := findCheckout(filepath.Join(root, tt.start))
		if ok != tt.ok || (ok && got != filepath.Join(root, tt.want)) {
			t.Errorf("findCheckout(%s) = %q, %t; want %q, %t", tt.start, got, ok, tt.want, tt.ok)
		}
	}
}
