package bench

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// TestAtOnce: the most deployments at once counts those of the change's
// version from their first sighting to their end, once each, and nothing
// of other versions.
func TestAtOnce(t *testing.T) {
	rc := func(name string, version int64, phase dcv1.DeploymentPhase) *corev1.ReplicationController {
		return &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			dcv1.DeploymentVersionAnnotation: strconv.FormatInt(version, 10), dcv1.DeploymentPhaseAnnotation: string(phase)}}}
	}
	a := newAtOnce()
	a.expect(2)
	for _, r := range []*corev1.ReplicationController{
		rc("a-1", 1, dcv1.DeploymentPhaseRunning),
		rc("a-2", 2, dcv1.DeploymentPhaseNew),
		rc("b-2", 2, dcv1.DeploymentPhaseNew),
		rc("a-2", 2, dcv1.DeploymentPhaseRunning),
		rc("a-2", 2, dcv1.DeploymentPhaseComplete),
		// An update seen after its end does not bring it back.
		rc("a-2", 2, dcv1.DeploymentPhaseComplete),
		rc("c-2", 2, dcv1.DeploymentPhasePending),
		rc("b-2", 2, dcv1.DeploymentPhaseFailed),
		rc("c-2", 2, dcv1.DeploymentPhaseComplete),
	} {
		a.observe(r)
	}
	if got := a.most(); got != 2 {
		t.Errorf("most at once %d, want 2", got)
	}
	if len(a.running) != 0 {
		t.Errorf("still running: %v", a.running)
	}
}
