package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// createDC creates a minimal DeploymentConfig with kubectl and returns it as
// the API server stored it.
func createDC(t *testing.T, ns, name string) *dcv1.DeploymentConfig {
	t.Helper()
	ctx := testContext(t, time.Minute)
	if _, stderr, err := kubectlRun(ctx, fmt.Sprintf(minimalDC, name, ""), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v: %s", err, stderr)
	}
	dc := &dcv1.DeploymentConfig{}
	if err := cluster.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, dc); err != nil {
		t.Fatalf("get dc: %v", err)
	}
	return dc
}

func TestKubectlScaleUsesTheScaleSubresource(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t, time.Minute)
	dc := createDC(t, ns, "web")

	// The controller publishes the scale selector in status; do what it does.
	if err := setStatus(ctx, dc, func(s *dcv1.DeploymentConfigStatus) { s.Selector = dc.ScaleSelector() }); err != nil {
		t.Fatalf("update status: %v", err)
	}

	if _, stderr, err := kubectlRun(ctx, "", "scale", "-n", ns, "dc/web", "--replicas=5"); err != nil {
		t.Fatalf("kubectl scale: %v: %s", err, stderr)
	}
	if err := cluster.client.Get(ctx, client.ObjectKeyFromObject(dc), dc); err != nil {
		t.Fatalf("get dc: %v", err)
	}
	if dc.Spec.Replicas != 5 {
		t.Errorf("spec.replicas = %d after kubectl scale, want 5", dc.Spec.Replicas)
	}

	scale := &autoscalingv1.Scale{}
	if err := cluster.client.SubResource("scale").Get(ctx, dc, scale); err != nil {
		t.Fatalf("get scale: %v", err)
	}
	want := "app=web,deploymentconfig=web"
	if scale.Spec.Replicas != 5 || scale.Status.Selector != want {
		t.Errorf("scale = {replicas %d, selector %q}, want {5, %q}", scale.Spec.Replicas, scale.Status.Selector, want)
	}
}

func TestStatusCountersNeverDecrease(t *testing.T) {
	ns := newNamespace(t)
	dc := createDC(t, ns, "web")
	cases := []struct {
		field string
		set   func(*dcv1.DeploymentConfigStatus, int64)
	}{
		{"status.latestVersion", func(s *dcv1.DeploymentConfigStatus, v int64) { s.LatestVersion = v }},
		{"status.observedGeneration", func(s *dcv1.DeploymentConfigStatus, v int64) { s.ObservedGeneration = v }},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			ctx := testContext(t, time.Minute)
			if err := setStatus(ctx, dc, func(s *dcv1.DeploymentConfigStatus) { tc.set(s, 3) }); err != nil {
				t.Fatalf("raise %s to 3: %v", tc.field, err)
			}
			err := setStatus(ctx, dc, func(s *dcv1.DeploymentConfigStatus) { tc.set(s, 2) })
			if err == nil {
				t.Fatalf("%s went from 3 to 2", tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "must not decrease") {
				t.Errorf("error does not name %s: %v", tc.field, err)
			}
		})
	}
}

// setStatus reads dc afresh, changes its status and writes it through the
// status subresource, again when the controller wrote the status in
// between (a conflict says nothing of the validation under test).
func setStatus(ctx context.Context, dc *dcv1.DeploymentConfig, change func(*dcv1.DeploymentConfigStatus)) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := cluster.client.Get(ctx, client.ObjectKeyFromObject(dc), dc); err != nil {
			return err
		}
		change(&dc.Status)
		return cluster.client.Status().Update(ctx, dc)
	})
}
