package integration

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/integration/controlplane"
)

func TestNewDeploymentConfigGetsDeploymentAndDeployerPod(t *testing.T) {
	ns := newNamespace(t)
	dc := newDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Labels = map[string]string{"team": "a"}
		dc.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
		dc.Spec.Strategy.Labels = map[string]string{"extra": "yes", dcv1.DeployerPodForDeploymentLabel: "not-ours"}
	})
	mustCreate(t, dc)

	rc := waitPhase(t, ns, "web-1", dcv1.DeploymentPhasePending)
	wantLabels := map[string]string{"team": "a", dcv1.DeploymentConfigLabel: "web"}
	if !reflect.DeepEqual(rc.Labels, wantLabels) {
		t.Errorf("rc labels = %v, want %v", rc.Labels, wantLabels)
	}
	wantSelector := map[string]string{"app": "web", "deploymentconfig": "web", "deployment": "web-1"}
	if !reflect.DeepEqual(rc.Spec.Selector, wantSelector) {
		t.Errorf("rc selector = %v, want %v", rc.Spec.Selector, wantSelector)
	}
	for k, v := range wantSelector {
		if rc.Spec.Template.Labels[k] != v {
			t.Errorf("pod template label %s = %q, want %q", k, rc.Spec.Template.Labels[k], v)
		}
	}
	for key, want := range map[string]string{
		dcv1.DeploymentConfigAnnotation:   "web",
		dcv1.DeploymentVersionAnnotation:  "1",
		dcv1.DeployerPodAnnotation:        "web-1-deploy",
		dcv1.DesiredReplicasAnnotation:    "3",
		dcv1.DeploymentReplicasAnnotation: "0",
	} {
		if got := rc.Annotations[key]; got != want {
			t.Errorf("rc annotation %s = %q, want %q", key, got, want)
		}
	}
	// What the controller's cache keeps of a DC (its template encoded in
	// an annotation) reaches neither the deployment nor the server.
	if encoded, err := deployment.DecodeConfig(rc); err != nil {
		t.Errorf("encoded deploymentconfig: %v", err)
	} else if encoded.Spec.Template == nil || len(encoded.Annotations) != 0 {
		t.Errorf("encoded deploymentconfig: template %v, annotations %v; want the template and no annotations", encoded.Spec.Template, encoded.Annotations)
	}
	if ref := metav1.GetControllerOf(rc); ref == nil || ref.UID != getDC(t, ns, "web").UID || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("rc controller reference = %+v, want the DeploymentConfig, blocking owner deletion", ref)
	}
	if *rc.Spec.Replicas != 0 {
		t.Errorf("rc created with %d replicas, want 0", *rc.Spec.Replicas)
	}

	pod := waitPod(t, ns, "web-1-deploy")
	if pod.Labels[dcv1.DeployerPodForDeploymentLabel] != "web-1" || pod.Labels["extra"] != "yes" {
		t.Errorf("deployer pod labels = %v", pod.Labels)
	}
	if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].UID != rc.UID || pod.OwnerReferences[0].Kind != "ReplicationController" {
		t.Errorf("deployer pod owner references = %+v, want the RC", pod.OwnerReferences)
	}
	c := pod.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if c.Name != "deployment" || c.Image != controlplane.DeployerImage || env["DC_DEPLOYMENT_NAME"] != "web-1" || env["DC_DEPLOYMENT_NAMESPACE"] != ns || env["OPENSHIFT_DEPLOYMENT_NAME"] != "web-1" {
		t.Errorf("deployer container = %s %s env %v", c.Name, c.Image, env)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || pod.Spec.ServiceAccountName != "deployer" ||
		*pod.Spec.ActiveDeadlineSeconds != dcv1.DefaultActiveDeadlineSeconds || pod.Spec.NodeSelector["disk"] != "ssd" {
		t.Errorf("deployer pod spec = %+v", pod.Spec)
	}

	got := getDC(t, ns, "web")
	if got.Status.LatestVersion != 1 || got.Status.Details == nil || got.Status.Details.Message != "config change" {
		t.Errorf("status = version %d details %+v, want 1, config change", got.Status.LatestVersion, got.Status.Details)
	}
	if len(got.Annotations) != 0 || got.Spec.Template == nil {
		t.Errorf("deploymentconfig after its status writes: annotations %v, template %v; want none and the template", got.Annotations, got.Spec.Template)
	}
	waitCondition(t, ns, "web", dcv1.DeploymentProgressing, corev1.ConditionUnknown, dcv1.ReplicationControllerUpdatedReason)
	waitEvent(t, ns, "web", "DeploymentCreated")
}

