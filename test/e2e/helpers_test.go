package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

const (
	// pollInterval is how often waits look at the cluster.
	pollInterval = 200 * time.Millisecond
	// podTimeout bounds how long kwok gets to run or remove a pod.
	podTimeout = time.Minute
	// pauseImage is the image of test pods; kwok never pulls it.
	pauseImage = "registry.k8s.io/pause:3.10"
)

// clientset is the suite cluster's client.
func clientset() kubernetes.Interface {
	return suite.cluster.Clientset
}

// Pod Security Standard levels a test namespace enforces.
const (
	// podSecurityRestricted is what every test namespace enforces unless
	// the test needs more: deployconfig's own pods (deployers, hooks of a
	// compliant template) must be admitted there.
	podSecurityRestricted = "restricted"
	// podSecurityPrivileged is for templates that users wrote without the
	// restricted settings, such as converted OpenShift manifests.
	podSecurityPrivileged = "privileged"
)

// newNamespace creates a namespace for one test that enforces the
// restricted Pod Security Standard; see newNamespaceAt.
func newNamespace(t *testing.T) string {
	t.Helper()
	return newNamespaceAt(t, podSecurityRestricted)
}

// newNamespaceAt creates a namespace for one test that enforces the Pod
// Security Standard level, waits until pods can be created in it (its
// default service account exists) and deletes it when the test ends.
func newNamespaceAt(t *testing.T, level string) string {
	t.Helper()
	ctx := t.Context()
	ns, err := clientset().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "e2e-",
			Labels:       map[string]string{"pod-security.kubernetes.io/enforce": level},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = clientset().CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	waitFor(t, "the default service account of "+ns.Name, podTimeout, func(ctx context.Context) (bool, error) {
		_, err := clientset().CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, ignoreNotFound(err)
	})
	return ns.Name
}

// restricted gives a pod spec the settings the restricted Pod Security
// Standard asks for, as a user's compliant template would have them.
func restricted(spec corev1.PodSpec) corev1.PodSpec {
	spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot:   new(true),
		RunAsUser:      new(int64(65532)),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	for i := range spec.Containers {
		spec.Containers[i].SecurityContext = &corev1.SecurityContext{
			AllowPrivilegeEscalation: new(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		}
	}
	return spec
}

// waitFor polls cond until it is true, fails the test when it returns an
// error or timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), pollInterval, timeout, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// ignoreNotFound turns NotFound into nil, for polls that wait for an object
// to appear.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// testPod is a pod with one pause container.
func testPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: restricted(corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: pauseImage}},
		}),
	}
}

// podReady reports whether a pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// kubectl runs the suite's kubectl against the suite's cluster and returns
// its output; it fails the test when kubectl fails.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	args = append([]string{"--kubeconfig", suite.cluster.Kubeconfig}, args...)
	cmd := exec.CommandContext(t.Context(), filepath.Join(suite.binDir, "kubectl"), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args[2:], " "), err, out)
	}
	return string(out)
}

// waitPodTerminal waits until a pod is Succeeded or Failed and returns it.
func waitPodTerminal(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	waitFor(t, "pod "+name+" to end", podTimeout, func(ctx context.Context) (bool, error) {
		p, err := clientset().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		pod = p
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
	})
	return pod
}

// waitPodGone waits until a pod no longer exists.
func waitPodGone(t *testing.T, ns, name string) {
	t.Helper()
	waitFor(t, "pod "+name+" to go away", podTimeout, func(ctx context.Context) (bool, error) {
		_, err := clientset().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
}

// containerTerminated is the terminated state of a pod's first container,
// if it has one.
func containerTerminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	if len(pod.Status.ContainerStatuses) == 0 {
		return nil
	}
	return pod.Status.ContainerStatuses[0].State.Terminated
}
