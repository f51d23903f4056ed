package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// gitOpsClient is a client of a GitOps tool that may only read and patch
// DeploymentConfigs and their status, as Argo CD's resource actions do
// (they patch the object, and its status subresource for a change to
// status); it can touch no ReplicationController or pod.
func gitOpsClient(t *testing.T, ns string) dynamic.ResourceInterface {
	t.Helper()
	user := "system:serviceaccount:argocd:argocd-server"
	mustCreate(t, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gitops"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{dcv1.GroupVersion.Group},
			Resources: []string{"deploymentconfigs", "deploymentconfigs/status"}, Verbs: []string{"get", "patch"}}},
	})
	mustCreate(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gitops"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "gitops"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})
	cfg := rest.CopyConfig(cluster.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	return dynamic.NewForConfigOrDie(cfg).Resource(dcResource).Namespace(ns)
}

// gitOpsPatch merge-patches the DeploymentConfig (or its status) as the
// GitOps tool, retrying until the authorizer has seen its RoleBinding.
func gitOpsPatch(t *testing.T, c dynamic.ResourceInterface, name, patch string, subresources ...string) {
	t.Helper()
	waitFor(t, "patch "+patch, func(ctx context.Context) (bool, string, error) {
		_, err := c.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, subresources...)
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

// waitRequestDone waits until the controller has removed the request.
func waitRequestDone(t *testing.T, ns, name string) {
	t.Helper()
	waitFor(t, "the rollout request to be taken", func(ctx context.Context) (bool, string, error) {
		a := getDC(t, ns, name).Annotations
		_, pending := a[dcv1.RolloutRequestAnnotation]
		return !pending, fmt.Sprintf("annotations %v", a), nil
	})
}

func requestPatch(request string) string {
	return fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, dcv1.RolloutRequestAnnotation, request)
}

// TestRolloutRequestsFromAGitOpsTool: the patches the Argo CD actions make
// (integrations/argocd) do what `kubectl dc rollout cancel/retry/latest/
// pause/resume` do, by a client that may only patch the DeploymentConfig:
// the controller cancels and retries on the request annotation, starts a
// rollout on a raised status.latestVersion, and refuses with an event what
// the commands refuse.
func TestRolloutRequestsFromAGitOpsTool(t *testing.T) {
	ns := newNamespace(t)
	gitops := gitOpsClient(t, ns)
	mustCreate(t, newDC(ns, "web", nil))
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhasePending)
	setPodPhase(t, ns, "web-1-deploy", corev1.PodRunning)
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhaseRunning)

	// cancel
	gitOpsPatch(t, gitops, "web", requestPatch("cancel"))
	waitRC(t, ns, "web-1", "cancelled by the user", func(rc *corev1.ReplicationController) bool {
		return deployment.Phase(rc) == dcv1.DeploymentPhaseFailed && deployment.IsCancelled(rc) &&
			rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] == dcv1.DeploymentCancelledByUser
	})
	waitRequestDone(t, ns, "web")
	waitCondition(t, ns, "web", dcv1.DeploymentStalled, corev1.ConditionTrue, dcv1.RolloutCancelledReason)

	// retry: the cancelled deployment runs again, with a new deployer pod
	// (the cancel removed the old one).
	waitGone(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1-deploy"}})
	gitOpsPatch(t, gitops, "web", requestPatch("retry"))
	waitPod(t, ns, "web-1-deploy")
	waitRequestDone(t, ns, "web")
	waitEvent(t, ns, "web", "DeploymentRetried")
	rc := runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	if deployment.IsCancelled(rc) || rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] != "" {
		t.Errorf("retried deployment annotations %v, want no cancel and no reason", rc.Annotations)
	}

	// A retry of a Complete rollout is refused, as the command refuses it.
	gitOpsPatch(t, gitops, "web", requestPatch("retry"))
	waitRequestDone(t, ns, "web")
	waitEventMessage(t, ns, "web", "RolloutRequestRefused", "only failed deployments can be retried")

	// latest: a raised status.latestVersion, the status patch Argo CD makes.
	gitOpsPatch(t, gitops, "web", `{"status":{"latestVersion":2,"details":{"message":"manual change","causes":[{"type":"Manual"}]}}}`, "status")
	waitPhase(t, ns, "web-2", dcv1.DeploymentPhasePending)
	if d := getDC(t, ns, "web").Status.Details; d == nil || d.Message != "manual change" {
		t.Errorf("details %+v, want the manual change", d)
	}

	// pause, then cancel: refused while paused.
	gitOpsPatch(t, gitops, "web", `{"spec":{"paused":true}}`)
	waitCondition(t, ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.PausedReason)
	gitOpsPatch(t, gitops, "web", requestPatch("cancel"))
	waitRequestDone(t, ns, "web")
	waitEventMessage(t, ns, "web", "RolloutRequestRefused", "unable to cancel paused deployment")
	if rc, _ := getRC(context.Background(), ns, "web-2"); deployment.IsCancelled(rc) {
		t.Error("a paused DeploymentConfig's rollout was cancelled")
	}
	gitOpsPatch(t, gitops, "web", `{"spec":{"paused":false}}`)
	waitCondition(t, ns, "web", dcv1.DeploymentReconciling, corev1.ConditionTrue, dcv1.RolloutInProgressReason)

	// retry of a failed rollout whose deployer pod is still there: it goes
	// first, then a new one runs.
	mustCreate(t, newDC(ns, "bad", nil))
	runDeployer(t, ns, "bad-1", corev1.PodFailed)
	failedPod := waitPod(t, ns, "bad-1-deploy")
	gitOpsPatch(t, gitops, "bad", requestPatch("retry"))
	waitFor(t, "a new deployer pod for bad-1", func(ctx context.Context) (bool, string, error) {
		pod := &corev1.Pod{}
		err := cluster.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "bad-1-deploy"}, pod)
		if err != nil {
			return false, err.Error(), nil
		}
		return pod.UID != failedPod.UID, string(pod.UID), nil
	})
	waitRequestDone(t, ns, "bad")
	runDeployer(t, ns, "bad-1", corev1.PodSucceeded)

	// Anything else is refused with what is expected.
	gitOpsPatch(t, gitops, "web", requestPatch("rollback"))
	waitRequestDone(t, ns, "web")
	waitEventMessage(t, ns, "web", "RolloutRequestRefused", "expected cancel, retry, promote or promote-full")
}

// waitEventMessage waits for an event with that reason about the object
// whose message contains text.
func waitEventMessage(t *testing.T, ns, objectName, reason, text string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("event %s on %s saying %q", reason, objectName, text), func(ctx context.Context) (bool, string, error) {
		events := &corev1.EventList{}
		if err := cluster.client.List(ctx, events, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var seen []string
		for _, e := range events.Items {
			if e.InvolvedObject.Name == objectName && e.Reason == reason && strings.Contains(e.Message, text) {
				return true, "", nil
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return false, strings.Join(seen, "; "), nil
	})
}
