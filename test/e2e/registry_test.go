package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/imagetrigger"
	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
)

// These tests run registries of their own on loopback, which dc-controller
// and the deployers (in-process in dc-local serve, on this host) reach as
// a real cluster reaches a registry.

// imageLookupSlack is how long, beyond one poll interval (jitter only
// shortens it), a push may take to show up in the DeploymentConfig's spec:
// the lookup itself and a sync of the image-trigger controller, on a
// machine that runs the rest of the suite at the same time.
const imageLookupSlack = 15 * time.Second

// registryDC is a DeploymentConfig of replicas pause containers (app, plus
// one per name in extra) that all start at the tagged ref, with a
// ConfigChange trigger and an ImageChange trigger from ref into the
// containers named by triggered.
func registryDC(name, ref string, replicas int32, automatic bool, extra []string, triggered ...string) *dcv1.DeploymentConfig {
	dc := newDC(name, replicas, rolling(intstr.FromInt32(1), intstr.FromInt32(0)))
	spec := &dc.Spec.Template.Spec
	spec.Containers[0].Image = ref
	for _, c := range extra {
		spec.Containers = append(spec.Containers, corev1.Container{Name: c, Image: ref})
	}
	*spec = restricted(*spec)
	dc.Spec.Triggers = append(dc.Spec.Triggers, registryTrigger(ref, automatic, triggered...))
	return dc
}

// registryTrigger is an ImageChange trigger from a registry tag.
func registryTrigger(ref string, automatic bool, containers ...string) dcv1.DeploymentTriggerPolicy {
	return dcv1.DeploymentTriggerPolicy{
		Type: dcv1.DeploymentTriggerOnImageChange,
		ImageChangeParams: &dcv1.DeploymentTriggerImageChangeParams{
			Automatic:      automatic,
			ContainerNames: containers,
			From:           dcv1.ImageTriggerSource{Kind: "DockerImage", Name: ref},
		},
	}
}

// pinned is the reference by digest the trigger writes for an image of a
// repository on the registry: repo@sha256:….
func pinned(reg *registrytest.Server, repo string, digest v1.Hash) string {
	return reg.Ref(repo + "@" + digest.String())
}

// imagesOf returns the images of an RC's containers by container name.
func imagesOf(rc *corev1.ReplicationController) map[string]string {
	out := map[string]string{}
	for _, c := range rc.Spec.Template.Spec.Containers {
		out[c.Name] = c.Image
	}
	return out
}

// requireImageCause fails the test unless the DeploymentConfig's last
// rollout was an image change naming image.
func requireImageCause(t *testing.T, dc *dcv1.DeploymentConfig, image string) {
	t.Helper()
	d := dc.Status.Details
	if d == nil || d.Message != "image change" || len(d.Causes) != 1 || d.Causes[0].Type != dcv1.DeploymentTriggerOnImageChange ||
		d.Causes[0].ImageTrigger == nil || d.Causes[0].ImageTrigger.From.Name != image {
		t.Errorf("deploymentconfig %s: details %s, want an image change naming %s", dc.Name, describeDetails(d), image)
	}
}

// describeDetails prints rollout details for a failure message.
func describeDetails(d *dcv1.DeploymentDetails) string {
	if d == nil {
		return "<none>"
	}
	out, _ := json.Marshal(d)
	return string(out)
}

// unusedAddress returns a loopback address nobody listens on: a registry
// that cannot be reached.
func unusedAddress(t *testing.T) string {
	t.Helper()
	// A socket bound but never listening keeps the port for the test (a
	// port merely found free can be taken by another test's registry
	// meanwhile), and connections to it are refused.
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("reserving a loopback port: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("reserving a loopback port: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("reserving a loopback port: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}

// createPullSecret creates (or, when it exists, replaces) a
// kubernetes.io/dockerconfigjson secret with a user and password for a
// registry host, as `kubectl create secret docker-registry` does.
func createPullSecret(t *testing.T, ns, name, host, user, password string) {
	t.Helper()
	config, err := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"username": user, "password": password}}})
	if err != nil {
		t.Fatalf("encoding the docker config of %s: %v", name, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: config},
	}
	secrets := clientset().CoreV1().Secrets(ns)
	if _, err := secrets.Get(t.Context(), name, metav1.GetOptions{}); err == nil {
		_, err = secrets.Update(t.Context(), secret, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("updating secret %s: %v", name, err)
		}
		return
	}
	if _, err := secrets.Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating secret %s: %v", name, err)
	}
}

