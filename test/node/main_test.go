package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
	"github.com/deployconfig/deployconfig/test/rollout"
	"github.com/deployconfig/deployconfig/test/watchdog"
)

const (
	// binEnv names the directory of the cluster binaries and ours.
	binEnv = "DC_BIN"
	// root is the checkout, relative to this package.
	root = "../.."
	// imageTag is the tag of the suite's images in the cluster's registry.
	imageTag = "test"
	// setupTimeout bounds building the images, bringing the node up and
	// installing the controller.
	setupTimeout = 5 * time.Minute
	// teardownTimeout bounds removing the cluster.
	teardownTimeout = 3 * time.Minute
	// logLines is how much of each daemon's log a failed run prints.
	logLines = 40
)

// suite is the cluster the tests run against; TestMain sets it.
var suite *environment

// environment is what the tests need to reach the suite's cluster.
type environment struct {
	cluster   *realnode.Cluster
	binDir    string
	config    *rest.Config
	client    client.WithWatch
	clientset kubernetes.Interface
	dcs       *rollout.Client
	// images are the references of the project's images, by repository.
	images map[string]string
	// builtImages are the project's images, by repository.
	builtImages map[string]v1.Image
}

func TestMain(m *testing.M) {
	flag.Parse()
	if code, ok := watchdog.Run(nil); ok {
		os.Exit(code)
	}
	os.Exit(runSuite(m))
}

// runSuite brings the real node up, runs the tests and removes the node.
func runSuite(m *testing.M) int {
	bin, err := filepath.Abs(envOr(binEnv, filepath.Join(root, "bin")))
	if err != nil {
		fmt.Fprintf(os.Stderr, "node: %v\n", err)
		return 1
	}
	dir, err := realnode.DefaultDir("node-" + randomSuffix())
	if err != nil {
		fmt.Fprintf(os.Stderr, "node: %v\n", err)
		return 1
	}
	wd, err := watchdog.StartRealNode(dir, bin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "node: %v\n", err)
		return 1
	}
	teardown := teardownOnce(dir, bin, wd)
	defer teardown()
	go func() {
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
		<-signals
		teardown()
		os.Exit(1)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	start := time.Now()
	if suite, err = setUp(ctx, dir, bin); err != nil {
		fmt.Fprintf(os.Stderr, "node: setting up: %v\n", err)
		printLogs(dir)
		return 1
	}
	fmt.Fprintf(os.Stderr, "node: real node up with dc-controller in %s (kubeconfig %s)\n",
		time.Since(start).Round(100*time.Millisecond), suite.cluster.Kubeconfig)
	code := m.Run()
	if code != 0 {
		printLogs(dir)
	}
	return code
}

// setUp builds the images, brings the node up with its Gateway and
// installs dc-controller from config/default.
func setUp(ctx context.Context, dir, bin string) (*environment, error) {
	built, err := imagebuild.Build(ctx, imagebuild.Options{Root: root, Version: imageTag, Revision: imageTag})
	if err != nil {
		return nil, err
	}
	images := imagebuild.ByName(built)
	refs := map[string]string{}
	for name := range images {
		refs[name] = realnode.ImageRef(name, imageTag)
	}
	cluster, err := realnode.Up(ctx, realnode.Options{
		Name: filepath.Base(dir), Dir: dir, BinDir: bin, Images: images, Tag: imageTag, Log: os.Stderr,
	})
	if err != nil {
		return nil, err
	}
	if err := cluster.StartGateway(ctx, bin); err != nil {
		return nil, err
	}
	err = cluster.InstallController(ctx, bin, realnode.Controller{Root: root, Args: controllerArgs()})
	if err != nil {
		return nil, err
	}
	cfg, err := cluster.RESTConfig()
	if err != nil {
		return nil, err
	}
	scheme, err := controller.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &environment{
		cluster: cluster, binDir: bin, config: cfg, client: c, clientset: cs,
		dcs:    rollout.NewClientFor(c, cs, cluster.Kubeconfig, bin),
		images: refs, builtImages: images,
	}, nil
}

// controllerArgs are what the suite adds to config/default's arguments:
// a short image poll so that a push rolls out soon, and the cluster's
// registry allowed.
func controllerArgs() []string {
	// The in-controller tests ask for the controller by annotation.
	return []string{"--image-poll-interval=2s", realnode.AllowRegistryArg, controller.AllowDeployerModeChoiceFlag}
}

// teardownOnce returns a function that removes the cluster once, however
// many times it is called.
func teardownOnce(dir, bin string, wd *watchdog.Watchdog) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
			defer cancel()
			if err := realnode.Delete(ctx, dir, bin); err != nil {
				fmt.Fprintf(os.Stderr, "node: removing the real node: %v\n", err)
				wd.Abandon()
				return
			}
			wd.Release()
		})
	}
}

// printLogs prints the end of every daemon's log, to explain a failure.
func printLogs(dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) > logLines {
			lines = lines[len(lines)-logLines:]
		}
		fmt.Fprintf(os.Stderr, "--- end of %s ---\n%s\n", path, strings.Join(lines, "\n"))
	}
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