func TestDeployerPodPhaseDrivesTheDeployment(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "ok", nil))
	mustCreate(t, newDC(ns, "bad", nil))

	waitPhase(t, ns, "ok-1", dcv1.DeploymentPhasePending)
	setPodPhase(t, ns, "ok-1-deploy", corev1.PodRunning)
	waitPhase(t, ns, "ok-1", dcv1.DeploymentPhaseRunning)
	waitCondition(t, ns, "ok", dcv1.DeploymentProgressing, corev1.ConditionTrue, dcv1.ReplicationControllerUpdatedReason)
	setPodPhase(t, ns, "ok-1-deploy", corev1.PodSucceeded)
	waitPhase(t, ns, "ok-1", dcv1.DeploymentPhaseComplete)
	waitCondition(t, ns, "ok", dcv1.DeploymentProgressing, corev1.ConditionTrue, dcv1.NewReplicationControllerAvailableReason)
	// The finished deployment gets the desired replicas.
	waitRC(t, ns, "ok-1", "3 replicas", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 3 })

	runDeployer(t, ns, "bad-1", corev1.PodFailed)
	waitCondition(t, ns, "bad", dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.ProgressDeadlineExceededReason)
	waitCondition(t, ns, "bad", dcv1.DeploymentAvailable, corev1.ConditionFalse, dcv1.MinimumReplicasUnavailableReason)
	if rc, _ := getRC(context.Background(), ns, "bad-1"); deployment.Replicas(rc) != 0 {
		t.Errorf("a failed first deployment has %d replicas, want 0", deployment.Replicas(rc))
	}
}

func TestStatusCountsFollowTheDeployments(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)

	// Play the RC manager: three pods exist, two of them available.
	setRCStatus(t, ns, "web-1", func(rc *corev1.ReplicationController) {
		rc.Status = corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, ObservedGeneration: rc.Generation}
	})
	waitFor(t, "status counts", func(ctx context.Context) (bool, string, error) {
		s := getDC(t, ns, "web").Status
		want := dcv1.DeploymentConfigStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, UnavailableReplicas: 1}
		got := dcv1.DeploymentConfigStatus{Replicas: s.Replicas, UpdatedReplicas: s.UpdatedReplicas, ReadyReplicas: s.ReadyReplicas, AvailableReplicas: s.AvailableReplicas, UnavailableReplicas: s.UnavailableReplicas}
		return reflect.DeepEqual(got, want), fmt.Sprintf("%+v", got), nil
	})
	// 2 available of 3 with maxUnavailable 25% (0 pods, rounded down): not enough.
	waitCondition(t, ns, "web", dcv1.DeploymentAvailable, corev1.ConditionFalse, dcv1.MinimumReplicasUnavailableReason)
	setRCStatus(t, ns, "web-1", func(rc *corev1.ReplicationController) {
		rc.Status.AvailableReplicas, rc.Status.ReadyReplicas = 3, 3
	})
	waitCondition(t, ns, "web", dcv1.DeploymentAvailable, corev1.ConditionTrue, dcv1.MinimumReplicasAvailableReason)
	if got := getDC(t, ns, "web").Status.Selector; got != "app=web,deploymentconfig=web" {
		t.Errorf("status.selector = %q", got)
	}
}