// waitImageSpec waits, for at most one poll interval and imageLookupSlack,
// until the image trigger has written image into container app of the
// DeploymentConfig.
func waitImageSpec(t *testing.T, ns, name, image string) {
	t.Helper()
	var got string
	err := poll(t, imagePollInterval+imageLookupSlack, func(ctx context.Context) (bool, error) {
		dc := &dcv1.DeploymentConfig{}
		if err := dcs(t).Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dc); err != nil {
			return false, err
		}
		got = dc.Spec.Template.Spec.Containers[0].Image
		return got == image, nil
	})
	if err != nil {
		t.Fatalf("deploymentconfig %s: the pushed image %s did not reach the template within one poll interval (%s, with %s slack): %v; it runs %s",
			name, image, imagePollInterval, imageLookupSlack, err, got)
	}
}

// waitImageFailure waits until the DeploymentConfig reports a failing
// image trigger: a Warning event ImageResolveFailed and the condition
// ImageTriggerFailure=True whose message contains want. It returns the
// condition's message.
func waitImageFailure(t *testing.T, ns, name, want string) string {
	t.Helper()
	dc := waitDC(t, ns, name, "condition ImageTriggerFailure=True", func(dc *dcv1.DeploymentConfig) bool {
		return hasCondition(dc, dcv1.ImageTriggerFailure, corev1.ConditionTrue, imagetrigger.ReasonImageResolveFailed)
	})
	var message string
	for _, c := range dc.Status.Conditions {
		if c.Type == dcv1.ImageTriggerFailure {
			message = c.Message
		}
	}
	if !strings.Contains(message, want) {
		t.Errorf("deploymentconfig %s: ImageTriggerFailure says %q, want it to name %q", name, message, want)
	}
	var seen []string
	err := poll(t, rolloutTimeout, func(ctx context.Context) (bool, error) {
		events, err := clientset().CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "DeploymentConfig" && e.InvolvedObject.Name == name &&
				e.Type == corev1.EventTypeWarning && e.Reason == imagetrigger.ReasonImageResolveFailed {
				return true, nil
			}
			seen = append(seen, e.InvolvedObject.Name+": "+e.Reason)
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for a Warning event %s on deploymentconfig %s: %v; saw %v", imagetrigger.ReasonImageResolveFailed, name, err, seen)
	}
	return message
}

// rcsOf lists the ReplicationControllers of a DeploymentConfig.
func rcsOf(t *testing.T, ns, dc string) []corev1.ReplicationController {
	t.Helper()
	list, err := clientset().CoreV1().ReplicationControllers(ns).List(t.Context(), metav1.ListOptions{
		LabelSelector: dcv1.DeploymentConfigLabel + "=" + dc,
	})
	if err != nil {
		t.Fatalf("listing the replicationcontrollers of %s: %v", dc, err)
	}
	return list.Items
}

// requireNoRollout fails the test unless the DeploymentConfig is still at
// rollout #version, with that many RCs.
func requireNoRollout(t *testing.T, ns, name string, version int64) {
	t.Helper()
	if dc := getDC(t, ns, name); dc.Status.LatestVersion != version {
		t.Fatalf("deploymentconfig %s is at rollout #%d, want #%d (details %s)", name, dc.Status.LatestVersion, version, describeDetails(dc.Status.Details))
	}
	if rcs := rcsOf(t, ns, name); len(rcs) != int(version) {
		t.Fatalf("deploymentconfig %s has %d replicationcontrollers, want %d", name, len(rcs), version)
	}
}

// pollMarker is a DeploymentConfig with an automatic trigger on a registry
// of its own: counting the lookups of its tag tells how long dc-controller
// has been polling.
type pollMarker struct {
	reg *registrytest.Server
}

// newPollMarker creates a marker DeploymentConfig in ns.
func newPollMarker(t *testing.T, ns string) *pollMarker {
	t.Helper()
	m := &pollMarker{reg: registrytest.New(t)}
	m.reg.Push(t, "marker:1")
	createDC(t, ns, registryDC("marker", m.reg.Ref("marker:1"), 1, true, nil, "app"))
	return m
}

// waitTwoPolls waits until dc-controller has looked up the marker's tag
// twice more: by then it has had a full poll interval to act on every
// trigger it watches.
func (m *pollMarker) waitTwoPolls(t *testing.T) {
	t.Helper()
	start := m.reg.ManifestHeads()
	err := poll(t, rolloutTimeout, func(context.Context) (bool, error) {
		return m.reg.ManifestHeads() >= start+2, nil
	})
	if err != nil {
		t.Fatalf("waiting for two lookups of the marker's tag: %v; %d since", err, m.reg.ManifestHeads()-start)
	}
}

// A push to the tag an automatic trigger watches rolls out: the first
// rollout waits for the tag's digest and runs it by digest; a second push
// to the same tag starts a new rollout within one poll interval, with the
// new digest, as an image change.
func TestRegistryTriggerRollsOutEachPush(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	reg := registrytest.New(t)
	ref := reg.Ref("app:prod")
	first := reg.Push(t, "app:prod")
	createDC(t, ns, registryDC("web", ref, 2, true, nil, "app"))

	rc := requireComplete(t, ns, "web", 1)
	if got, want := imagesOf(rc)["app"], pinned(reg, "app", first); got != want {
		t.Fatalf("web-1 runs %s, want %s", got, want)
	}
	requireImageCause(t, getDC(t, ns, "web"), pinned(reg, "app", first))
	assertInOrder(t, deployerLog(t, ns, "web"), "--> Scaling web-1 to 2", "--> Success")
	waitScaled(t, ns, map[string]int32{"web-1": 2})

	second := reg.Push(t, "app:prod")
	waitImageSpec(t, ns, "web", pinned(reg, "app", second))
	rc = requireComplete(t, ns, "web", 2)
	if got, want := imagesOf(rc)["app"], pinned(reg, "app", second); got != want {
		t.Errorf("web-2 runs %s, want %s", got, want)
	}
	dc := getDC(t, ns, "web")
	requireImageCause(t, dc, pinned(reg, "app", second))
	if got := dc.Spec.Triggers[1].ImageChangeParams.LastTriggeredImage; got != pinned(reg, "app", second) {
		t.Errorf("lastTriggeredImage %s, want %s", got, pinned(reg, "app", second))
	}
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Scaling up web-2 from 0 to 2, scaling down web-1 from 2 to 0", "--> Success")
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 2})
	assertInOrder(t, mustDC(t, ns, "rollout", "history", "web"),
		"1", "Complete", "image change", "2", "Complete", "image change")
}

