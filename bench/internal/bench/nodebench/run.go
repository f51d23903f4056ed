package nodebench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/deployer/strategy"
	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
)

const (
	// imageTag tags the images the run builds and pushes.
	imageTag = "bench"
	// namespace holds both systems' objects.
	namespace = "bench-node"
	// setupTimeout bounds building the images, bringing the node up and
	// installing the controller.
	setupTimeout = 8 * time.Minute
	// teardownTimeout bounds removing the node.
	teardownTimeout = 3 * time.Minute
	// controllerReplicas is how many dc-controller pods config/default runs.
	controllerReplicas = 2
)

// Outputs are the files a run wrote.
type Outputs struct {
	JSON, Markdown string
}

// Run brings a real node up, measures the rollouts and writes the report;
// the node is removed however the run ends. A rollout that fails is noted
// and the run goes on; the report is written whenever anything was
// measured.
func Run(ctx context.Context, o Options) (Outputs, error) {
	if err := o.validate(); err != nil {
		return Outputs{}, err
	}
	if os.Geteuid() != 0 {
		return Outputs{}, errors.New("node scenario: needs root (network namespaces, containerd and the kubelet); run dc-bench as root, or leave 'node' out of --scenarios")
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return Outputs{}, fmt.Errorf("making %s: %w", o.OutDir, err)
	}
	rep := &Report{Started: time.Now(), Machine: procstat.ReadMachine(), Settings: settings(o)}
	loadAtStart := procstat.LoadAverage()
	dir, err := realnode.DefaultDir("bench-" + randomSuffix())
	if err != nil {
		return Outputs{}, err
	}
	defer func() {
		fmt.Fprintln(o.Log, "Removing the real node...")
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
		defer cancel()
		if err := realnode.Delete(dctx, dir, o.BinDir); err != nil {
			fmt.Fprintf(o.Log, "Removing the real node: %v\n", err)
		}
	}()
	m, err := setUp(ctx, o, dir, rep)
	if err != nil {
		return Outputs{}, err
	}
	runErr := measure(ctx, o, m, rep)
	if runErr != nil {
		rep.Notes = append(rep.Notes, "The run stopped early: "+runErr.Error())
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("Load average (1 min) at the start %s, at the end %s: other work on the machine shows here.", loadAtStart, procstat.LoadAverage()))
	rep.Duration = time.Since(rep.Started).Seconds()
	if len(rep.Samples) == 0 {
		return Outputs{}, runErr
	}
	out, err := writeOutputs(o, rep)
	return out, errors.Join(runErr, err)
}

// setUp builds the images, brings the node up in dir, installs
// dc-controller and makes the namespace, as test/node does.
func setUp(ctx context.Context, o Options, dir string, rep *Report) (*measurer, error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	fmt.Fprintln(o.Log, "Building the images...")
	built, err := imagebuild.Build(ctx, imagebuild.Options{Root: o.Root, Version: imageTag, Revision: imagebuild.GitRevision(ctx, o.Root)})
	if err != nil {
		return nil, fmt.Errorf("building the images: %w", err)
	}
	images := imagebuild.ByName(built)
	fmt.Fprintf(o.Log, "Bringing the real node up (state in %s)...\n", dir)
	cluster, err := realnode.Up(ctx, realnode.Options{
		Name: filepath.Base(dir), Dir: dir, BinDir: o.BinDir, Images: images, Tag: imageTag, Log: o.Log,
	})
	if err != nil {
		return nil, fmt.Errorf("bringing the real node up: %w", err)
	}
	fmt.Fprintln(o.Log, "Installing dc-controller from config/default...")
	err = cluster.InstallController(ctx, o.BinDir, realnode.Controller{Root: o.Root, Args: controllerArgs(o.DeployerMode)})
	if err != nil {
		return nil, fmt.Errorf("installing dc-controller: %w", err)
	}
	cfg, err := cluster.RESTConfig()
	if err != nil {
		return nil, err
	}
	scheme, err := controller.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("real node client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("real node client: %w", err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	rep.Versions = versions(ctx, o, cs)
	rep.Settings.ApplicationImage = cluster.Image(imagebuild.SampleAppImageName)
	rep.Settings.DeployerImage = cluster.Image(imagebuild.DeployerImageName)
	return &measurer{
		client: c, clientset: cs, namespace: namespace,
		memoryRoot: cluster.MemoryCgroup(), sampleInterval: o.SampleInterval, timeout: o.RolloutTimeout,
		inController: o.DeployerMode == dcv1.DeployerModeControllerWhenPossible,
	}, nil
}

// measure rolls both objects out once unmeasured (their images are pulled
// then), then o.Rollouts times each, alternating which goes first.
func measure(ctx context.Context, o Options, m *measurer, rep *Report) error {
	fmt.Fprintln(o.Log, "First rollouts (not measured: they pull the images)...")
	if err := warmUp(ctx, o, m, rep.Settings.ApplicationImage); err != nil {
		return err
	}
	for i := 1; i <= o.Rollouts; i++ {
		for _, system := range order(i) {
			s, err := rollout(ctx, m, system, i)
			s.System, s.Iteration = system, i
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				s = Sample{System: system, Iteration: i, Err: err.Error()}
			}
			rep.Samples = append(rep.Samples, s)
			fmt.Fprintf(o.Log, "  %2d %-16s %s\n", i, system, describe(s))
			if err := m.waitQuiet(ctx, 2*int(o.Replicas)); err != nil {
				return err
			}
		}
	}
	return nil
}

