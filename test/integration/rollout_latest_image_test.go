package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
)

// rolloutLatest runs `kubectl dc rollout latest NAME` in ns and fails the
// test unless it exits with code and its output contains want.
func rolloutLatest(t *testing.T, ns, name string, code int, want string) {
	t.Helper()
	ctx := testContext(t, time.Minute)
	got, stdout, stderr := kubectlDC(ctx, ns, "rollout", "latest", name)
	if got != code || !strings.Contains(stdout+stderr, want) {
		t.Fatalf("kubectl dc rollout latest %s: exit %d, want %d and %q in the output:\n%s%s", name, got, code, want, stdout, stderr)
	}
}

// waitImagePolls waits until the image-trigger controller has polled a
// marker DeploymentConfig's tag twice more: by then it has had a full poll
// interval to act on every trigger of the namespace.
func waitImagePolls(t *testing.T, ns string) {
	t.Helper()
	marker := registrytest.New(t)
	marker.Push(t, "marker:1")
	mustCreate(t, imageDC(ns, "marker", marker.Ref("marker:1"), true, nil, "web"))
	waitRC(t, ns, "marker-1", "created", func(*corev1.ReplicationController) bool { return true })
	start := marker.ManifestHeads()
	waitFor(t, "two more polls of the marker's tag", func(context.Context) (bool, string, error) {
		return marker.ManifestHeads() >= start+2, fmt.Sprintf("%d HEADs", marker.ManifestHeads()), nil
	})
}

// TestRolloutLatestDeploysManualImageTrigger drives a DeploymentConfig
// whose only trigger is an `automatic: false` registry tag: each digest
// pushed to the tag is deployed once `kubectl dc rollout latest` asks, and
// not before.
func TestRolloutLatestDeploysManualImageTrigger(t *testing.T) {
	ns := newNamespace(t)
	reg := registrytest.New(t)
	ref := reg.Ref("app:prod")
	first := reg.Push(t, "app:prod")
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = ref
		dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{imageTrigger(ref, false, "web")}
	}))

	rolloutLatest(t, ns, "web", 0, "deploymentconfig.apps.deployconfig.io/web rolled out")
	rc := waitRC(t, ns, "web-1", "created", func(*corev1.ReplicationController) bool { return true })
	if got, want := containerImages(rc)["web"], byDigest(reg, "app", first); got != want {
		t.Fatalf("web-1 runs %s, want %s", got, want)
	}
	dc := getDC(t, ns, "web")
	if d := dc.Status.Details; d == nil || len(d.Causes) != 1 || d.Causes[0].Type != dcv1.DeploymentTriggerManual {
		t.Errorf("details %+v, want a manual cause", d)
	}
	if token, pending := dc.Annotations[dcv1.ImageTriggerRequestAnnotation]; pending {
		t.Errorf("request %q left pending", token)
	}
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)

	// A new digest on the tag is not deployed on its own...
	second := reg.Push(t, "app:prod")
	waitImagePolls(t, ns)
	dc = getDC(t, ns, "web")
	if img := dc.Spec.Template.Spec.Containers[0].Image; img != byDigest(reg, "app", first) || dc.Status.LatestVersion != 1 {
		t.Fatalf("before rollout latest: image %s, latestVersion %d; want %s at 1", img, dc.Status.LatestVersion, byDigest(reg, "app", first))
	}

	// ...but by the next rollout latest.
	rolloutLatest(t, ns, "web", 0, "deploymentconfig.apps.deployconfig.io/web rolled out")
	rc = waitRC(t, ns, "web-2", "created", func(*corev1.ReplicationController) bool { return true })
	if got, want := containerImages(rc)["web"], byDigest(reg, "app", second); got != want {
		t.Errorf("web-2 runs %s, want %s", got, want)
	}
}

// TestRolloutLatestStartsOneRollout checks a DeploymentConfig with a
// ConfigChange trigger beside a manual image trigger: the images rollout
// latest asks for start a rollout through the ConfigChange trigger, or the
// command starts it, but never both.
func TestRolloutLatestStartsOneRollout(t *testing.T) {
	ns := newNamespace(t)
	reg := registrytest.New(t)
	ref := reg.Ref("app:1")
	digest := reg.Push(t, "app:1")
	// The ConfigChange trigger rolls out the template as written (the
	// tagged reference) at once: a manual trigger is not waited for.
	mustCreate(t, imageDC(ns, "web", ref, false, nil, "web"))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)

	rolloutLatest(t, ns, "web", 0, "deploymentconfig.apps.deployconfig.io/web rolled out")
	rc := waitRC(t, ns, "web-2", "created", func(*corev1.ReplicationController) bool { return true })
	if got, want := containerImages(rc)["web"], byDigest(reg, "app", digest); got != want {
		t.Errorf("web-2 runs %s, want %s", got, want)
	}
	waitFor(t, "the DC controller to observe the last change", func(context.Context) (bool, string, error) {
		dc := getDC(t, ns, "web")
		return dc.Status.ObservedGeneration == dc.Generation, fmt.Sprintf("generation %d, observed %d", dc.Generation, dc.Status.ObservedGeneration), nil
	})
	if v := getDC(t, ns, "web").Status.LatestVersion; v != 2 {
		t.Errorf("latestVersion %d, want 2: one rollout for one rollout latest", v)
	}
}

// TestRolloutLatestReportsWhyImagesCannotResolve checks that a tag the
// controller cannot resolve fails the command with the controller's
// reason, and starts nothing.
func TestRolloutLatestReportsWhyImagesCannotResolve(t *testing.T) {
	ns := newNamespace(t)
	// No pull secret for this registry.
	reg := registrytest.New(t, registrytest.WithBasicAuth("puller", "secret"))
	ref := reg.Ref("private:1")
	reg.Push(t, "private:1")
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = ref
		dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{imageTrigger(ref, false, "web")}
	}))

	rolloutLatest(t, ns, "web", 1, `cannot resolve the image triggers of deploymentconfig "web": `+ref)
	dc := getDC(t, ns, "web")
	if dc.Status.LatestVersion != 0 || dc.Spec.Template.Spec.Containers[0].Image != ref {
		t.Errorf("after a failed request: latestVersion %d, image %s", dc.Status.LatestVersion, dc.Spec.Template.Spec.Containers[0].Image)
	}
}