// One trigger feeds two containers: both run the pushed digest, and a
// container the trigger does not name keeps its image.
func TestRegistryTriggerFeedsTwoContainers(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	reg := registrytest.New(t)
	ref := reg.Ref("app:1")
	first := reg.Push(t, "app:1")
	createDC(t, ns, registryDC("web", ref, 1, true, []string{"sidecar", "untouched"}, "app", "sidecar"))

	rc := requireComplete(t, ns, "web", 1)
	want := pinned(reg, "app", first)
	if images := imagesOf(rc); images["app"] != want || images["sidecar"] != want || images["untouched"] != ref {
		t.Errorf("web-1 images %v; want app and sidecar at %s, untouched at %s", images, want, ref)
	}

	second := reg.Push(t, "app:1")
	waitImageSpec(t, ns, "web", pinned(reg, "app", second))
	rc = requireComplete(t, ns, "web", 2)
	want = pinned(reg, "app", second)
	if images := imagesOf(rc); images["app"] != want || images["sidecar"] != want || images["untouched"] != ref {
		t.Errorf("web-2 images %v; want app and sidecar at %s, untouched at %s", images, want, ref)
	}
}

// A trigger with automatic: false never looks its tag up on its own:
// nothing rolls out, whatever is pushed, until `kubectl dc rollout latest`
// resolves the tag and rolls the digest out.
func TestRegistryManualTriggerWaitsForRolloutLatest(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	reg := registrytest.New(t)
	ref := reg.Ref("app:prod")
	first := reg.Push(t, "app:prod")
	headsAfterPush := reg.ManifestHeads() // the push checks the manifest itself
	dc := registryDC("web", ref, 1, false, nil, "app")
	dc.Spec.Triggers = dc.Spec.Triggers[1:] // only the manual image trigger
	createDC(t, ns, dc)
	marker := newPollMarker(t, ns)

	marker.waitTwoPolls(t)
	requireNoRollout(t, ns, "web", 0)
	if n := reg.ManifestHeads() - headsAfterPush; n != 0 {
		t.Errorf("the manual trigger's registry got %d manifest lookups before anyone asked", n)
	}

	if out := mustDC(t, ns, "rollout", "latest", "web"); !strings.Contains(out, "deploymentconfig.apps.deployconfig.io/web rolled out") {
		t.Errorf("kubectl dc rollout latest web said %q", out)
	}
	rc := requireComplete(t, ns, "web", 1)
	if got, want := imagesOf(rc)["app"], pinned(reg, "app", first); got != want {
		t.Fatalf("web-1 runs %s, want %s", got, want)
	}

	// A new digest on the tag is not rolled out on its own...
	second := reg.Push(t, "app:prod")
	marker.waitTwoPolls(t)
	requireNoRollout(t, ns, "web", 1)
	if img := getDC(t, ns, "web").Spec.Template.Spec.Containers[0].Image; img != pinned(reg, "app", first) {
		t.Errorf("before rollout latest the template runs %s, want %s", img, pinned(reg, "app", first))
	}

	// ...but by the next rollout latest.
	mustDC(t, ns, "rollout", "latest", "web")
	rc = requireComplete(t, ns, "web", 2)
	if got, want := imagesOf(rc)["app"], pinned(reg, "app", second); got != want {
		t.Errorf("web-2 runs %s, want %s", got, want)
	}
	assertInOrder(t, mustDC(t, ns, "rollout", "history", "web"), "1", "Complete", "manual change", "2", "Complete", "manual change")
}

