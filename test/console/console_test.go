package console

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	page := "# Title\n\n```console\n$ before\n```\n\n## Install\n\nText.\n\n```console\n$ make release\nbuilt\n...\n$ helm install x  # exits 1\n```\n\n```sh\n$ not a console block\n```\n\n## Next\n\n```console\n$ last\n```\n"
	path := filepath.Join(t.TempDir(), "page.md")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{Section: "", Block: 0, Line: 4, Text: "before"},
		{Section: "Install", Block: 1, Line: 12, Text: "make release", Output: []string{"built", "..."}},
		{Section: "Install", Block: 1, Line: 15, Text: "helm install x  # exits 1", Exit: 1},
		{Section: "Next", Block: 2, Line: 25, Text: "last"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Read:\n%+v\nwant:\n%+v", got, want)
	}
}

func TestReadRefusesMalformedBlocks(t *testing.T) {
	for page, want := range map[string]string{
		"```console\noutput first\n$ cmd\n```\n":       "page.md:2: output before any command of the block",
		"```console\n$ cmd\n":                          "a console block is not closed",
		"```console\n$ a\n```\n```console\nout\n```\n": "page.md:5: output before any command",
	} {
		path := filepath.Join(t.TempDir(), "page.md")
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", page, err, want)
		}
	}
}
