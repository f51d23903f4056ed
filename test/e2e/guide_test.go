package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
	"github.com/deployconfig/deployconfig/test/console"
)

const (
	// guidePath is the migration guide whose commands TestMigrationGuide
	// runs.
	guidePath = "../../docs/migrating-from-openshift.md"
	// guideExamples is the directory the guide's commands run from (a copy
	// of it): it holds the OpenShift export they convert.
	guideExamples = "../../docs/examples"
	// guideNamespace is the namespace the guide's export names.
	guideNamespace = "shop"
	// guideImage is the image the guide's ImageStreamTag trigger maps to on
	// the test's registry.
	guideImage = "shop/frontend:latest"
	// gettingStartedPath is the playground walk-through whose commands
	// TestGettingStarted runs, from a copy of samplesDir.
	gettingStartedPath = "../../docs/getting-started.md"
	// tourNamespace is the namespace the walk-through makes its own.
	tourNamespace = "tour"
)

// guideCommands reads the commands of the page's console blocks.
func guideCommands(t *testing.T, path string) []console.Command {
	t.Helper()
	cmds, err := console.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return cmds
}

// matchOutput reports whether got holds the guide's lines want in order,
// each line matched whole (after $REGISTRY is replaced), "..." standing
// for any lines and a "..." inside a line for any text.
func matchOutput(want []string, got string, vars map[string]string) error {
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	i := 0
	skipping := false
	for _, w := range want {
		if w == "..." {
			skipping = true
			continue
		}
		pattern := linePattern(w, vars)
		for ; i < len(lines) && !pattern.MatchString(lines[i]); i++ {
			if !skipping {
				return fmt.Errorf("line %q: got %q", w, lines[i])
			}
		}
		if i == len(lines) {
			return fmt.Errorf("no line %q (in order)", w)
		}
		i++
		skipping = false
	}
	if !skipping && i < len(lines) && len(want) > 0 {
		return fmt.Errorf("more lines than the guide shows, from %q", lines[i])
	}
	return nil
}

// linePattern matches one output line of the guide.
func linePattern(line string, vars map[string]string) *regexp.Regexp {
	for name, value := range vars {
		line = strings.ReplaceAll(line, "$"+name, value)
	}
	parts := strings.Split(line, "...")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// Every command of docs/migrating-from-openshift.md's console blocks runs,
// in order and as written, from a copy of docs/examples, with the registry
// the guide calls $REGISTRY running on loopback with the image its trigger
// maps to; each exits as the guide says and prints what the guide shows.
func TestMigrationGuide(t *testing.T) {
	t.Parallel()
	cmds := guideCommands(t, guidePath)
	if len(cmds) < 10 {
		t.Fatalf("%s has %d commands in console blocks, want the whole walk-through", guidePath, len(cmds))
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(guideExamples)); err != nil {
		t.Fatal(err)
	}
	reg := registrytest.New(t)
	reg.Push(t, guideImage)
	vars := map[string]string{"REGISTRY": reg.Host}
	t.Cleanup(func() {
		_ = clientset().CoreV1().Namespaces().Delete(context.Background(), guideNamespace, metav1.DeleteOptions{})
	})
	runGuide(t, guidePath, dir, cmds, vars)
}

// Every command of docs/getting-started.md's console blocks runs, in order
// and as written, from a directory holding a copy of config/samples, with a
// copy of the suite's kubeconfig (the walk-through sets its namespace); each
// exits as the page says and prints what it shows.
func TestGettingStarted(t *testing.T) {
	t.Parallel()
	cmds := guideCommands(t, gettingStartedPath)
	if len(cmds) < 15 {
		t.Fatalf("%s has %d commands in console blocks, want the whole walk-through", gettingStartedPath, len(cmds))
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "config", "samples"), os.DirFS(samplesDir)); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := os.ReadFile(suite.cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ownKubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(ownKubeconfig, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = clientset().CoreV1().Namespaces().Delete(context.Background(), tourNamespace, metav1.DeleteOptions{})
	})
	runGuide(t, gettingStartedPath, dir, cmds, map[string]string{"KUBECONFIG": ownKubeconfig})
}

// runGuide runs a page's commands in order in dir, each checked against the
// exit code and the output the page shows.
func runGuide(t *testing.T, path, dir string, cmds []console.Command, vars map[string]string) {
	t.Helper()
	for _, c := range cmds {
		r := shell(t, dir, c.Text, vars)
		t.Logf("%s:%d: $ %s\n%s", filepath.Base(path), c.Line, c.Text, r)
		if r.code != c.Exit {
			t.Fatalf("%s:%d: %s: exit %d, want %d\n%s", path, c.Line, c.Text, r.code, c.Exit, r)
		}
		if err := matchOutput(c.Output, r.stdout+r.stderr, vars); err != nil {
			t.Fatalf("%s:%d: %s: the output is not the page's: %v\n%s", path, c.Line, c.Text, err, r)
		}
	}
}

// shell runs a command line with bash in dir, with $DC_BIN first on the
// PATH, the suite's cluster as KUBECONFIG, and vars in the environment
// (where a var of the same name wins).
func shell(t *testing.T, dir, command string, vars map[string]string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+suite.cluster.Kubeconfig,
		"PATH="+suite.binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for name, value := range vars {
		cmd.Env = append(cmd.Env, name+"="+value)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s: %v", command, err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}