// A registry that cannot be reached gives the DeploymentConfig a Warning
// event and the ImageTriggerFailure condition, and rolls nothing out: not
// the first rollout, nor a new one once a registry that worked goes away
// (the last good image stays).
func TestRegistryUnreachableReportsAndNeverRollsOut(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	never := unusedAddress(t)
	createDC(t, ns, registryDC("never", never+"/app:1", 1, true, nil, "app"))

	reg := registrytest.New(t)
	digest := reg.Push(t, "app:1")
	createDC(t, ns, registryDC("gone", reg.Ref("app:1"), 1, true, nil, "app"))
	requireComplete(t, ns, "gone", 1)
	reg.Close()
	marker := newPollMarker(t, ns)

	waitImageFailure(t, ns, "never", never)
	waitImageFailure(t, ns, "gone", reg.Host)
	marker.waitTwoPolls(t)
	requireNoRollout(t, ns, "never", 0)
	requireNoRollout(t, ns, "gone", 1)
	if img := getDC(t, ns, "gone").Spec.Template.Spec.Containers[0].Image; img != pinned(reg, "app", digest) {
		t.Errorf("gone runs %s after the registry went away, want the last good %s", img, pinned(reg, "app", digest))
	}
	if img := getDC(t, ns, "never").Spec.Template.Spec.Containers[0].Image; img != never+"/app:1" {
		t.Errorf("never's template was changed to %s", img)
	}
}

// A pull secret with the wrong password gives the event and the condition
// and no rollout; once the secret is right, the next lookup rolls the tag
// out and clears the condition.
func TestRegistryBadCredentialsReportAndNeverRollOut(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	reg := registrytest.New(t, registrytest.WithBasicAuth("puller", "right"))
	ref := reg.Ref("private:1")
	digest := reg.Push(t, "private:1")
	createPullSecret(t, ns, "pull", reg.Host, "puller", "wrong")
	dc := registryDC("web", ref, 1, true, nil, "app")
	dc.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
	createDC(t, ns, dc)
	marker := newPollMarker(t, ns)

	waitImageFailure(t, ns, "web", reg.Host)
	marker.waitTwoPolls(t)
	requireNoRollout(t, ns, "web", 0)

	createPullSecret(t, ns, "pull", reg.Host, "puller", "right")
	rc := requireComplete(t, ns, "web", 1)
	if got, want := imagesOf(rc)["app"], pinned(reg, "private", digest); got != want {
		t.Errorf("web-1 runs %s, want %s", got, want)
	}
	waitDC(t, ns, "web", "condition ImageTriggerFailure=False", func(dc *dcv1.DeploymentConfig) bool {
		return hasCondition(dc, dcv1.ImageTriggerFailure, corev1.ConditionFalse, imagetrigger.ReasonImagesResolved)
	})
}

