package node

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
	"github.com/deployconfig/deployconfig/test/rollout"
)

const (
	// helmName names the objects of the chart's controller, beside
	// config/default's (dc-controller), whose cluster-wide objects they
	// must not meet.
	helmName = "dc-controller-helm"
	// chartDir is the chart, relative to this package.
	chartDir = "../../charts/deployconfig"
)

// dc-controller installed with the Helm chart runs as real pods, from the
// images of the node's registry, in a namespace that enforces restricted
// Pod Security, and rolls out a DeploymentConfig whose hook and deployer
// pods run from the chart's deployer image. The suite's controller (from
// config/default) is scaled to 0 meanwhile, so that only the chart's acts;
// the test is not parallel, so no other test runs then.
func TestHelmChartController(t *testing.T) {
	ctx := context.Background()
	scaleSuiteController(t, 0)
	t.Cleanup(func() {
		scaleSuiteController(t, 2)
		if err := suite.cluster.WaitControllerReady(context.Background(), rolloutTimeout); err != nil {
			t.Errorf("the suite's dc-controller did not come back: %v", err)
		}
	})
	helmNamespace, err := suite.dcs.CreateNamespace(ctx, "deployconfig-helm-", restricted)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := suite.dcs.DeleteNamespace(context.Background(), helmNamespace); err != nil {
			t.Errorf("deleting namespace %s: %v", helmNamespace, err)
		}
	})

	controllerRepo, controllerTag := splitRef(t, suite.images[imagebuild.ControllerImageName])
	deployerRepo, deployerTag := splitRef(t, suite.images[imagebuild.DeployerImageName])
	nodeIP := strings.TrimPrefix(realnode.AllowRegistryArg, "--allow-registry-networks=")
	// helm install --wait returns when the Deployment's pods are ready:
	// real containers passing their readiness probe.
	mustHelm(t, "install", "deployconfig", chartDir, "--namespace", helmNamespace, "--wait", "--timeout", "3m",
		"--set", "fullnameOverride="+helmName,
		"--set", "image.repository="+controllerRepo, "--set", "image.tag="+controllerTag,
		"--set", "deployerImage.repository="+deployerRepo, "--set", "deployerImage.tag="+deployerTag,
		"--set", "registryNetworks.allow={"+nodeIP+"}",
		"--set", "imagePollInterval=2s")
	t.Cleanup(func() {
		if err := helm("uninstall", "deployconfig", "--namespace", helmNamespace, "--wait", "--timeout", "2m"); err != nil {
			t.Error(err)
		}
	})

	d, err := suite.clientset.AppsV1().Deployments(helmNamespace).Get(ctx, helmName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, realnode.AllowRegistryArg) {
		t.Errorf("the chart's dc-controller has args %q, without %s", args, realnode.AllowRegistryArg)
	}
	if d.Status.ReadyReplicas != 2 {
		t.Errorf("%d replicas of %s ready after helm install --wait, want 2", d.Status.ReadyReplicas, helmName)
	}

	ns := namespace(t)
	create(t, appDC(ns, "web", rollout.Options{Replicas: 2, Strategy: dcv1.DeploymentStrategyTypeRecreate,
		Hooks: map[string]*dcv1.LifecycleHook{"pre": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "echo pre hook under the Helm-installed controller")}}))
	requireComplete(t, ns, "web", 1)
	assertInOrder(t, deployerLog(t, ns, "web"), "pre hook under the Helm-installed controller", "--> Success")
	deployer, err := suite.clientset.CoreV1().Pods(ns).Get(ctx, deployment.DeployerPodName("web-1"), metav1.GetOptions{})
	if err == nil && deployer.Spec.Containers[0].Image != suite.images[imagebuild.DeployerImageName] {
		t.Errorf("the deployer pod ran %s, want the chart's deployer image %s", deployer.Spec.Containers[0].Image, suite.images[imagebuild.DeployerImageName])
	}
	holder := leaseHolder(t, helmNamespace)
	if !strings.HasPrefix(holder, helmName+"-") {
		t.Errorf("the leader Lease in %s is held by %q, not a pod of %s", helmNamespace, holder, helmName)
	}
}

// scaleSuiteController scales config/default's dc-controller and waits
// until it has that many pods.
func scaleSuiteController(t *testing.T, replicas int32) {
	t.Helper()
	ctx := context.Background()
	deployments := suite.clientset.AppsV1().Deployments(realnode.ControllerNamespace)
	scale, err := deployments.GetScale(ctx, realnode.ControllerDeployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = replicas
	if _, err := deployments.UpdateScale(ctx, realnode.ControllerDeployment, scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = rollout.Poll(ctx, rolloutTimeout, func(ctx context.Context) (bool, error) {
		pods, err := suite.clientset.CoreV1().Pods(realnode.ControllerNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return countLive(pods.Items) == int(replicas), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s to have %d pods: %v", realnode.ControllerDeployment, replicas, err)
	}
}

// countLive counts the pods not being deleted.
func countLive(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// leaseHolder is the holder of dc-controller's leader Lease in ns.
func leaseHolder(t *testing.T, ns string) string {
	t.Helper()
	lease, err := suite.clientset.CoordinationV1().Leases(ns).Get(context.Background(), controller.LeaderElectionID, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the leader Lease in %s: %v", ns, err)
	}
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

// splitRef splits REPOSITORY:TAG at the tag's colon.
func splitRef(t *testing.T, ref string) (repository, tag string) {
	t.Helper()
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		t.Fatalf("image %q has no tag", ref)
	}
	return ref[:i], ref[i+1:]
}

// mustHelm runs helm and fails the test unless it exits 0.
func mustHelm(t *testing.T, args ...string) {
	t.Helper()
	if err := helm(args...); err != nil {
		t.Fatal(err)
	}
}

// helm runs bin/helm against the cluster; the error has its output.
func helm(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(suite.binDir, "helm"), append(args, "--kubeconfig", suite.cluster.Kubeconfig)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return nil
}
