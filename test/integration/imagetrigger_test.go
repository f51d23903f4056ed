package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	hookexec "github.com/deployconfig/deployconfig/internal/deployer/hook"
	"github.com/deployconfig/deployconfig/internal/imagetrigger"
	"github.com/deployconfig/deployconfig/internal/registry"
	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
)

// imagePollInterval is the image-trigger controller's poll interval in
// these tests (suite_test.go passes it to the manager).
const imagePollInterval = 2 * time.Second

// rolloutSlack is how long a rollout may take to start once a lookup has
// seen a new digest: a sync of each controller and a few API writes, on a
// busy machine.
const rolloutSlack = 3 * time.Second

// imageDC returns a DeploymentConfig whose containers (web, plus any extra
// ones) run ref, with a ConfigChange trigger and an ImageChange trigger
// from ref into the containers named by triggered.
func imageDC(ns, name, ref string, automatic bool, extra []string, triggered ...string) *dcv1.DeploymentConfig {
	return newDC(ns, name, func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = ref
		for _, c := range extra {
			dc.Spec.Template.Spec.Containers = append(dc.Spec.Template.Spec.Containers, corev1.Container{Name: c, Image: ref})
		}
		dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{
			{Type: dcv1.DeploymentTriggerOnConfigChange},
			imageTrigger(ref, automatic, triggered...),
		}
	})
}

func imageTrigger(ref string, automatic bool, containers ...string) dcv1.DeploymentTriggerPolicy {
	return dcv1.DeploymentTriggerPolicy{Type: dcv1.DeploymentTriggerOnImageChange, ImageChangeParams: &dcv1.DeploymentTriggerImageChangeParams{
		Automatic: automatic, ContainerNames: containers, From: dcv1.ImageTriggerSource{Kind: "DockerImage", Name: ref},
	}}
}

// byDigest returns the reference the trigger writes for a digest of a
// repository of the registry.
func byDigest(reg *registrytest.Server, repo string, digest v1.Hash) string {
	return reg.Ref(repo + "@" + digest.String())
}

// containerImages returns the images of the RC's containers by name.
func containerImages(rc *corev1.ReplicationController) map[string]string {
	out := map[string]string{}
	for _, c := range rc.Spec.Template.Spec.Containers {
		out[c.Name] = c.Image
	}
	return out
}

// closedAddress returns a loopback address nobody listens on.
func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// pullSecret returns a kubernetes.io/dockerconfigjson secret for a registry.
func pullSecret(ns, name, host, user, password string) *corev1.Secret {
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"username": user, "password": password}}})
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
	}
}

// listRCs returns the DeploymentConfig's RCs.
func listRCs(ctx context.Context, ns, dc string) ([]corev1.ReplicationController, error) {
	list := &corev1.ReplicationControllerList{}
	err := cluster.client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{dcv1.DeploymentConfigLabel: dc})
	return list.Items, err
}

func TestImageTriggerRollsOutEachNewDigest(t *testing.T) {
	ns := newNamespace(t)
	reg := registrytest.New(t)
	ref := reg.Ref("app:prod")
	first := reg.Push(t, "app:prod")
	mustCreate(t, imageDC(ns, "web", ref, true, nil, "web"))

	rc := waitRC(t, ns, "web-1", "created", func(*corev1.ReplicationController) bool { return true })
	if got, want := containerImages(rc)["web"], byDigest(reg, "app", first); got != want {
		t.Fatalf("web-1 runs %s, want %s", got, want)
	}
	dc := getDC(t, ns, "web")
	if d := dc.Status.Details; d == nil || d.Message != "image change" || len(d.Causes) != 1 ||
		d.Causes[0].ImageTrigger == nil || d.Causes[0].ImageTrigger.From.Name != byDigest(reg, "app", first) {
		t.Errorf("details %+v, want an image change naming %s", d, byDigest(reg, "app", first))
	}
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)

	second := reg.Push(t, "app:prod")
	pushed := time.Now()
	rc = waitRC(t, ns, "web-2", "created", func(*corev1.ReplicationController) bool { return true })
	if took := time.Since(pushed); took > imagePollInterval+rolloutSlack {
		t.Errorf("the rollout of the new digest started %v after the push, want within the poll interval of %v", took, imagePollInterval)
	}
	if got, want := containerImages(rc)["web"], byDigest(reg, "app", second); got != want {
		t.Errorf("web-2 runs %s, want %s", got, want)
	}
	if got := getDC(t, ns, "web").Spec.Triggers[1].ImageChangeParams.LastTriggeredImage; got != byDigest(reg, "app", second) {
		t.Errorf("lastTriggeredImage %s", got)
	}
}