// A tagImages post hook copies the image the rollout runs, by digest, to
// the target tag in the registry, with the template's pull secret, and
// says so in the deployer's log.
func TestRegistryTagImagesHookTagsTheDeployedImage(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	reg := registrytest.New(t, registrytest.WithBasicAuth("pusher", "secret"))
	digest := reg.Push(t, "app:candidate")
	createPullSecret(t, ns, "push", reg.Host, "pusher", "secret")
	dc := registryDC("web", reg.Ref("app:candidate"), 1, true, nil, "app")
	dc.Spec.Strategy = recreate(nil, nil, &dcv1.LifecycleHook{
		FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort,
		TagImages: []dcv1.TagImageHook{{
			ContainerName: "app",
			To:            corev1.ObjectReference{Kind: "DockerImage", Name: reg.Ref("app:deployed")},
		}},
	})
	dc.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "push"}}
	createDC(t, ns, dc)

	requireComplete(t, ns, "web", 1)
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Scaling web-1 to 1",
		"--> post: Tagged "+pinned(reg, "app", digest)+" as "+reg.Ref("app:deployed"),
		"--> Success")
	tag, err := name.NewTag(reg.Ref("app:deployed"))
	if err != nil {
		t.Fatalf("parsing %s: %v", reg.Ref("app:deployed"), err)
	}
	desc, err := remote.Head(tag, remote.WithAuth(reg.Auth()), remote.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("looking up %s: %v", tag, err)
	}
	if desc.Digest != digest {
		t.Errorf("%s points at %s, want %s", tag, desc.Digest, digest)
	}
}

// Patches that blank a triggered container's image never make a rollout
// of an empty image (the namespace's invariant checker watches every RC):
// the trigger writes the digest back, which is no change.
func TestRegistryEmptyImagePatchesNeverRollOutAnEmptyImage(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	reg := registrytest.New(t)
	digest := reg.Push(t, "app:1")
	want := pinned(reg, "app", digest)
	createDC(t, ns, registryDC("web", reg.Ref("app:1"), 1, true, nil, "app"))
	requireComplete(t, ns, "web", 1)

	empty := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":""}]`))
	for i := range 50 {
		dc := &dcv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
		if err := dcs(t).Patch(t.Context(), dc, empty); err != nil {
			t.Fatalf("patch %d: %v", i+1, err)
		}
	}
	dc := waitDC(t, ns, "web", "the trigger to write the image back, observed", func(dc *dcv1.DeploymentConfig) bool {
		return dc.Spec.Template.Spec.Containers[0].Image == want && dc.Status.ObservedGeneration >= dc.Generation
	})
	if dc.Status.LatestVersion != 1 {
		t.Errorf("latestVersion %d after the patches, want 1: writing the same image back is no change", dc.Status.LatestVersion)
	}
	for _, rc := range rcsOf(t, ns, "web") {
		for container, image := range imagesOf(&rc) {
			if strings.TrimSpace(image) == "" {
				t.Errorf("%s has container %s with an empty image", rc.Name, container)
			}
		}
	}
	t.Logf("web after 50 empty-image patches: generation %d, rollout #%d", dc.Generation, dc.Status.LatestVersion)
}

// A tagImages hook whose target is not a tag of a registry is refused when
// applied, with the field and the reason.
func TestRegistryTagImagesRefusesANonRegistryTarget(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	for _, tc := range []struct{ kind, name, want string }{
		{"ImageStreamTag", "web:deployed", "spec.strategy.recreateParams.post.tagImages[0].to.kind: Invalid value: must be DockerImage"},
		{"DockerImage", "Not A Reference!", "spec.strategy.recreateParams.post.tagImages[0].to.name: Invalid value: must be a tagged image reference"},
	} {
		manifest := fmt.Sprintf(`apiVersion: apps.deployconfig.io/v1
kind: DeploymentConfig
metadata:
  name: web
spec:
  replicas: 1
  selector: {app: web}
  strategy:
    type: Recreate
    recreateParams:
      post:
        failurePolicy: Abort
        tagImages:
        - containerName: web
          to: {kind: %s, name: %q}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: %s
`, tc.kind, tc.name, pauseImage)
		r := run(t, manifest, "kubectl", "apply", "-n", ns, "-f", "-")
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("kubectl apply of a tagImages hook to %s %q: %s\nwant a refusal with %q", tc.kind, tc.name, r, tc.want)
		}
	}
}
