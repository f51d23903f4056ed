package node

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
	"github.com/deployconfig/deployconfig/test/console"
	"github.com/deployconfig/deployconfig/test/rollout"
)

const (
	// readmePath is the README whose install section TestReleaseFromRegistry
	// runs.
	readmePath = root + "/README.md"
	// installVersion and upgradeVersion are the releases the README's
	// install and upgrade commands make.
	installVersion, upgradeVersion = "v0.1.0", "v0.1.1"
	// releaseCommandTimeout bounds one README command: make release builds
	// kubectl-dc for four platforms and the images for two, from a cold
	// build cache on a fresh machine (over 10 minutes on 2 busy cores).
	releaseCommandTimeout = 25 * time.Minute
)

// A release installs as the README says, from an OCI registry on loopback
// standing for the user's REGISTRY: its install commands (make release,
// then helm install from oci://$REGISTRY/charts/deployconfig) run as
// written, and dc-controller then runs as pods from the released,
// version-stamped images, which are linux/amd64 and linux/arm64 indexes.
// A canary is rolled out and pauses; the README's upgrade commands (the
// next release, helm upgrade) replace the controller while the canary
// waits, and the next release's own kubectl-dc promotes it to completion.
//
// config/default's dc-controller, whose objects have the names the
// chart's have, is removed meanwhile and installed again afterwards; the
// test is not parallel, so no other test runs then.
func TestReleaseFromRegistry(t *testing.T) {
	ctx := t.Context()
	install, upgrade := readmeInstall(t)
	reg := registrytest.New(t)
	if err := suite.cluster.ExposeRegistry(ctx, reg.Host); err != nil {
		t.Fatal(err)
	}
	removeSuiteController(t)
	t.Cleanup(func() {
		if err := helm("uninstall", "deployconfig", "--namespace", realnode.ControllerNamespace, "--wait", "--timeout", "2m"); err != nil {
			t.Error(err)
		}
	})

	readme := readmeRunner(t, reg.Host)
	for _, cmd := range install {
		readme(cmd)
	}
	commit := run(t, "git", "-C", root, "rev-parse", "HEAD")
	checkIndexes(t, reg.Host, installVersion)
	controllerPod := checkReleaseController(t, reg.Host, installVersion)
	out := run(t, filepath.Join(suite.binDir, "kubectl"), "--kubeconfig", suite.cluster.Kubeconfig,
		"exec", "-n", realnode.ControllerNamespace, controllerPod, "--", "dc-controller", "--version")
	if !strings.HasPrefix(out, "dc-controller "+installVersion+" (commit "+commit+",") {
		t.Errorf("dc-controller --version in the released image: %q, want %s and commit %s", out, installVersion, commit)
	}

	ns := namespace(t)
	dc := appDC(ns, "web", rollout.Options{Replicas: 2})
	weight := int32(50)
	dc.Spec.Strategy.RollingParams.Steps = []dcv1.RollingStep{{SetWeight: &weight}, {Pause: &dcv1.RolloutPause{}}}
	create(t, dc)
	requireComplete(t, ns, "web", 1)
	setVersion(t, ns, "web", "2")
	waitPaused(t, ns, "web-2", 2)
	deployerImage := reg.Host + "/dc-deploy:" + installVersion
	if image := deployerPodImage(t, ns, "web-2"); image != deployerImage {
		t.Errorf("the canary's deployer pod runs %s, want the release's %s", image, deployerImage)
	}

	for _, cmd := range upgrade {
		readme(cmd)
	}
	checkReleaseController(t, reg.Host, upgradeVersion)
	rc, err := suite.clientset.CoreV1().ReplicationControllers(ns).Get(ctx, "web-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rollout.PausedAt(rc, 2) || deployment.Phase(rc) != dcv1.DeploymentPhaseRunning {
		t.Fatalf("after helm upgrade the canary is %s with progress %+v, want Running and paused at step 2", deployment.Phase(rc), deployment.ProgressOf(rc))
	}

	kubectlDC := releasedKubectlDC(t, upgradeVersion)
	if out := run(t, kubectlDC, "version"); !strings.HasPrefix(out, "kubectl-dc "+upgradeVersion+" (commit "+commit+",") {
		t.Errorf("the released kubectl-dc says %q, want %s and commit %s", out, upgradeVersion, commit)
	}
	run(t, kubectlDC, "--kubeconfig", suite.cluster.Kubeconfig, "-n", ns, "rollout", "promote", "web")
	requireComplete(t, ns, "web", 2)
	waitRunning(t, ns, map[string]int{"web-1": 0, "web-2": 2})
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Step 2 of 2: paused until 'kubectl dc rollout promote web'", "    Promoted", "--> Success")
}

