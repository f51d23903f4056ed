package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
)

// The node kinds of --node.
const (
	nodeKwok = "kwok"
	nodeReal = "real"
)

// samplePauseImage is the image config/samples name; the real node runs
// the sample application instead, which has a shell for the hooks.
const samplePauseImage = "registry.k8s.io/pause:3.10"

// realNodeControllerArgs are what the playground adds to config/default's
// dc-controller arguments: a faster image poll, the node's registry
// allowed (dc-controller refuses private addresses by default), and, as on
// kwok, a DeploymentConfig's deployer-mode annotation honoured.
var realNodeControllerArgs = []string{"--image-poll-interval=10s", realnode.AllowRegistryArg, controller.AllowDeployerModeChoiceFlag}

// runUpReal is `dc-local up --node=real`: the same walkthrough as on kwok,
// on a real kubelet with containerd, dc-controller installed from
// config/default as pods, deployer and hook pods as real containers.
func runUpReal(ctx context.Context, out io.Writer, g *globalFlags, f *upFlags) error {
	start := time.Now()
	root, err := g.checkout()
	if err != nil {
		return err
	}
	bin, err := g.binDir()
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "Building the images of dc-controller, dc-deploy, pause and the sample application...")
	images, tag, err := buildImages(ctx, root)
	if err != nil {
		return err
	}
	cluster, reused, err := openOrStartRealNode(ctx, out, g.name, bin, images, tag)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Starting the Gateway %s/%s (Traefik, with the Gateway API CRDs) at %s...\n", realnode.GatewayNamespace, realnode.GatewayName, realnode.GatewayAddr)
	if err := cluster.StartGateway(ctx, bin); err != nil {
		return err
	}
	fmt.Fprintln(out, "Installing dc-controller from config/default (2 replicas, leader election)...")
	err = cluster.InstallController(ctx, bin, realnode.Controller{Root: root, Args: realNodeControllerArgs})
	if err != nil {
		return err
	}
	pc, err := attach(cluster, g.name, reused)
	if err != nil {
		return err
	}
	samples, err := realSamples(root, cluster)
	if err != nil {
		return err
	}
	dcs, namespace, err := applySamples(ctx, out, pc, samples, f.namespace)
	if err != nil {
		return err
	}
	rolloutErr := waitSamples(ctx, out, pc, namespace, dcs, f.wait)
	if rolloutErr == nil && len(dcs) > 0 {
		rolloutErr = showSecondRollout(ctx, out, pc, namespace, dcs[0], f.wait)
	}
	if err := showDeploymentConfigs(ctx, out, pc, namespace); err != nil {
		return err
	}
	if rolloutErr == nil && len(dcs) > 0 {
		showServing(ctx, out, cluster, pc.Clientset, namespace, dcs[0])
	}
	if rolloutErr == nil {
		rolloutErr = showCanary(ctx, out, cluster, pc, namespace, f.wait)
	}
	printRealNextSteps(out, g.name, cluster, bin, reused, time.Since(start), f.follow)
	if rolloutErr != nil || !f.follow {
		return rolloutErr
	}
	return followController(ctx, out, cluster, bin)
}

// buildImages builds the project's images and a tag that changes with
// their content, so that a rebuilt image is pulled anew.
func buildImages(ctx context.Context, root string) (map[string]v1.Image, string, error) {
	built, err := imagebuild.Build(ctx, imagebuild.Options{Root: root, Version: "dev", Revision: imagebuild.GitRevision(ctx, root)})
	if err != nil {
		return nil, "", err
	}
	images := map[string]v1.Image{}
	h := sha256.New()
	for _, img := range built {
		digest, err := img.Image.Digest()
		if err != nil {
			return nil, "", fmt.Errorf("image %s: %w", img.Name, err)
		}
		images[img.Name] = img.Image
		fmt.Fprintf(h, "%s %s\n", img.Name, digest)
	}
	return images, "dev-" + hex.EncodeToString(h.Sum(nil))[:10], nil
}

// openOrStartRealNode reuses the real node called name when it runs
// (pushing the images anew), and starts it otherwise.
func openOrStartRealNode(ctx context.Context, out io.Writer, name, bin string, images map[string]v1.Image, tag string) (*realnode.Cluster, bool, error) {
	dir, err := realnode.DefaultDir(name)
	if err != nil {
		return nil, false, err
	}
	if cluster, err := realnode.Open(dir); err == nil {
		fmt.Fprintf(out, "Reusing the real node %q (%s)\n", name, dir)
		cluster.Tag = tag
		return cluster, true, cluster.PushImages(ctx, images, tag)
	}
	if err := realnode.Delete(ctx, dir, bin); err != nil {
		return nil, false, err
	}
	fmt.Fprintf(out, "Starting the real node %q (state in %s)...\n", name, dir)
	cluster, err := realnode.Up(ctx, realnode.Options{Name: name, Dir: dir, BinDir: bin, Images: images, Tag: tag, Log: out})
	return cluster, false, err
}

