package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// watchReplicas records rc's replica counts from now until Stop.
func watchReplicas(t *testing.T, ns, rc string) *rollout.History[int32] {
	t.Helper()
	w, err := clientset().CoreV1().ReplicationControllers(ns).Watch(t.Context(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", rc).String(),
	})
	if err != nil {
		t.Fatalf("watch %s: %v", rc, err)
	}
	h := rollout.Record(t.Context(), w, func(obj runtime.Object) (int32, bool) {
		got, ok := obj.(*corev1.ReplicationController)
		if !ok {
			return 0, false
		}
		return deployment.Replicas(got), true
	})
	t.Cleanup(func() { h.Stop() })
	return h
}

// TestInControllerCanaryRestartedInItsFinalRoll kills dc-local serve, and
// with it the leading dc-controller, while a promoted canary rolls to
// 100%: the new leader goes on rolling from where the replicas are. It
// never goes back to step 1, never scales the new version down, needs no
// second promote, and the log keeps every line written before the kill.
func TestInControllerCanaryRestartedInItsFinalRoll(t *testing.T) {
	ns := dcNamespace(t)
	dc := inController(newDC("web", 5, canary(setWeight(20), pauseStep(0))))
	dc.Spec.MinReadySeconds = 8
	createDC(t, ns, dc)
	requireComplete(t, ns, "web", 1)
	rollNext(t, ns, 2)
	waitPausedAt(t, ns, "web-2", 2)
	history := watchReplicas(t, ns, "web-2")
	mustDC(t, ns, "rollout", "promote", "web")
	waitFor(t, "web-2 to be part-way through its final roll, its log written", rolloutTimeout, func(ctx context.Context) (bool, error) {
		rc, err := clientset().CoreV1().ReplicationControllers(ns).Get(ctx, "web-2", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		n := deployment.Replicas(rc)
		return deployment.ProgressOf(rc).Stage == deployment.StageFinalRoll && n >= 2 && n < 5 &&
			strings.Contains(deployment.Log(rc), "Promoted"), nil
	})

	killServer(t)

	requireComplete(t, ns, "web", 2)
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 5})
	counts := history.Stop()
	for i := 1; i < len(counts); i++ {
		if counts[i] < counts[i-1] {
			t.Errorf("web-2 was scaled down on the way: replicas %v", counts)
			break
		}
	}
	log := deployerLog(t, ns, "web")
	assertInOrder(t, log,
		"--> Step 1 of 2: setWeight 20%",
		"--> Step 2 of 2: paused until 'kubectl dc rollout promote web'",
		"    Promoted",
		"--> Resumed by a new dc-controller leader",
		"--> Resuming the final roll past step 2 of 2",
		"--> Success")
	if n := strings.Count(log, "--> Step 1 of 2"); n != 1 {
		t.Errorf("the log has step 1 %d times:\n%s", n, log)
	}
	rc := getRC(t, ns, "web-2")
	if p := deployment.ProgressOf(rc); len(p.Consumed) != 1 {
		t.Errorf("the rollout consumed %d promote requests, want 1: %s", len(p.Consumed), p.Encode())
	}
}