func TestImageTriggerFeedsTwoContainers(t *testing.T) {
	ns := newNamespace(t)
	reg := registrytest.New(t)
	ref := reg.Ref("app:1")
	digest := reg.Push(t, "app:1")
	mustCreate(t, imageDC(ns, "web", ref, true, []string{"sidecar", "untouched"}, "web", "sidecar"))

	rc := waitRC(t, ns, "web-1", "created", func(*corev1.ReplicationController) bool { return true })
	images := containerImages(rc)
	want := byDigest(reg, "app", digest)
	if images["web"] != want || images["sidecar"] != want || images["untouched"] != ref {
		t.Errorf("web-1 images %v; want web and sidecar at %s, untouched at %s", images, want, ref)
	}
}

func TestImageTriggerManualResolvesOnlyWhenAsked(t *testing.T) {
	ns := newNamespace(t)
	reg := registrytest.New(t)
	ref := reg.Ref("app:1")
	digest := reg.Push(t, "app:1")
	pushHeads := reg.ManifestHeads() // the push itself checks the manifest
	// Manual rollouts only: one image trigger with automatic: false.
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = ref
		dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{imageTrigger(ref, false, "web")}
	}))

	// A marker on another registry shows that the controller has seen the
	// manual trigger and polled for more than a full interval since.
	marker := registrytest.New(t)
	marker.Push(t, "marker:1")
	mustCreate(t, imageDC(ns, "marker", marker.Ref("marker:1"), true, nil, "web"))
	waitRC(t, ns, "marker-1", "created", func(*corev1.ReplicationController) bool { return true })
	start := marker.ManifestHeads()
	waitFor(t, "two more polls of the marker's tag", func(context.Context) (bool, string, error) {
		return marker.ManifestHeads() >= start+2, fmt.Sprintf("%d HEADs", marker.ManifestHeads()), nil
	})

	if n := reg.ManifestHeads() - pushHeads; n != 0 {
		t.Errorf("the manual trigger's registry got %d manifest HEADs before anyone asked", n)
	}
	dc := getDC(t, ns, "web")
	if img := dc.Spec.Template.Spec.Containers[0].Image; img != ref || dc.Status.LatestVersion != 0 {
		t.Fatalf("before asking: image %s, latestVersion %d", img, dc.Status.LatestVersion)
	}

	// Ask as `kubectl dc rollout latest` does: request, wait for the answer,
	// then bump latestVersion.
	token := time.Now().UTC().Format(time.RFC3339Nano)
	requestResolve(t, ns, "web", token)
	answered := waitAnswer(t, ns, "web", token)
	if msg := answered.Annotations[dcv1.ImageTriggerErrorAnnotation]; msg != "" {
		t.Fatalf("the request failed: %s", msg)
	}
	want := byDigest(reg, "app", digest)
	if img := answered.Spec.Template.Spec.Containers[0].Image; img != want {
		t.Errorf("after the answer the image is %s, want %s", img, want)
	}
	bumpLatestVersion(t, ns, "web")
	rc := waitRC(t, ns, "web-1", "created", func(*corev1.ReplicationController) bool { return true })
	if got := containerImages(rc)["web"]; got != want {
		t.Errorf("web-1 runs %s, want %s", got, want)
	}
}

// requestResolve asks the image-trigger controller to resolve the
// DeploymentConfig's triggers now.
func requestResolve(t *testing.T, ns, name, token string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, dcv1.ImageTriggerRequestAnnotation, token)
	dc := &dcv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := cluster.client.Patch(context.Background(), dc, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("request resolution of %s: %v", name, err)
	}
}

// waitAnswer waits until the controller has answered the request.
func waitAnswer(t *testing.T, ns, name, token string) *dcv1.DeploymentConfig {
	t.Helper()
	var dc *dcv1.DeploymentConfig
	waitFor(t, "the answer to request "+token, func(context.Context) (bool, string, error) {
		dc = getDC(t, ns, name)
		_, pending := dc.Annotations[dcv1.ImageTriggerRequestAnnotation]
		return !pending && dc.Annotations[dcv1.ImageTriggerResponseAnnotation] == token, fmt.Sprintf("%v", dc.Annotations), nil
	})
	return dc
}

// bumpLatestVersion starts a manual rollout as `kubectl dc rollout latest`
// does. (Its cause is left out: the CRD's enum of cause types lacks Manual.)
func bumpLatestVersion(t *testing.T, ns, name string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dc := getDC(t, ns, name)
		dc.Status.LatestVersion++
		dc.Status.Details = &dcv1.DeploymentDetails{Message: "manual change"}
		return cluster.client.Status().Update(context.Background(), dc)
	})
	if err != nil {
		t.Fatalf("bump latestVersion of %s: %v", name, err)
	}
}