// attach makes the real node usable by the playground's rollout helpers.
func attach(cluster *realnode.Cluster, name string, reused bool) (*playground.Cluster, error) {
	cfg, err := cluster.RESTConfig()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making a client: %w", err)
	}
	return playground.Attach(name, cluster.Kubeconfig, cfg, cs, reused), nil
}

// realSamples copies config/samples into the cluster's directory with the
// sample application's image in place of the pause image, and returns the
// copy's directory.
func realSamples(root string, cluster *realnode.Cluster) (string, error) {
	src := filepath.Join(root, samplesDir)
	dst := filepath.Join(cluster.Dir, "samples")
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", fmt.Errorf("reading the samples: %w", err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	image := cluster.Image(imagebuild.SampleAppImageName)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return "", fmt.Errorf("reading the samples: %w", err)
		}
		data = []byte(strings.ReplaceAll(string(data), samplePauseImage, image))
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// showServing shows one pod of the DeploymentConfig answering HTTP, asked
// from inside the cluster's network namespace.
func showServing(ctx context.Context, out io.Writer, cluster *realnode.Cluster, cs kubernetes.Interface, namespace, name string) {
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "deploymentconfig=" + name})
	if err != nil {
		return
	}
	for _, pod := range pods.Items {
		if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
			continue
		}
		url := fmt.Sprintf("http://%s:8080/", pod.Status.PodIP)
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: realnode.Dialer{Netns: cluster.NetnsPath()}.DialContext}}
		resp, err := client.Get(url)
		if err != nil {
			fmt.Fprintf(out, "\n(pod %s did not answer: %v)\n", pod.Name, err)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		fmt.Fprintf(out, "\n$ curl %s    # pod %s, from the cluster's network namespace\n%s\n", url, pod.Name, strings.TrimSpace(string(body)))
		return
	}
}

// printRealNextSteps tells the user how to reach the real node.
func printRealNextSteps(out io.Writer, name string, cluster *realnode.Cluster, bin string, reused bool, took time.Duration, follow bool) {
	state := "started"
	if reused {
		state = "reused"
	}
	where := "To use it:"
	if follow {
		where = "To use it, in another terminal:"
	}
	fmt.Fprintf(out, `
Real node %q is ready (%s, %s). %s

  export KUBECONFIG=%s PATH=%s:$PATH

Then try:
  kubectl get dc,rc,pods -o wide          real pods, with their pod IPs
  kubectl dc rollout latest hello         roll out the sample again
  kubectl dc logs hello                   the deployer pod's log, from the kubelet
  kubectl dc dashboard                    watch and steer rollouts in a browser: http://127.0.0.1:8990/
  kubectl -n %s get pods   dc-controller's two replicas
  sudo nsenter --net=%s curl http://POD_IP:8080/
                                          ask a sample pod (the cluster's network has no route out)
  sudo nsenter --net=%[8]s curl -H 'Host: %[9]s' http://%[10]s/
                                          ask the canary sample through the Gateway

The node keeps running until 'make down NODE=real' (or 'dc-local down --node=real').
`, name, state, took.Round(100*time.Millisecond), where, cluster.Kubeconfig, bin,
		realnode.ControllerNamespace, cluster.NetnsPath(), playground.TrafficSampleHost, realnode.GatewayAddr)
	if follow {
		fmt.Fprintln(out, "Showing dc-controller's log until Ctrl-C (the node keeps running):")
	}
}

// followController shows the controller pods' logs until Ctrl-C.
func followController(ctx context.Context, out io.Writer, cluster *realnode.Cluster, bin string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), "--kubeconfig", cluster.Kubeconfig,
		"logs", "-f", "-n", realnode.ControllerNamespace, "-l", "app.kubernetes.io/name="+realnode.ControllerDeployment,
		"--prefix", "--max-log-requests", "4", "--tail", "20")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil && ctx.Err() == nil {
		// A replaced controller pod ends the stream; the node is fine.
		fmt.Fprintf(out, "(dc-controller's log stream ended: %v; the node keeps running)\n", err)
	}
	return nil
}

// runDownReal is `dc-local down --node=real`.
func runDownReal(ctx context.Context, out io.Writer, g *globalFlags) error {
	bin, err := g.binDir()
	if err != nil {
		return err
	}
	dir, err := realnode.DefaultDir(g.name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintf(out, "Real node %q does not exist; nothing to do\n", g.name)
		return nil
	}
	if err := realnode.Delete(ctx, dir, bin); err != nil {
		return err
	}
	fmt.Fprintf(out, "Real node %q removed\n", g.name)
	return nil
}