func TestConfigChangeDuringRolloutCancelsIt(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhasePending)
	setPodPhase(t, ns, "web-1-deploy", corev1.PodRunning)
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhaseRunning)

	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:2"
	})

	old := waitPhase(t, ns, "web-1", dcv1.DeploymentPhaseFailed)
	if !deployment.IsCancelled(old) || old.Annotations[dcv1.DeploymentStatusReasonAnnotation] != dcv1.DeploymentCancelledNewerDeploymentExists {
		t.Errorf("superseded deployment annotations = %v", old.Annotations)
	}
	newer := waitPhase(t, ns, "web-2", dcv1.DeploymentPhasePending)
	// web-2 may only exist once web-1 is terminal.
	if newer.CreationTimestamp.Before(&old.CreationTimestamp) {
		t.Errorf("web-2 created before web-1")
	}
	if _, err := getRC(context.Background(), ns, "web-1"); err != nil {
		t.Fatal(err)
	}
	waitGone(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1-deploy"}})
	dc := getDC(t, ns, "web")
	if dc.Status.LatestVersion != 2 || dc.Status.Details.Message != "config change" {
		t.Errorf("status = %d %+v", dc.Status.LatestVersion, dc.Status.Details)
	}
	waitEvent(t, ns, "web", "DeploymentCancelled")
}

func TestVanishedDeployerPodFailsAndRestoresLastGoodVersion(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	waitRC(t, ns, "web-1", "3 replicas", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 3 })

	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:2"
	})
	waitPhase(t, ns, "web-2", dcv1.DeploymentPhasePending)
	setPodPhase(t, ns, "web-2-deploy", corev1.PodRunning)
	waitPhase(t, ns, "web-2", dcv1.DeploymentPhaseRunning)
	// The deployer scales down the old version as it goes.
	patchRC(t, ns, "web-1", func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr(int32(1)) })

	if err := cluster.client.Delete(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-2-deploy"}}); err != nil {
		t.Fatal(err)
	}
	failed := waitPhase(t, ns, "web-2", dcv1.DeploymentPhaseFailed)
	if got := failed.Annotations[dcv1.DeploymentStatusReasonAnnotation]; got != "deployer pod no longer exists" {
		t.Errorf("status reason = %q", got)
	}
	waitRC(t, ns, "web-1", "back to 3 replicas", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 3 })
	waitRC(t, ns, "web-2", "0 replicas", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 0 })
	waitCondition(t, ns, "web", dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.ProgressDeadlineExceededReason)
}

func TestCancelAnnotationFailsTheRollout(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhasePending)
	setPodPhase(t, ns, "web-1-deploy", corev1.PodRunning)
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhaseRunning)

	patchRC(t, ns, "web-1", func(rc *corev1.ReplicationController) {
		rc.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
		rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] = dcv1.DeploymentCancelledByUser
	})
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhaseFailed)
	waitGone(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1-deploy"}})
	waitEvent(t, ns, "web-1", "RolloutCancelled")
	waitCondition(t, ns, "web", dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.RolloutCancelledReason)
}

func TestCancelAfterSuccessIsDropped(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	patchRC(t, ns, "web-1", func(rc *corev1.ReplicationController) { rc.Annotations[dcv1.DeploymentCancelledAnnotation] = "true" })
	waitRC(t, ns, "web-1", "cancel dropped", func(rc *corev1.ReplicationController) bool {
		return !deployment.IsCancelled(rc) && deployment.Phase(rc) == dcv1.DeploymentPhaseComplete
	})
	waitEvent(t, ns, "web-1", "FailedCancellation")
}