func TestImageTriggerUnreachableRegistryReportsAndNeverRollsOut(t *testing.T) {
	ns := newNamespace(t)
	// Never reachable: the first rollout waits.
	mustCreate(t, imageDC(ns, "never", closedAddress(t)+"/app:1", true, nil, "web"))
	waitEvent(t, ns, "never", imagetrigger.ReasonImageResolveFailed)
	waitCondition(t, ns, "never", dcv1.ImageTriggerFailure, corev1.ConditionTrue, imagetrigger.ReasonImageResolveFailed)

	// Reachable, then gone: the last good image stays and nothing rolls out.
	reg := registrytest.New(t)
	digest := reg.Push(t, "app:1")
	mustCreate(t, imageDC(ns, "gone", reg.Ref("app:1"), true, nil, "web"))
	runDeployer(t, ns, "gone-1", corev1.PodSucceeded)
	reg.Close()
	waitEvent(t, ns, "gone", imagetrigger.ReasonImageResolveFailed)
	waitCondition(t, ns, "gone", dcv1.ImageTriggerFailure, corev1.ConditionTrue, imagetrigger.ReasonImageResolveFailed)

	// A request fails too, saying why, and writes nothing.
	requestResolve(t, ns, "gone", "t1")
	answered := waitAnswer(t, ns, "gone", "t1")
	if msg := answered.Annotations[dcv1.ImageTriggerErrorAnnotation]; !strings.Contains(msg, reg.Host) {
		t.Errorf("error annotation %q does not name the registry", msg)
	}
	if img := answered.Spec.Template.Spec.Containers[0].Image; img != byDigest(reg, "app", digest) {
		t.Errorf("image %s after failures, want the last good %s", img, byDigest(reg, "app", digest))
	}
	for _, name := range []string{"never", "gone"} {
		dc := getDC(t, ns, name)
		want := int64(0)
		if name == "gone" {
			want = 1
		}
		if dc.Status.LatestVersion != want {
			t.Errorf("%s: latestVersion %d, want %d", name, dc.Status.LatestVersion, want)
		}
	}
}

func TestImageTriggerCredentials(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	reg := registrytest.New(t, registrytest.WithBasicAuth("puller", "right"))
	digest := reg.Push(t, "private:1")
	ref := reg.Ref("private:1")
	want := byDigest(reg, "private", digest)

	// Wrong password in the template's pull secret.
	mustCreate(t, pullSecret(ns, "pull", reg.Host, "puller", "wrong"))
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = ref
		dc.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
		dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{{Type: dcv1.DeploymentTriggerOnConfigChange}, imageTrigger(ref, true, "web")}
	}))
	waitEvent(t, ns, "web", imagetrigger.ReasonImageResolveFailed)
	waitCondition(t, ns, "web", dcv1.ImageTriggerFailure, corev1.ConditionTrue, imagetrigger.ReasonImageResolveFailed)
	if dc := getDC(t, ns, "web"); dc.Status.LatestVersion != 0 {
		t.Fatalf("rolled out with bad credentials: latestVersion %d", dc.Status.LatestVersion)
	}

	// The secret is fixed: the next poll resolves, rolls out, and clears
	// the condition.
	if err := cluster.client.Update(ctx, pullSecret(ns, "pull", reg.Host, "puller", "right")); err != nil {
		t.Fatalf("fix the secret: %v", err)
	}
	rc := waitRC(t, ns, "web-1", "created", func(*corev1.ReplicationController) bool { return true })
	if got := containerImages(rc)["web"]; got != want {
		t.Errorf("web-1 runs %s, want %s", got, want)
	}
	waitCondition(t, ns, "web", dcv1.ImageTriggerFailure, corev1.ConditionFalse, imagetrigger.ReasonImagesResolved)

	// Credentials from the template's service account work as well.
	mustCreate(t, pullSecret(ns, "sa-pull", reg.Host, "puller", "right"))
	mustCreate(t, &corev1.ServiceAccount{
		ObjectMeta:       metav1.ObjectMeta{Namespace: ns, Name: "app"},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "sa-pull"}},
	})
	mustCreate(t, newDC(ns, "via-sa", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = ref
		dc.Spec.Template.Spec.ServiceAccountName = "app"
		dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{{Type: dcv1.DeploymentTriggerOnConfigChange}, imageTrigger(ref, true, "web")}
	}))
	rc = waitRC(t, ns, "via-sa-1", "created", func(*corev1.ReplicationController) bool { return true })
	if got := containerImages(rc)["web"]; got != want {
		t.Errorf("via-sa-1 runs %s, want %s", got, want)
	}
}

