package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// The real kube-controller-manager and kube-scheduler run, and kwok makes
// the pods of a ReplicationController Running and Ready.
func TestReplicationControllerPodsBecomeReady(t *testing.T) {
	ns := newNamespace(t)
	labels := map[string]string{"app": "rc-test"}
	pod := testPod("", labels)
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "rc-test"},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: new(int32(3)),
			Selector: labels,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec},
		},
	}
	if _, err := clientset().CoreV1().ReplicationControllers(ns).Create(t.Context(), rc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the ReplicationController: %v", err)
	}

	waitFor(t, "3 ready replicas", podTimeout, func(ctx context.Context) (bool, error) {
		rc, err := clientset().CoreV1().ReplicationControllers(ns).Get(ctx, "rc-test", metav1.GetOptions{})
		return err == nil && rc.Status.ReadyReplicas == 3, err
	})
	pods, err := clientset().CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=rc-test"})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	if len(pods.Items) != 3 {
		t.Fatalf("got %d pods, want 3", len(pods.Items))
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || !podReady(&p) || p.Spec.NodeName == "" {
			t.Errorf("pod %s: phase %s, ready %t, node %q; want Running, ready, on a node", p.Name, p.Status.Phase, podReady(&p), p.Spec.NodeName)
		}
	}
}

// kwok leaves deployer and hook pods (labelled with the deployer-pod label)
// to the local pod runtime, runs every other pod, and the runtime removes
// deleted pods of its own once their work has stopped. A deployer-labelled
// pod of an image whose entrypoint the runtime cannot know fails to start,
// which proves that the runtime, not kwok, handled it.
func TestKwokLeavesDeployerPodsToTheRuntime(t *testing.T) {
	ns := newNamespace(t)
	pods := clientset().CoreV1().Pods(ns)
	deployer := testPod("hello-1-deploy", map[string]string{dcv1.DeployerPodForDeploymentLabel: "hello-1"})
	deployer.Spec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := pods.Create(t.Context(), deployer, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the deployer pod: %v", err)
	}
	app := testPod("app", nil)
	if _, err := pods.Create(t.Context(), app, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the application pod: %v", err)
	}
	waitFor(t, "the application pod to be Running and Ready", podTimeout, func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, app.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning && podReady(p), err
	})
	got := waitPodTerminal(t, ns, deployer.Name)
	state := containerTerminated(got)
	if got.Status.Phase != corev1.PodFailed || state == nil || state.Reason != "StartError" || !strings.HasPrefix(state.ContainerID, "dc-local://") {
		t.Errorf("deployer pod: phase %s, container %+v; want Failed by the runtime with reason StartError", got.Status.Phase, state)
	}

	for _, name := range []string{deployer.Name, app.Name} {
		if err := pods.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting pod %s: %v", name, err)
		}
	}
	for _, name := range []string{deployer.Name, app.Name} {
		waitPodGone(t, ns, name)
	}
}

// The CRD is installed: a DeploymentConfig applied with kubectl (the
// sample, through its kustomization) is listed by `kubectl get dc`.
func TestDeploymentConfigWithKubectl(t *testing.T) {
	ns := dcNamespace(t)
	established := kubectl(t, "get", "crd", "deploymentconfigs.apps.deployconfig.io",
		"-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
	if established != "True" {
		t.Fatalf("CRD Established condition: %q, want True", established)
	}

	out := kubectl(t, "apply", "-n", ns, "-k", samplesDir)
	if !strings.Contains(out, "deploymentconfig.apps.deployconfig.io/hello created") {
		t.Fatalf("kubectl apply -k %s: unexpected output:\n%s", samplesDir, out)
	}

	out = kubectl(t, "get", "dc", "-n", ns)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("kubectl get dc: want a header and the two samples, got:\n%s", out)
	}
	for _, column := range []string{"NAME", "REVISION", "DESIRED", "CURRENT", "TRIGGERED BY", "AGE"} {
		if !strings.Contains(lines[0], column) {
			t.Errorf("kubectl get dc: header %q lacks %s", lines[0], column)
		}
	}
	for i, name := range []string{"hello", "recreate"} {
		if fields := strings.Fields(lines[i+1]); len(fields) < 3 || fields[0] != name || !strings.Contains(lines[i+1], "ConfigChange") {
			t.Errorf("kubectl get dc: row %q, want %s with its ConfigChange trigger", lines[i+1], name)
		}
	}
	if replicas := kubectl(t, "get", "dc", "hello", "-n", ns, "-o", "jsonpath={.spec.replicas}"); replicas != "3" {
		t.Errorf("spec.replicas of hello: %q, want 3", replicas)
	}
}