func TestPausedDeploymentConfigOnlyReportsStatus(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) { dc.Spec.Paused = true }))
	waitCondition(t, ns, "web", dcv1.DeploymentProgressing, corev1.ConditionUnknown, dcv1.PausedConfigReason)
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { dc.Spec.Replicas = 5 })
	waitFor(t, "observedGeneration to follow", func(ctx context.Context) (bool, string, error) {
		dc := getDC(t, ns, "web")
		return dc.Status.ObservedGeneration == dc.Generation, fmt.Sprintf("%d/%d", dc.Status.ObservedGeneration, dc.Generation), nil
	})
	rcs := &corev1.ReplicationControllerList{}
	if err := cluster.client.List(context.Background(), rcs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(rcs.Items) != 0 || getDC(t, ns, "web").Status.LatestVersion != 0 {
		t.Errorf("a paused DeploymentConfig deployed: %d RCs", len(rcs.Items))
	}

	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { dc.Spec.Paused = false })
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhasePending)
}

func TestRevisionHistoryLimit(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) { dc.Spec.RevisionHistoryLimit = ptr(int32(3)) }))
	for v := 1; v <= 10; v++ {
		runDeployer(t, ns, fmt.Sprintf("web-%d", v), corev1.PodSucceeded)
		if v < 10 {
			updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
				dc.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("registry.example.com/web:%d", v+1)
			})
		}
	}
	waitFor(t, "history pruned to 3 older deployments", func(ctx context.Context) (bool, string, error) {
		rcs := &corev1.ReplicationControllerList{}
		if err := cluster.client.List(ctx, rcs, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var names []string
		for _, rc := range rcs.Items {
			names = append(names, rc.Name)
		}
		want := []string{"web-10", "web-7", "web-8", "web-9"}
		return reflect.DeepEqual(names, want), fmt.Sprintf("%v", names), nil
	})
}

func TestRCLabelEditedAwayIsReleasedAndReadopted(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)

	patchRC(t, ns, "web-1", func(rc *corev1.ReplicationController) { delete(rc.Labels, dcv1.DeploymentConfigLabel) })
	waitRC(t, ns, "web-1", "released", func(rc *corev1.ReplicationController) bool { return metav1.GetControllerOf(rc) == nil })

	patchRC(t, ns, "web-1", func(rc *corev1.ReplicationController) { rc.Labels[dcv1.DeploymentConfigLabel] = "web" })
	uid := getDC(t, ns, "web").UID
	waitRC(t, ns, "web-1", "re-adopted", func(rc *corev1.ReplicationController) bool {
		ref := metav1.GetControllerOf(rc)
		return ref != nil && ref.UID == uid
	})

	patchRC(t, ns, "web-1", func(rc *corev1.ReplicationController) { rc.Labels[dcv1.DeploymentConfigLabel] = "other" })
	waitRC(t, ns, "web-1", "released after relabel", func(rc *corev1.ReplicationController) bool { return metav1.GetControllerOf(rc) == nil })
}

func TestHandScaledRCIsReverted(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	waitRC(t, ns, "web-1", "3 replicas", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 3 })
	patchRC(t, ns, "web-1", func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr(int32(7)) })
	waitRC(t, ns, "web-1", "reverted to 3", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 3 })
	waitEvent(t, ns, "web", "ReplicationControllerScaled")
}

func TestIgnoreAnnotationCreatesNoDeployerPod(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Annotations = map[string]string{dcv1.DeployerPodIgnoreAnnotation: "true"}
	}))
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhaseNew)
	// A second DeploymentConfig in the namespace, without the annotation,
	// proves the controller has synced the namespace since.
	mustCreate(t, newDC(ns, "other", nil))
	waitPod(t, ns, "other-1-deploy")
	pods := &corev1.PodList{}
	if err := cluster.client.List(context.Background(), pods, client.InNamespace(ns), client.MatchingLabels{dcv1.DeployerPodForDeploymentLabel: "web-1"}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("ignored DeploymentConfig got deployer pod %s", pods.Items[0].Name)
	}
	if rc, _ := getRC(context.Background(), ns, "web-1"); deployment.Phase(rc) != dcv1.DeploymentPhaseNew {
		t.Errorf("ignored deployment in phase %s, want New", deployment.Phase(rc))
	}
}