// readmeInstall returns the commands of the two console blocks of the
// README's Install section: installing a release, then upgrading to the
// next.
func readmeInstall(t *testing.T) (install, upgrade []string) {
	t.Helper()
	cmds, err := console.Read(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]string
	last := -1
	for _, c := range cmds {
		if c.Section != "Install" {
			continue
		}
		if c.Block != last {
			blocks, last = append(blocks, nil), c.Block
		}
		blocks[len(blocks)-1] = append(blocks[len(blocks)-1], c.Text)
	}
	if len(blocks) != 2 {
		t.Fatalf("%s: the Install section has %d console blocks of commands (%q), want 2: install, then upgrade", readmePath, len(blocks), blocks)
	}
	return blocks[0], blocks[1]
}

// readmeRunner returns a function that runs one README command as a user's
// shell would, from the checkout, with REGISTRY set to the loopback
// registry at host, the cluster's kubeconfig and the suite's tools on
// PATH. Its helm adds --plain-http, which a registry on loopback needs and
// the user's does not.
func readmeRunner(t *testing.T, host string) func(command string) {
	t.Helper()
	wrappers := t.TempDir()
	helmWrapper := fmt.Sprintf("#!/bin/sh\nexec %q \"$@\" --plain-http\n", filepath.Join(suite.binDir, "helm"))
	if err := os.WriteFile(filepath.Join(wrappers, "helm"), []byte(helmWrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		// A user's shell is not inside make (make test runs this test).
		if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" && k != "PATH" {
			env = append(env, kv)
		}
	}
	env = append(env, "REGISTRY="+host, "KUBECONFIG="+suite.cluster.Kubeconfig,
		"PATH="+strings.Join([]string{wrappers, suite.binDir, os.Getenv("PATH")}, string(os.PathListSeparator)))
	return func(command string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), releaseCommandTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		cmd.Dir, cmd.Env = root, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README: %s: %v\n%s", command, err, out)
		}
		t.Logf("README: $ %s (%s)", command, time.Since(start).Round(100*time.Millisecond))
	}
}

// removeSuiteController removes config/default's dc-controller until the
// test ends, then installs it again as the suite did.
func removeSuiteController(t *testing.T) {
	t.Helper()
	if err := suite.cluster.RemoveController(t.Context(), suite.binDir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := suite.cluster.InstallController(context.Background(), suite.binDir, realnode.Controller{Root: root, Args: controllerArgs()})
		if err != nil {
			t.Errorf("installing the suite's dc-controller again: %v", err)
		}
	})
}

// checkReleaseController checks that the chart's dc-controller has all its
// replicas ready, each running the release's controller image as pulled
// from the registry at host, with the release's deployer image, and
// returns one of its pods.
func checkReleaseController(t *testing.T, host, version string) string {
	t.Helper()
	ctx := t.Context()
	d, err := suite.clientset.AppsV1().Deployments(realnode.ControllerNamespace).Get(ctx, realnode.ControllerDeployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	image := host + "/dc-controller:" + version
	container := d.Spec.Template.Spec.Containers[0]
	if container.Image != image || !slices.Contains(container.Args, "--deployer-image="+host+"/dc-deploy:"+version) {
		t.Errorf("the chart's dc-controller runs %s with args %q, want %s and the deployer %s/dc-deploy:%s", container.Image, container.Args, image, host, version)
	}
	if d.Status.ReadyReplicas != 2 || d.Status.UpdatedReplicas != 2 {
		t.Errorf("%d ready and %d updated replicas of dc-controller after helm --wait, want 2", d.Status.ReadyReplicas, d.Status.UpdatedReplicas)
	}
	digest := headDigest(t, image)
	pods, err := suite.clientset.CoreV1().Pods(realnode.ControllerNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + realnode.ControllerDeployment})
	if err != nil {
		t.Fatal(err)
	}
	var running []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 {
			continue
		}
		running = append(running, p.Name)
		if got, want := p.Status.ContainerStatuses[0].ImageID, host+"/dc-controller@"+digest.String(); got != want {
			t.Errorf("pod %s runs image %s, want the release's %s", p.Name, got, want)
		}
	}
	if len(running) == 0 {
		t.Fatalf("no running pod of dc-controller %s", version)
	}
	return running[0]
}

