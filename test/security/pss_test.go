package security

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// rolloutTimeout bounds a rollout here.
const rolloutTimeout = 2 * time.Minute

// restrictedLabels make a namespace enforce the restricted Pod Security
// Standard (and warn and audit by it).
var restrictedLabels = map[string]string{
	"pod-security.kubernetes.io/enforce": "restricted",
	"pod-security.kubernetes.io/warn":    "restricted",
	"pod-security.kubernetes.io/audit":   "restricted",
}

// hookPoints are the Recreate strategy's hook points.
var hookPoints = []string{"pre", "mid", "post"}

// In a namespace that enforces the restricted Pod Security Standard, the
// deployer pod is admitted and a DeploymentConfig whose template complies
// rolls out with pre, mid and post hooks; each hook pod has exactly the
// template's security context.
func TestRestrictedNamespaceRollsOut(t *testing.T) {
	ctx := t.Context()
	dcs := rollout.NewClient(suite)
	ns := newNamespace(t, dcs)
	refusesPrivilegedPods(t, ns)

	hooks := map[string]*dcv1.LifecycleHook{}
	for _, point := range hookPoints {
		hooks[point] = rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "echo "+point)
	}
	dc := rollout.NewDC(ns, "restricted", rollout.Options{Replicas: 2, Strategy: dcv1.DeploymentStrategyTypeRecreate, Hooks: hooks})
	if err := dcs.Create(ctx, dc); err != nil {
		t.Fatal(err)
	}
	_, rc, err := dcs.WaitLatestDone(ctx, ns, dc.Name, 1, rolloutTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if phase := deployment.Phase(rc); phase != dcv1.DeploymentPhaseComplete {
		t.Fatalf("%s ended %s: %s", rc.Name, phase, rc.Annotations[dcv1.DeploymentStatusReasonAnnotation])
	}
	pods := suite.Clientset().CoreV1().Pods(ns)
	for _, point := range hookPoints {
		pod, err := pods.Get(ctx, deployment.HookPodName(rc.Name, point), metav1.GetOptions{})
		if err != nil {
			t.Errorf("the %s hook pod: %v", point, err)
			continue
		}
		checkHookPrivilege(t, pod, dc.Spec.Template)
	}
	checkDeployerRoleNamespaced(t, ns)
}

// A DeploymentConfig whose template does not pass the restricted standard
// gets no more from its hooks: the hook pod is refused like the template's
// own pods, and the rollout fails saying so.
func TestHookPodOfUnrestrictedTemplateRefused(t *testing.T) {
	ctx := t.Context()
	dcs := rollout.NewClient(suite)
	ns := newNamespace(t, dcs)
	hooks := map[string]*dcv1.LifecycleHook{"pre": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "echo pre")}
	dc := rollout.NewDC(ns, "unrestricted", rollout.Options{Replicas: 1, Strategy: dcv1.DeploymentStrategyTypeRecreate, Hooks: hooks, Unrestricted: true})
	if err := dcs.Create(ctx, dc); err != nil {
		t.Fatal(err)
	}
	_, rc, err := dcs.WaitLatestDone(ctx, ns, dc.Name, 1, rolloutTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if phase := deployment.Phase(rc); phase != dcv1.DeploymentPhaseFailed {
		t.Errorf("%s ended %s, want Failed", rc.Name, phase)
	}
	log, err := suite.Cluster.DeployerLog(ctx, ns, rc.Name)
	if err != nil || !strings.Contains(log, "violates PodSecurity") {
		t.Errorf("the deployer's log does not say that PodSecurity refused the hook pod (%v):\n%s", err, log)
	}
	deployer, err := suite.Clientset().CoreV1().Pods(ns).Get(ctx, deployment.DeployerPodName(rc.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the deployer pod was not admitted: %v", err)
	}
	if deployer.Status.Phase != corev1.PodFailed {
		t.Errorf("deployer pod %s is %s, want Failed", deployer.Name, deployer.Status.Phase)
	}
}

// newNamespace creates a namespace that enforces the restricted standard and
// deletes it after the test.
func newNamespace(t *testing.T, dcs *rollout.Client) string {
	t.Helper()
	ns, err := dcs.CreateNamespace(t.Context(), "security-", restrictedLabels)
	if ns != "" {
		t.Cleanup(func() { _ = dcs.DeleteNamespace(context.Background(), ns) })
	}
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// refusesPrivilegedPods checks that the namespace really enforces the
// standard: a pod without a security context is refused.
func refusesPrivilegedPods(t *testing.T, ns string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "unrestricted"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: rollout.PauseImage}}},
	}
	_, err := suite.Clientset().CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Fatalf("namespace %s admitted a pod that breaks the restricted standard (err %v)", ns, err)
	}
}

// checkHookPrivilege checks that a hook pod runs with the template's
// security context, pod and container, and nothing more: no host
// namespaces, no service account other than the template's.
func checkHookPrivilege(t *testing.T, pod *corev1.Pod, template *corev1.PodTemplateSpec) {
	t.Helper()
	spec := pod.Spec
	if !apiequality.Semantic.DeepEqual(spec.SecurityContext, template.Spec.SecurityContext) {
		t.Errorf("%s: pod security context %+v, template's %+v", pod.Name, spec.SecurityContext, template.Spec.SecurityContext)
	}
	if len(spec.Containers) != 1 || !apiequality.Semantic.DeepEqual(spec.Containers[0].SecurityContext, template.Spec.Containers[0].SecurityContext) {
		t.Errorf("%s: container security context differs from the template's", pod.Name)
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Errorf("%s: uses host namespaces", pod.Name)
	}
	if want := template.Spec.ServiceAccountName; spec.ServiceAccountName != want && !(want == "" && spec.ServiceAccountName == "default") {
		t.Errorf("%s: service account %q, template's %q", pod.Name, spec.ServiceAccountName, want)
	}
}