func TestTestDeploymentConfigScalesToZeroWhenDone(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) { dc.Spec.Test = true }))
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhasePending)
	// The deployer scales a test deployment up while it runs.
	patchRC(t, ns, "web-1", func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr(int32(3)) })
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	waitRC(t, ns, "web-1", "0 replicas", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 0 })
}

func TestEmptyImageIsNeverDeployed(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) { dc.Spec.Template.Spec.Containers[0].Image = " " }))
	mustCreate(t, newDC(ns, "marker", nil))
	waitPhase(t, ns, "marker-1", dcv1.DeploymentPhasePending)
	waitFor(t, "the empty-image DC to be synced", func(ctx context.Context) (bool, string, error) {
		dc := getDC(t, ns, "web")
		return dc.Status.ObservedGeneration == dc.Generation, "", nil
	})
	if _, err := getRC(context.Background(), ns, "web-1"); err == nil {
		t.Error("an RC was created for a template with an empty image")
	}
	if v := getDC(t, ns, "web").Status.LatestVersion; v != 0 {
		t.Errorf("latestVersion = %d, want 0", v)
	}
}

func ptr[T any](v T) *T { return &v }

func TestDeployerPodOfAnotherDeploymentFailsIt(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1-deploy", Labels: map[string]string{dcv1.DeployerPodForDeploymentLabel: "someone-else"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}},
	})
	mustCreate(t, newDC(ns, "web", nil))
	rc := waitPhase(t, ns, "web-1", dcv1.DeploymentPhaseFailed)
	if got := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; got != `a pod named "web-1-deploy" already exists and belongs to another deployment` {
		t.Errorf("status reason = %q", got)
	}
}

func TestDeployerPodThatCannotBeCreatedTimesOut(t *testing.T) {
	ns := newNamespace(t)
	// Deployer resources whose request exceeds their limit make every
	// deployer pod invalid.
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy.RollingParams = &dcv1.RollingDeploymentStrategyParams{TimeoutSeconds: ptr(int64(2))}
		dc.Spec.Strategy.Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}
	}))
	rc := waitPhase(t, ns, "web-1", dcv1.DeploymentPhaseFailed)
	if got := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; got != "unable to create deployer pod" {
		t.Errorf("status reason = %q", got)
	}
	waitEvent(t, ns, "web-1", "FailedCreate")
}

func TestDeployerAccountIsCreatedInTheNamespace(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	waitPod(t, ns, "web-1-deploy")
	ctx := context.Background()
	key := func(name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }
	if err := cluster.client.Get(ctx, key("deployer"), &corev1.ServiceAccount{}); err != nil {
		t.Errorf("deployer service account: %v", err)
	}
	role := &rbacv1.Role{}
	if err := cluster.client.Get(ctx, key("deployconfig-deployer"), role); err != nil {
		t.Fatalf("deployer role: %v", err)
	}
	// The controller could create it only because it holds every rule it
	// grants (RBAC refuses escalation): this checks config/rbac too.
	if !reflect.DeepEqual(role.Rules, controller.DeployerRules()) {
		t.Errorf("deployer role rules %+v, want %+v", role.Rules, controller.DeployerRules())
	}
	binding := &rbacv1.RoleBinding{}
	if err := cluster.client.Get(ctx, key("deployconfig-deployer"), binding); err != nil || binding.Subjects[0].Name != "deployer" {
		t.Errorf("deployer role binding: %v %+v", err, binding.Subjects)
	}
}

func TestStaleDeployerRoleIsUpdated(t *testing.T) {
	ns := newNamespace(t)
	// A Role as an older controller made it, with fewer rules.
	mustCreate(t, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployconfig-deployer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
	})
	mustCreate(t, newDC(ns, "web", nil))
	waitFor(t, "the deployer role to carry today's rules", func(ctx context.Context) (bool, string, error) {
		role := &rbacv1.Role{}
		if err := cluster.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "deployconfig-deployer"}, role); err != nil {
			return false, "", err
		}
		return reflect.DeepEqual(role.Rules, controller.DeployerRules()), fmt.Sprintf("%+v", role.Rules), nil
	})
}