// deployerPodImage is the image of the deployer pod of a deployment.
func deployerPodImage(t *testing.T, ns, rc string) string {
	t.Helper()
	pod, err := suite.clientset.CoreV1().Pods(ns).Get(t.Context(), deployment.DeployerPodName(rc), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod.Spec.Containers[0].Image
}

// checkIndexes checks that each released image is an index of a linux/amd64
// and a linux/arm64 image, and that the arm64 image's programs (and the
// deployer's BusyBox) are arm64 executables.
func checkIndexes(t *testing.T, host, version string) {
	t.Helper()
	programs := map[string][]string{
		"dc-controller": {"usr/local/bin/dc-controller"},
		"dc-deploy":     {"usr/local/bin/dc-deploy", "bin/busybox"},
		"pause":         {"usr/local/bin/pause"},
	}
	for repo, files := range programs {
		ref := fmt.Sprintf("%s/%s:%s", host, repo, version)
		index, err := remote.Index(parseRef(t, ref), remote.WithContext(t.Context()))
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		manifest, err := index.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		var platforms []string
		var arm64 v1.Hash
		for _, m := range manifest.Manifests {
			if m.Platform != nil {
				platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
				if m.Platform.Architecture == "arm64" {
					arm64 = m.Digest
				}
			}
		}
		if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
			t.Errorf("%s is an index of %v, want linux/amd64 and linux/arm64", ref, platforms)
			continue
		}
		img, err := index.Image(arm64)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatalf("%s linux/arm64: %v", ref, err)
		}
		if cfg.Architecture != "arm64" {
			t.Errorf("%s linux/arm64: its configuration says architecture %q", ref, cfg.Architecture)
		}
		for _, file := range files {
			if machine := elfMachine(t, img, file); machine != elf.EM_AARCH64 {
				t.Errorf("%s linux/arm64: /%s is built for %s", ref, file, machine)
			}
		}
	}
}

// elfMachine is the architecture of the executable at path in img's
// (single) layer.
func elfMachine(t *testing.T, img v1.Image, path string) elf.Machine {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("no /%s in the image", path)
		} else if err != nil {
			t.Fatal(err)
		}
		if strings.TrimPrefix(h.Name, "/") != path {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		f, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("/%s: %v", path, err)
		}
		return f.Machine
	}
}

// releasedKubectlDC extracts the release's kubectl-dc for this machine
// (linux/amd64 or arm64) from its archive in bin/release, checked
// against SHA256SUMS, and returns its path.
func releasedKubectlDC(t *testing.T, version string) string {
	t.Helper()
	dir := filepath.Join(root, "bin", "release", version)
	archive := fmt.Sprintf("kubectl-dc_%s_linux_%s.tar.gz", version, runtime.GOARCH)
	run(t, "sh", "-c", fmt.Sprintf("cd %q && grep ' %s$' SHA256SUMS | sha256sum -c -", dir, archive))
	f, err := os.Open(filepath.Join(dir, archive))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no kubectl-dc: %v", archive, err)
		}
		if h.Name != "kubectl-dc" {
			continue
		}
		path := filepath.Join(t.TempDir(), "kubectl-dc")
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

// headDigest is the digest the registry has for ref.
func headDigest(t *testing.T, ref string) v1.Hash {
	t.Helper()
	desc, err := remote.Head(parseRef(t, ref), remote.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	return desc.Digest
}

// parseRef parses a reference to the loopback registry (plain HTTP).
func parseRef(t *testing.T, ref string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs a program and returns its trimmed standard output, failing the
// test unless it exits 0.
func run(t *testing.T, program string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", program, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}
