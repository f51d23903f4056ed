package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// envFromOf is the ConfigMap a pod template's first container reads.
func envFromOf(t *corev1.PodTemplateSpec) string {
	return t.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name
}

// setConfigMapValue changes one key of a ConfigMap as a user would.
func setConfigMapValue(t *testing.T, ns, name, key, value string) {
	t.Helper()
	cms := clientset().CoreV1().ConfigMaps(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data[key] = value
		_, err = cms.Update(t.Context(), cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating configmap %s: %v", name, err)
	}
}

// requirePodsRead fails the test unless every pod of a deployment reads
// the ConfigMap copy.
func requirePodsRead(t *testing.T, ns, rc, copyName string) {
	t.Helper()
	pods, err := podsOf(t.Context(), ns, rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) == 0 {
		t.Fatalf("deployment %s has no pods", rc)
	}
	for _, p := range pods {
		if got := p.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name; got != copyName {
			t.Fatalf("pod %s reads %s, want %s", p.Name, got, copyName)
		}
	}
}

// TestConfigSnapshots on kwok, with the cluster's own garbage collector and
// the CLI a user runs: a ConfigMap change rolls out, `rollout undo` brings
// the old copy back (and its pods read it), history and its config diff
// show what changed, and the copies no deployment uses any more are
// garbage collected once history cleanup deletes their deployments.
func TestConfigSnapshots(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	cms := clientset().CoreV1().ConfigMaps(ns)
	_, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"GREETING": "hello"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dc := newDC("web", 2, rolling(intstr.FromInt32(1), intstr.FromInt32(0)))
	dc.Spec.ConfigSnapshots = &dcv1.ConfigSnapshots{}
	dc.Spec.RevisionHistoryLimit = new(int32(1))
	dc.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}
	createDC(t, ns, dc)
	first := requireComplete(t, ns, "web", 1)
	hello := envFromOf(first.Spec.Template)
	requirePodsRead(t, ns, first.Name, hello)

	setConfigMapValue(t, ns, "app", "GREETING", "bonjour")
	second := requireComplete(t, ns, "web", 2)
	bonjour := envFromOf(second.Spec.Template)
	if bonjour == hello {
		t.Fatalf("revision 2 reads the same copy %s", hello)
	}
	requirePodsRead(t, ns, second.Name, bonjour)
	if out := mustDC(t, ns, "rollout", "history", "web"); !strings.Contains(out, "config data change (ConfigMap/app)") {
		t.Fatalf("history does not show the cause:\n%s", out)
	}
	if out := mustDC(t, ns, "rollout", "history", "web", "--revision", "2", "--config-diff", "1"); !strings.Contains(out, `~ GREETING: "hello" -> "bonjour"`) {
		t.Fatalf("config diff:\n%s", out)
	}

	r := kubectlDC(t, ns, "rollout", "undo", "web")
	if r.code != 0 || !strings.Contains(r.stderr, "pinned to the snapshots of revision 1") {
		t.Fatalf("undo: %s", r)
	}
	third := requireComplete(t, ns, "web", 3)
	if envFromOf(third.Spec.Template) != hello {
		t.Fatalf("the rollback reads %s, want revision 1's %s", envFromOf(third.Spec.Template), hello)
	}
	requirePodsRead(t, ns, third.Name, hello)

	// Follow the data again: the next rollout reads "ciao"; history cleanup
	// (revisionHistoryLimit 1) deletes web-1 and web-2, and with web-2 the
	// last owner of the "bonjour" copy, which the garbage collector removes.
	// The "hello" copy stays: web-3 uses it.
	setConfigMapValue(t, ns, "app", "GREETING", "ciao")
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { delete(dc.Annotations, dcv1.ConfigSnapshotPinAnnotation) })
	requireComplete(t, ns, "web", 4)
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, rolloutTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := cms.Get(ctx, bonjour, metav1.GetOptions{})
		return apierrors.IsNotFound(err), client404(err)
	})
	if err != nil {
		t.Fatalf("the unused copy %s was not garbage collected: %v", bonjour, err)
	}
	if _, err := cms.Get(t.Context(), hello, metav1.GetOptions{}); err != nil {
		t.Fatalf("the copy web-3 uses: %v", err)
	}
}

// client404 keeps a poll going on NotFound and stops it on other errors.
func client404(err error) error {
	if err == nil || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// TestConfigSnapshotFailedRolloutFallsBack: the post hook reads the
// deployment's own snapshot (its pod is made from the RC's template) and
// fails the rollout of a "broken" greeting after the new pods came up; the
// automatic fall-back then scales revision 1 back up, whose pods read
// revision 1's copy while the ConfigMap still says "broken".
func TestConfigSnapshotFailedRolloutFallsBack(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	cms := clientset().CoreV1().ConfigMaps(ns)
	_, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"GREETING": "hello"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dc := newDC("web", 2, rolling(intstr.FromInt32(1), intstr.FromInt32(0)))
	dc.Spec.ConfigSnapshots = &dcv1.ConfigSnapshots{}
	dc.Spec.Strategy.RollingParams.Post = shellHook(dcv1.LifecycleHookFailurePolicyAbort, `echo "greeting $GREETING"; test "$GREETING" != broken`)
	dc.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}
	createDC(t, ns, dc)
	first := requireComplete(t, ns, "web", 1)
	hello := envFromOf(first.Spec.Template)

	setConfigMapValue(t, ns, "app", "GREETING", "broken")
	second := requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	if envFromOf(second.Spec.Template) == hello {
		t.Fatalf("revision 2 reads revision 1's copy %s", hello)
	}
	if log := deployerLog(t, ns, "web"); !strings.Contains(log, "greeting broken") {
		t.Fatalf("the post hook did not read revision 2's snapshot; deployer log:\n%s", log)
	}
	waitScaled(t, ns, map[string]int32{"web-1": 2, "web-2": 0})
	requirePodsRead(t, ns, "web-1", hello)
}
