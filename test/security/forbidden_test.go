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

// Users who may look but not touch: reader may only get, list and watch
// DeploymentConfigs; viewer also has Kubernetes' view ClusterRole, so it
// reads the RCs and pods that kubectl dc looks at too, and only the writes
// are left to refuse.
const (
	reader = "dc-reader"
	viewer = "viewer"
)

// A user who may read DeploymentConfigs but not change them cannot
// trigger, cancel or retry their rollouts through kubectl dc: each command
// exits non-zero saying Forbidden, and changes nothing.
func TestReadOnlyUserCannotDriveRollouts(t *testing.T) {
	ctx := t.Context()
	dcs := rollout.NewClient(suite)
	ns := newNamespace(t, dcs)
	bindReadOnlyUsers(t, ns)
	users := []string{reader, viewer}
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
	for _, user := range users {
		wantForbidden(t, dcs, ns, user, "rollout", "cancel", dc.Name)
	}
	if rc := getRC(t, ns, rcName); deployment.IsCancelled(rc) || deployment.Phase(rc) != dcv1.DeploymentPhaseRunning {
		t.Errorf("after the read-only users' cancel, %s is %s (cancelled %t)", rcName, deployment.Phase(rc), deployment.IsCancelled(rc))
	}

	if out, errOut, err := dcs.KubectlDC(ctx, ns, "rollout", "cancel", dc.Name); err != nil {
		t.Fatalf("the admin's cancel: %v: %s%s", err, out, errOut)
	}
	if _, rc, err := dcs.WaitLatestDone(ctx, ns, dc.Name, 1, rolloutTimeout); err != nil || deployment.Phase(rc) != dcv1.DeploymentPhaseFailed {
		t.Fatalf("the cancelled rollout did not end Failed: %v", err)
	}

	for _, user := range users {
		wantForbidden(t, dcs, ns, user, "rollout", "retry", dc.Name)
	}
	// A retry would have cleared the cancel and set the phase to New.
	if rc := getRC(t, ns, rcName); deployment.Phase(rc) != dcv1.DeploymentPhaseFailed || !deployment.IsCancelled(rc) {
		t.Errorf("after the read-only users' retry, %s is %s (cancelled %t), want still Failed and cancelled", rcName, deployment.Phase(rc), deployment.IsCancelled(rc))
	}

	for _, user := range users {
		wantForbidden(t, dcs, ns, user, "rollout", "latest", dc.Name)
		wantForbidden(t, dcs, ns, user, "rollout", "latest", "--again", dc.Name)
	}
	now, err := dcs.Get(ctx, ns, dc.Name)
	if err != nil {
		t.Fatal(err)
	}
	if now.Status.LatestVersion != 1 || now.Generation != 1 {
		t.Errorf("after the read-only users' rollout latest, latestVersion is %d and generation %d, want 1 and 1", now.Status.LatestVersion, now.Generation)
	}
}

// bindReadOnlyUsers gives reader and viewer a Role to read DeploymentConfigs
// (and pods' logs), and viewer the view ClusterRole in the namespace too.
func bindReadOnlyUsers(t *testing.T, ns string) {
	t.Helper()
	ctx := t.Context()
	rbac := suite.Clientset().RbacV1()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "dc-reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{dcv1.GroupVersion.Group}, Resources: []string{"deploymentconfigs"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	if _, err := rbac.Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	user := func(name string) []rbacv1.Subject {
		return []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}}
	}
	bindings := []*rbacv1.RoleBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: "dc-reader"}, Subjects: append(user(reader), user(viewer)...),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}},
		{ObjectMeta: metav1.ObjectMeta{Name: "viewer-view"}, Subjects: user(viewer),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}},
	}
	for _, binding := range bindings {
		if _, err := rbac.RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// wantForbidden runs kubectl dc as user (impersonated by the admin, as
// kubectl --as does) and checks that it fails with the API server's
// Forbidden message for that user.
func wantForbidden(t *testing.T, dcs *rollout.Client, ns, user string, args ...string) {
	t.Helper()
	command := "kubectl dc " + strings.Join(args, " ")
	out, errOut, err := dcs.KubectlDC(t.Context(), ns, append([]string{"--as", user}, args...)...)
	if err == nil {
		t.Errorf("%s as %s succeeded: %s", command, user, out)
		return
	}
	if !strings.Contains(errOut, "forbidden") || !strings.Contains(errOut, `User "`+user+`" cannot`) {
		t.Errorf("%s as %s: %v, and its message does not say Forbidden:\n%s%s", command, user, err, out, errOut)
		return
	}
	t.Logf("%s as %s: %s", command, user, oneLine(errOut))
}

// oneLine joins output onto one line for the log.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
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
