package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
	"github.com/deployconfig/deployconfig/test/invariants"
	"github.com/deployconfig/deployconfig/test/rollout"
)

const (
	// rolloutTimeout bounds one rollout of real containers.
	rolloutTimeout = 3 * time.Minute
	// appPort is where the sample application listens.
	appPort = 8080
	// versionEnv is the sample application's variable that the tests
	// change to start a rollout; it answers with it.
	versionEnv = "VERSION"
)

// restricted are the labels that make a namespace enforce the restricted
// Pod Security Standard: every pod of the suite must pass it.
var restricted = map[string]string{
	"pod-security.kubernetes.io/enforce":         "restricted",
	"pod-security.kubernetes.io/enforce-version": "latest",
}

// namespace makes a namespace enforcing restricted Pod Security, watched by
// test/invariants for the whole test, and removes it afterwards.
func namespace(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	prefix := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	ns, err := suite.dcs.CreateNamespace(ctx, prefix+"-", restricted)
	if err != nil {
		t.Fatal(err)
	}
	checker, err := invariants.Start(ctx, suite.config, ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := invariants.Err(checker.Stop()); err != nil {
			t.Error(err)
		}
		if err := suite.dcs.DeleteNamespace(context.Background(), ns); err != nil {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
	return ns
}

// appDC is a DeploymentConfig of the sample application, ready when its
// /readyz says so, with env added to its container.
func appDC(ns, name string, o rollout.Options, env ...corev1.EnvVar) *dcv1.DeploymentConfig {
	dc := rollout.NewDC(ns, name, o)
	c := &dc.Spec.Template.Spec.Containers[0]
	c.Image = suite.images[imagebuild.SampleAppImageName]
	c.Env = append([]corev1.EnvVar{{Name: versionEnv, Value: "1"}}, env...)
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: appPort}}
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(appPort)}},
		PeriodSeconds: 1, FailureThreshold: 1,
	}
	return dc
}

// setVersion changes the sample application's VERSION, which rolls it out.
func setVersion(t *testing.T, ns, name, version string) {
	t.Helper()
	err := suite.dcs.Update(context.Background(), ns, name, func(dc *dcv1.DeploymentConfig) {
		setEnv(&dc.Spec.Template.Spec.Containers[0], versionEnv, version)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setEnv sets a container's variable.
func setEnv(c *corev1.Container, name, value string) {
	for i := range c.Env {
		if c.Env[i].Name == name {
			c.Env[i].Value = value
			return
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
}

func create(t *testing.T, dc *dcv1.DeploymentConfig) {
	t.Helper()
	if err := suite.dcs.Create(context.Background(), dc); err != nil {
		t.Fatal(err)
	}
}

// waitDone waits for the DeploymentConfig's rollout version (or a later
// one) to end, and returns its RC.
func waitDone(t *testing.T, ns, name string, version int64) *corev1.ReplicationController {
	t.Helper()
	_, rc, err := suite.dcs.WaitLatestDone(context.Background(), ns, name, version, rolloutTimeout)
	if err != nil {
		t.Fatalf("%v\n%s", err, deployerLog(t, ns, name))
	}
	return rc
}

// requireComplete waits for rollout version to end Complete and the
// DeploymentConfig to settle.
func requireComplete(t *testing.T, ns, name string, version int64) {
	t.Helper()
	rc := waitDone(t, ns, name, version)
	if deployment.Version(rc) != version || deployment.Phase(rc) != dcv1.DeploymentPhaseComplete {
		t.Fatalf("rollout %s ended %s (%s), want #%d Complete\n%s", rc.Name, deployment.Phase(rc),
			rc.Annotations[dcv1.DeploymentStatusReasonAnnotation], version, deployerLog(t, ns, name))
	}
	if err := suite.dcs.WaitSettled(context.Background(), ns, name, rolloutTimeout); err != nil {
		t.Fatal(err)
	}
}

// deployerLog is `kubectl dc logs` of the latest rollout: the deployer
// pod's log as the real kubelet serves it.
func deployerLog(t *testing.T, ns, name string, args ...string) string {
	t.Helper()
	stdout, stderr, err := suite.dcs.KubectlDC(context.Background(), ns, append([]string{"logs", name}, args...)...)
	if err != nil {
		return fmt.Sprintf("(kubectl dc logs %s: %v: %s)", name, err, stderr)
	}
	return stdout
}

// assertInOrder checks that each of want appears in text after the one
// before it.
func assertInOrder(t *testing.T, text string, want ...string) {
	t.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%q missing (or out of order) in:\n%s", w, text)
		}
		rest = rest[i+len(w):]
	}
}

// podsOf lists the running pods of a deployment (an RC).
func podsOf(t *testing.T, ns, rc string) []corev1.Pod {
	t.Helper()
	list, err := suite.clientset.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{"deployment": rc}).String(),
	})
	if err != nil {
		t.Fatal(err)
	}
	var running []corev1.Pod
	for _, p := range list.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running = append(running, p)
		}
	}
	return running
}

// get is an HTTP GET of a pod's sample application, sent from inside the
// cluster's network namespace.
func get(t *testing.T, pod corev1.Pod, path string) (int, string) {
	t.Helper()
	return getAddr(t, pod.Status.PodIP, path)
}

// getAddr is an HTTP GET of the sample application at an IP address,
// sent from inside the cluster's network namespace.
func getAddr(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	transport := &http.Transport{DialContext: realnode.Dialer{Netns: suite.cluster.NetnsPath()}.DialContext}
	defer transport.CloseIdleConnections()
	httpClient := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	resp, err := httpClient.Get(fmt.Sprintf("http://%s:%d%s", addr, appPort, path))
	if err != nil {
		t.Fatalf("GET %s of %s: %v", path, addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s of %s: %v", path, addr, err)
	}
	return resp.StatusCode, string(body)
}
