package controller

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestSettleable(t *testing.T) {
	dc := testDC(nil)
	cases := []struct {
		name   string
		phases []dcv1.DeploymentPhase // versions 1..n
		edit   func(rcs []*corev1.ReplicationController)
		want   []string
	}{
		{"only the active deployment", phases("C"), nil, nil},
		{"older complete and failed deployments settle", phases("CFC"), nil, []string{"web-1", "web-2"}},
		{"no complete deployment, nothing to settle under", phases("FF"), nil, nil},
		{"a failed deployment newer than the active one stays", phases("CCF"), nil, []string{"web-1"}},
		{"a running deployment stays", phases("RC"), nil, nil},
		{"still scaled up", phases("CC"), func(rcs []*corev1.ReplicationController) { rcs[0].Spec.Replicas = ptr(int32(1)) }, nil},
		{"its status still counts pods", phases("CC"), func(rcs []*corev1.ReplicationController) { rcs[0].Status.Replicas = 2 }, nil},
		{"its status predates its scale-down", phases("CC"), func(rcs []*corev1.ReplicationController) { rcs[0].Generation = 3 }, nil},
		{"already labelled", phases("CCC"), func(rcs []*corev1.ReplicationController) {
			rcs[0].Labels[dcv1.DeploymentSettledLabel] = settledValue
		}, []string{"web-2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var rcs []*corev1.ReplicationController
			for i, p := range tc.phases {
				rc := rcOf(t, dc, int64(i+1), p, 0)
				rc.Generation, rc.Status.ObservedGeneration = 2, 2
				rcs = append(rcs, rc)
			}
			rcs[len(rcs)-1].Spec.Replicas = ptr(int32(4))
			if tc.edit != nil {
				tc.edit(rcs)
			}
			var got []string
			for _, rc := range settleable(rcs) {
				got = append(got, rc.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("settleable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWithSettled(t *testing.T) {
	dc := testDC(nil)
	rc := func(v int64) *corev1.ReplicationController { return rcOf(t, dc, v, dcv1.DeploymentPhaseComplete, 0) }
	cached := []*corev1.ReplicationController{rc(3), rc(4)}
	// The cache may still hold web-3 after its label was written.
	got := withSettled(cached, []*corev1.ReplicationController{rc(1), rc(2), rc(3)})
	var names []string
	for _, rc := range got {
		names = append(names, rc.Name)
	}
	if want := []string{"web-1", "web-2", "web-3", "web-4"}; !slices.Equal(names, want) {
		t.Errorf("withSettled = %v, want %v", names, want)
	}
	if got[2] != cached[0] {
		t.Errorf("web-3 is the settled list's copy; want the cached one")
	}
}
