package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestForeignReason(t *testing.T) {
	dc := testDC(nil)
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
