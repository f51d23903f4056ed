package security

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// viewer is the user who may look but not touch.
const viewer = "viewer"

// A user bound only to the view ClusterRole (plus reading DeploymentConfigs,
// which view does not cover, and pods/log) can follow a DeploymentConfig
// with kubectl dc but cannot trigger, cancel or retry its rollouts: each
// command exits non-zero saying Forbidden, and changes nothing.
func TestViewerCannotDriveRollouts(t *testing.T) {
	ctx := t.Context()
	dcs := rollout.NewClient(suite)
	ns := newNamespace(t, dcs)
	bindViewer(t, ns)
	// The pre hook holds the rollout in progress until the test cancels it.
	hooks := map[string]*dcv1.LifecycleHook{"pre": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "exec sleep 300")}
	dc := rollout.NewDC(ns, "guarded", rollout.Options{Replicas: 1, Strategy: dcv1.DeploymentStrategyTypeRecreate, Hooks: hooks})
	if err := dcs.Create(ctx, dc); err != nil {
		t.Fatal(err)
	}
	rcName := deployment.Name(dc.Name, 1)
	waitRunning(t, ns, rcName)

	if out, errOut, err := dcs.KubectlDC(ctx, ns, "--as", viewer, "rollout", "history", dc.Name); err != nil {
		t.Fatalf("the viewer cannot even read the history (%v): %s%s", err, out, errOut)
	}
	wantForbidden(t, dcs, ns, "rollout", "cancel", dc.Name)
	if rc := getRC(t, ns, rcName); deployment.IsCancelled(rc) || deployment.Phase(rc) != dcv1.DeploymentPhaseRunning {
		t.Errorf("after the viewer's cancel, %s is %s (cancelled %t)", rcName, deployment.Phase(rc), deployment.IsCancelled(rc))
	}

	if out, errOut, err := dcs.KubectlDC(ctx, ns, "rollout", "cancel", dc.Name); err != nil {
		t.Fatalf("the admin's cancel: %v: %s%s", err, out, errOut)
	}
	if _, rc, err := dcs.WaitLatestDone(ctx, ns, dc.Name, 1, rolloutTimeout); err != nil || deployment.Phase(rc) != dcv1.DeploymentPhaseFailed {
		t.Fatalf("the cancelled rollout did not end Failed: %v", err)
	}

	wantForbidden(t, dcs, ns, "rollout", "retry", dc.Name)
	// A retry would have cleared the cancel and set the phase to New.
	if rc := getRC(t, ns, rcName); deployment.Phase(rc) != dcv1.DeploymentPhaseFailed || !deployment.IsCancelled(rc) {
		t.Errorf("after the viewer's retry, %s is %s (cancelled %t), want still Failed and cancelled", rcName, deployment.Phase(rc), deployment.IsCancelled(rc))
	}

	wantForbidden(t, dcs, ns, "rollout", "latest", "--again", dc.Name)
	now, err := dcs.Get(ctx, ns, dc.Name)
	if err != nil {
		t.Fatal(err)
	}
	if now.Status.LatestVersion != 1 {
		t.Errorf("after the viewer's rollout latest, latestVersion is %d, want 1", now.Status.LatestVersion)
	}
}

// bindViewer gives the viewer the view ClusterRole in the namespace, and a
// Role to read DeploymentConfigs and pods' logs.
func bindViewer(t *testing.T, ns string) {
	t.Helper()
	ctx := t.Context()
	rbac := suite.Clientset().RbacV1()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "dc-viewer"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{dcv1.GroupVersion.Group}, Resources: []string{"deploymentconfigs"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		},
	}
	if _, err := rbac.Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: viewer}}
	for _, ref := range []rbacv1.RoleRef{
		{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
	} {
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "viewer-" + strings.ToLower(ref.Kind)}, RoleRef: ref, Subjects: subjects}
		if _, err := rbac.RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// wantForbidden runs kubectl dc as the viewer and checks that it fails
// with a Forbidden message.
func wantForbidden(t *testing.T, dcs *rollout.Client, ns string, args ...string) {
	t.Helper()
	out, errOut, err := dcs.KubectlDC(t.Context(), ns, append([]string{"--as", viewer}, args...)...)
	if err == nil {
		t.Errorf("kubectl dc %s as %s succeeded: %s", strings.Join(args, " "), viewer, out)
		return
	}
	if !strings.Contains(errOut, "forbidden") || !strings.Contains(errOut, `User "`+viewer+`"`) {
		t.Errorf("kubectl dc %s as %s: %v, and its message does not say Forbidden:\n%s%s", strings.Join(args, " "), viewer, err, out, errOut)
	}
}

// waitRunning waits until a deployment is Running.
func waitRunning(t *testing.T, ns, rcName string) {
	t.Helper()
	err := rollout.Poll(t.Context(), rolloutTimeout, func(ctx context.Context) (bool, error) {
		rc, err := suite.Clientset().CoreV1().ReplicationControllers(ns).Get(ctx, rcName, metav1.GetOptions{})
		return err == nil && deployment.Phase(rc) == dcv1.DeploymentPhaseRunning, err
	})
	if err != nil {
		t.Fatalf("waiting for %s to run: %v", rcName, err)
	}
}

func getRC(t *testing.T, ns, name string) *corev1.ReplicationController {
	t.Helper()
	rc, err := suite.Clientset().CoreV1().ReplicationControllers(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}