// rollout makes rollout i (VERSION i) of one system and times it.
func rollout(ctx context.Context, m *measurer, system string, i int) (Sample, error) {
	if system == SystemDeployment {
		return m.rolloutDeployment(ctx, m.changeDeployment(i))
	}
	latest, err := m.latestVersion(ctx)
	if err != nil {
		return Sample{}, err
	}
	return m.rolloutDC(ctx, latest+1, m.changeDC(i))
}

// warmUp creates both objects and waits for their first rollouts.
func warmUp(ctx context.Context, o Options, m *measurer, image string) error {
	_, err := m.rolloutDC(ctx, 1, func(ctx context.Context) (time.Time, error) {
		t0 := time.Now()
		if err := m.client.Create(ctx, newDC(m.namespace, image, o.Replicas)); err != nil {
			return t0, fmt.Errorf("creating DeploymentConfig %s: %w", dcName, err)
		}
		return t0, nil
	})
	if err != nil {
		return fmt.Errorf("first rollout of the DeploymentConfig: %w", err)
	}
	_, err = m.rolloutDeployment(ctx, func(ctx context.Context) (time.Time, int64, error) {
		t0 := time.Now()
		d, err := m.clientset.AppsV1().Deployments(m.namespace).Create(ctx, newDeployment(m.namespace, image, o.Replicas), metav1.CreateOptions{})
		if err != nil {
			return t0, 0, fmt.Errorf("creating Deployment %s: %w", deploymentName, err)
		}
		return t0, d.Generation, nil
	})
	if err != nil {
		return fmt.Errorf("first rollout of the Deployment: %w", err)
	}
	return m.waitQuiet(ctx, 2*int(o.Replicas))
}

// describe is a sample's progress line.
func describe(s Sample) string {
	switch {
	case s.Err != "":
		return "failed: " + s.Err
	case s.System == SystemDC:
		return fmt.Sprintf("deployer Running %.2fs, Succeeded %.2fs, Complete %.2fs, deployer peak %.1f MiB", s.DeployerRunning, s.DeployerDone, s.Complete, mib(s.DeployerPeak))
	default:
		return fmt.Sprintf("Complete %.2fs", s.Complete)
	}
}

// settings are the run's settings as the report states them.
func settings(o Options) Settings {
	pause, _ := strategy.PrescribedPause(rollingParams(), o.Replicas)
	return Settings{
		Rollouts: o.Rollouts, Replicas: o.Replicas,
		MaxSurge: maxSurge, MaxUnavailable: maxUnavailable,
		UpdatePeriodSeconds: rollingPeriod, IntervalSeconds: rollingPeriod,
		ReadinessPeriod:        readinessPeriod,
		Order:                  "alternating: odd iterations DC first, even ones Deployment first; one rollout at a time, each after the namespace settled (every pod ready, none terminating)",
		Change:                 "the application container's VERSION variable (a template change)",
		MemorySampleMillis:     o.SampleInterval.Milliseconds(),
		ControllerReplicas:     controllerReplicas,
		PrescribedPauseSeconds: pause.Seconds(),
		DeployerMode:           o.DeployerMode,
	}
}

// versions are what ran: the API server's, the node's and ours.
func versions(ctx context.Context, o Options, cs kubernetes.Interface) Versions {
	v := Versions{Go: runtime.Version(), Deployconfig: firstLine(ctx, "git", "-C", o.Root, "describe", "--always", "--dirty")}
	if info, err := cs.Discovery().ServerVersion(); err == nil {
		v.Kubernetes = info.GitVersion
	}
	if node, err := cs.CoreV1().Nodes().Get(ctx, realnode.NodeName, metav1.GetOptions{}); err == nil {
		v.Kubelet = node.Status.NodeInfo.KubeletVersion
		v.Runtime = node.Status.NodeInfo.ContainerRuntimeVersion
		v.Kernel = node.Status.NodeInfo.KernelVersion
	}
	return v
}

// writeOutputs writes <date>-node[-label].json and .md.
func writeOutputs(o Options, rep *Report) (Outputs, error) {
	base := rep.Started.Format("2006-01-02") + "-node"
	if o.Label != "" {
		base += "-" + o.Label
	}
	out := Outputs{JSON: filepath.Join(o.OutDir, base+".json"), Markdown: filepath.Join(o.OutDir, base+".md")}
	if err := rep.WriteJSON(out.JSON); err != nil {
		return out, err
	}
	f, err := os.Create(out.Markdown)
	if err != nil {
		return out, fmt.Errorf("writing the report: %w", err)
	}
	err = rep.WriteMarkdown(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing the report: %w", cerr)
	}
	return out, err
}

// firstLine runs a command and returns the first line of its output, ""
// when it fails.
func firstLine(ctx context.Context, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
