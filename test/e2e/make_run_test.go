package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

// makeRunTimeout bounds `make run` until it follows the controller: the
// tools and binaries are built already, so it creates the cluster and
// rolls out the samples.
const makeRunTimeout = 5 * time.Minute

// `make run`, as the README and docs/getting-started.md give it, with a
// cluster name of its own: it creates a kwok cluster, installs the CRDs and
// the Gateway API's, rolls out every sample, prints the line that puts the
// cluster in a shell and follows the controller until Ctrl-C, which leaves
// the cluster for `make down` to remove.
func TestMakeRun(t *testing.T) {
	t.Parallel()
	suffix := make([]byte, 3)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	name := "dc-run-" + hex.EncodeToString(suffix)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	makeIn := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "make", append(args, "NAME="+name, "BIN="+suite.binDir)...)
		cmd.Dir = root
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	t.Cleanup(func() {
		if out, err := makeIn(context.Background(), "down").CombinedOutput(); err != nil {
			t.Errorf("make down: %v\n%s", err, out)
		}
	})

	ctx, cancel := context.WithTimeout(t.Context(), makeRunTimeout)
	defer cancel()
	run := makeIn(ctx, "run")
	out, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	run.Stderr = run.Stdout
	if err := run.Start(); err != nil {
		t.Fatalf("make run: %v", err)
	}
	printed := readUntil(out, "export KUBECONFIG=")
	var lines []string
	select {
	case lines = <-printed:
	case <-ctx.Done():
		_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
		t.Fatalf("make run printed no export line within %s", makeRunTimeout)
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{"dc/hello: deployment #1 Complete", "dc/recreate: deployment #1 Complete"} {
		if !strings.Contains(text, want) {
			t.Errorf("make run did not print %q:\n%s", want, text)
		}
	}
	checkGatewayAPI(t, name)

	// Ctrl-C stops make and what it runs, as a terminal sends it to the
	// foreground process group.
	if err := syscall.Kill(-run.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err != nil {
		t.Logf("make run after Ctrl-C: %v", err)
	}
	exists, err := playground.Exists(playground.Options{Name: name, BinDir: suite.binDir})
	if err != nil || !exists {
		t.Errorf("after Ctrl-C the cluster %s exists: %v (%v), want it kept", name, exists, err)
	}
}

// readUntil sends the lines read from r up to the first holding marker
// (all of them if none does), and goes on reading r to its end, so that
// the writer never blocks on a full pipe.
func readUntil(r io.Reader, marker string) <-chan []string {
	lines := make(chan []string, 1)
	go func() {
		var seen []string
		scanner := bufio.NewScanner(r)
		for scanner.Scan() {
			seen = append(seen, scanner.Text())
			if strings.Contains(scanner.Text(), marker) {
				break
			}
		}
		lines <- seen
		_, _ = io.Copy(io.Discard, r)
	}()
	return lines
}

// checkGatewayAPI checks that the playground cluster name serves the
// Gateway API's HTTPRoutes, which trafficRouting needs.
func checkGatewayAPI(t *testing.T, name string) {
	t.Helper()
	kubeconfig, err := playground.Options{Name: name, BinDir: suite.binDir}.KubeconfigPath()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kubeconfig); err != nil {
		t.Fatalf("the playground's kubeconfig: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	routes := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	if _, err := dyn.Resource(routes).Namespace("default").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Errorf("listing HTTPRoutes on the playground: %v", err)
	}
}
