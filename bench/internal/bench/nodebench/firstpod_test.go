package nodebench

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// The DC's selector picks the new RC's application pods, not its
// deployer pod.
func TestDCPodSelector(t *testing.T) {
	sel, err := labels.Parse(dcPodSelector("web-dc-3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		labels labels.Set
		want   bool
	}{
		{"application pod", labels.Set{dcv1.DeploymentSelectorLabel: "web-dc-3", dcv1.DeploymentConfigSelectorLabel: "web-dc"}, true},
		{"deployer pod", labels.Set{dcv1.DeploymentSelectorLabel: "web-dc-3", dcv1.DeployerPodForDeploymentLabel: "web-dc-3"}, false},
		{"old RC's pod", labels.Set{dcv1.DeploymentSelectorLabel: "web-dc-2"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sel.Matches(tc.labels); got != tc.want {
				t.Errorf("matches = %v, want %v", got, tc.want)
			}
		})
	}
}

// A pod is new when its version label is none of the old pods'.
func TestIsNewPod(t *testing.T) {
	old := map[string]bool{"abc": true}
	pod := func(hash string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{deploymentVersionLabel: hash}}}
	}
	for _, tc := range []struct {
		name string
		t    watch.EventType
		pod  *corev1.Pod
		want bool
	}{
		{"new ReplicaSet's pod", watch.Added, pod("def"), true},
		{"new pod's update", watch.Modified, pod("def"), true},
		{"old pod's update", watch.Modified, pod("abc"), false},
		{"new pod deleted", watch.Deleted, pod("def"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isNewPod(tc.t, tc.pod, old, deploymentVersionLabel); got != tc.want {
				t.Errorf("isNewPod = %v, want %v", got, tc.want)
			}
		})
	}
}
