package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// defaultConfigDir is the kustomization that installs deployconfig on
	// a cluster.
	defaultConfigDir = "../../config/default"
	// systemNamespace is where config/default puts the controller.
	systemNamespace = "deployconfig-system"
)

// `kubectl apply --server-side -k config/default --dry-run=server`, as an
// administrator would check the install against a cluster (README), is
// accepted by the API server for every object: the CRD, the controller's
// RBAC, its ServiceAccount and its Deployment. Server-side apply is the
// documented way: the CRD is larger than the annotation client-side apply
// keeps.
func TestDefaultConfigAppliesWithServerDryRun(t *testing.T) {
	t.Parallel()
	// A server-side dry run creates nothing, the Namespace of
	// config/default included, and the API server refuses a namespaced
	// object whose namespace does not exist even in a dry run. So the
	// namespace is created for real first, as it would be after a real
	// apply; the dry run then reports it unchanged (or configured).
	_, err := clientset().CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: systemNamespace},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", systemNamespace, err)
	}
	t.Cleanup(func() {
		_ = clientset().CoreV1().Namespaces().Delete(context.Background(), systemNamespace, metav1.DeleteOptions{})
	})

	r := run(t, "", "kubectl", "apply", "--server-side", "-k", defaultConfigDir, "--dry-run=server")
	if r.code != 0 {
		t.Fatalf("kubectl apply --server-side -k %s --dry-run=server: %s", defaultConfigDir, r)
	}
	for _, object := range []string{
		"namespace/" + systemNamespace,
		"customresourcedefinition.apiextensions.k8s.io/deploymentconfigs.apps.deployconfig.io",
		"serviceaccount/dc-controller",
		"role.rbac.authorization.k8s.io/dc-controller",
		"clusterrole.rbac.authorization.k8s.io/dc-controller",
		"rolebinding.rbac.authorization.k8s.io/dc-controller",
		"clusterrolebinding.rbac.authorization.k8s.io/dc-controller",
		"deployment.apps/dc-controller",
	} {
		if !hasDryRunLine(r.stdout, object) {
			t.Errorf("kubectl apply --server-side -k --dry-run=server does not report %s:\n%s", object, r.stdout)
		}
	}
	// Nothing but the namespace was really created.
	if _, err := clientset().AppsV1().Deployments(systemNamespace).Get(t.Context(), "dc-controller", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the dry run created deployment dc-controller (err=%v)", err)
	}
}

// hasDryRunLine reports whether kubectl's output has a line for the
// object, e.g. "deployment.apps/dc-controller serverside-applied (server
// dry run)".
func hasDryRunLine(out, object string) bool {
	for line := range strings.Lines(out) {
		rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), object+" ")
		if ok && strings.HasSuffix(rest, "(server dry run)") {
			return true
		}
	}
	return false
}
