package controller

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

func TestForeignReason(t *testing.T) {
	dc := withVersion(testDC(nil), 2)
	cases := []struct {
		name   string
		change func(*metav1.ObjectMeta)
		want   string // a part of the reason; "" when the RC is the DC's
	}{
		{"ours", func(*metav1.ObjectMeta) {}, ""},
		{"orphan with our label: adopted from the cache", func(m *metav1.ObjectMeta) { m.OwnerReferences = nil }, ""},
		{"another owner", func(m *metav1.ObjectMeta) {
			m.OwnerReferences[0].UID, m.OwnerReferences[0].Kind, m.OwnerReferences[0].Name = "other", "ReplicaSet", "x"
		}, `controlled by ReplicaSet "x"`},
		{"a DeploymentConfig of the same name deleted before", func(m *metav1.ObjectMeta) { m.OwnerReferences[0].UID = "old" },
			`controlled by DeploymentConfig "web"`},
		{"no label", func(m *metav1.ObjectMeta) { m.OwnerReferences, m.Labels = nil, nil },
			"has no deployconfig.io/deployment-config.name=web label"},
		{"label of another DeploymentConfig", func(m *metav1.ObjectMeta) {
			m.OwnerReferences, m.Labels = nil, map[string]string{dcv1.DeploymentConfigLabel: "api"}
		}, "has no deployconfig.io/deployment-config.name=web label"},
		{"ours but without our label: it stays out of the cache", func(m *metav1.ObjectMeta) { m.Labels = nil },
			"has no deployconfig.io/deployment-config.name=web label"},
		// RC metadata is input: the name says the version, whatever the
		// annotation a user wrote.
		{"ours with a version annotation written by hand", func(m *metav1.ObjectMeta) { m.Annotations[dcv1.DeploymentVersionAnnotation] = "x" }, ""},
		{"left over from OpenShift", func(m *metav1.ObjectMeta) {
			m.OwnerReferences, m.Labels = nil, map[string]string{"openshift.io/deployment-config.name": "web"}
		}, "left over by OpenShift"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := rcOf(t, dc, 2, dcv1.DeploymentPhaseNew, 0)
			tc.change(&rc.ObjectMeta)
			got := foreignReason(dc, rc)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("foreignReason = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestScaleNeverOverwritesANewerWrite: the fall-back works from cached
// copies of the RCs; when an RC changed since (a deployer or a user scaled
// it), the write must fail rather than overwrite the newer replicas.
func TestScaleNeverOverwritesANewerWrite(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	dc := withVersion(testDC(nil), 2)
	active := rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 4)
	failed := rcOf(t, dc, 2, dcv1.DeploymentPhaseFailed, 2)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(active, failed).Build()
	ctx := context.Background()
	cached := func(name string) *corev1.ReplicationController {
		rc := &corev1.ReplicationController{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "ns", Name: name}, rc); err != nil {
			t.Fatal(err)
		}
		return rc
	}
	staleActive, staleFailed := cached("web-1"), cached("web-2")

	// A newer write the cache has not seen: web-2 scaled to 3.
	newer := cached("web-2")
	newer.Spec.Replicas = ptr(int32(3))
	if err := c.Update(ctx, newer); err != nil {
		t.Fatal(err)
	}

	r := &DeploymentConfigReconciler{Client: c, Recorder: events.NewFakeRecorder(10)}
	err = r.scaleDeployments(ctx, dc, []*corev1.ReplicationController{staleActive, staleFailed})
	if !errors.Is(err, errCacheBehind) {
		t.Errorf("scaleDeployments = %v, want a conflict reported as errCacheBehind", err)
	}
	if got := deployment.Replicas(cached("web-2")); got != 3 {
		t.Errorf("web-2 has %d replicas: the stale copy overwrote the newer write of 3", got)
	}

	// From an up-to-date copy the fall-back goes through.
	if err := r.scaleDeployments(ctx, dc, []*corev1.ReplicationController{cached("web-1"), cached("web-2")}); err != nil {
		t.Fatal(err)
	}
	if got := deployment.Replicas(cached("web-2")); got != 0 {
		t.Errorf("web-2 has %d replicas after the fall-back, want 0", got)
	}
}