func TestImageTriggerNeverDeploysAnEmptyImage(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	reg := registrytest.New(t)
	digest := reg.Push(t, "app:1")
	want := byDigest(reg, "app", digest)
	mustCreate(t, imageDC(ns, "web", reg.Ref("app:1"), true, nil, "web"))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)

	empty := []byte(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":""}]`)
	for i := range 50 {
		dc := &dcv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
		if err := cluster.client.Patch(ctx, dc, client.RawPatch(types.JSONPatchType, empty)); err != nil {
			t.Fatalf("patch %d: %v", i, err)
		}
	}
	waitFor(t, "the trigger to write the image back", func(context.Context) (bool, string, error) {
		dc := getDC(t, ns, "web")
		img := dc.Spec.Template.Spec.Containers[0].Image
		return img == want && dc.Status.ObservedGeneration == dc.Generation, "image " + img, nil
	})
	rcs, err := listRCs(ctx, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs {
		for name, img := range containerImages(&rc) {
			if strings.TrimSpace(img) == "" {
				t.Errorf("%s has container %s with an empty image", rc.Name, name)
			}
		}
	}
	if len(rcs) != 1 {
		t.Errorf("%d deployments, want 1: writing the same image back is no change", len(rcs))
	}
}

func TestImageTagImagesCopiesWithPullSecrets(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	reg := registrytest.New(t, registrytest.WithBasicAuth("pusher", "secret"))
	digest := reg.Push(t, "app:1")
	mustCreate(t, pullSecret(ns, "push", reg.Host, "pusher", "secret"))

	// As dc-deploy does for a tagImages hook: the keychain of the
	// deployment's pod template, read through a clientset.
	cs, err := kubernetes.NewForConfig(cluster.cfg)
	if err != nil {
		t.Fatal(err)
	}
	spec := &corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "push"}}}
	kc, err := registry.KeychainForPod(ctx, registry.ClientsetReader(cs), ns, spec)
	if err != nil {
		t.Fatalf("keychain: %v", err)
	}
	tagged, err := registry.TagImage(ctx, byDigest(reg, "app", digest), reg.Ref("app:released"), kc, nil)
	if err != nil {
		t.Fatalf("TagImage: %v", err)
	}
	if tagged.Source.DigestStr() != digest.String() || tagged.Target.String() != reg.Ref("app:released") {
		t.Errorf("tagged %s as %s", tagged.Source, tagged.Target)
	}
	if got := reg.Digest(t, "app:released"); got != digest {
		t.Errorf("app:released points at %s, want %s", got, digest)
	}
}

// TestTagImagesHookAsTheDeployer runs a tagImages hook as dc-deploy does,
// under the deployer Role the controller creates in the namespace: the
// Role lets it read the pull secret named by the template's service
// account, and the tag is made with it.
func TestTagImagesHookAsTheDeployer(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t, time.Minute)
	reg := registrytest.New(t, registrytest.WithBasicAuth("pusher", "secret"))
	digest := reg.Push(t, "app:1")
	mustCreate(t, pullSecret(ns, "push", reg.Host, "pusher", "secret"))
	mustCreate(t, &corev1.ServiceAccount{
		ObjectMeta:       metav1.ObjectMeta{Namespace: ns, Name: "app"},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "push"}},
	})
	// The first DeploymentConfig of the namespace makes the controller
	// create the deployer's account and Role.
	mustCreate(t, newDC(ns, "web", nil))
	waitPod(t, ns, "web-1-deploy")

	cfg := rest.CopyConfig(cluster.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ns + ":" + controller.DeployerServiceAccount,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	deployer, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer learns of a new RoleBinding through a watch.
	waitFor(t, "the deployer to read the pull secret", func(ctx context.Context) (bool, string, error) {
		_, err := deployer.CoreV1().Secrets(ns).Get(ctx, "push", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})

	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1"},
		Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			ServiceAccountName: "app",
			Containers:         []corev1.Container{{Name: "web", Image: byDigest(reg, "app", digest)}},
		}}},
	}
	post := &dcv1.LifecycleHook{
		FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort,
		TagImages:     []dcv1.TagImageHook{{ContainerName: "web", To: corev1.ObjectReference{Kind: "DockerImage", Name: reg.Ref("app:released")}}},
	}
	var out strings.Builder
	e := hookexec.NewExecutor(deployer, &out, &dcv1.DeploymentStrategy{}, time.Now().Add(time.Minute))
	if err := e.Run(ctx, post, rc, hookexec.Post); err != nil {
		t.Fatalf("tagImages hook: %v\noutput:\n%s", err, out.String())
	}
	if want := "--> post: Tagged " + byDigest(reg, "app", digest) + " as " + reg.Ref("app:released") + "\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	if got := reg.Digest(t, "app:released"); got != digest {
		t.Errorf("app:released points at %s, want %s", got, digest)
	}
}
