package node

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// An ImageChange trigger on a tag of the cluster's registry rolls out each
// image pushed to it: the kubelet pulls the pinned digest and the pods run
// it. A tagImages post hook then copies the deployed image, by digest, to
// another tag, from the deployer pod.
func TestImageTriggerAndTagImagesAgainstTheRegistry(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	repo := realnode.RegistryHost + "/" + ns + "/app"
	first := pushApp(t, repo+":live", "1")

	dc := appDC(ns, "web", rollout.Options{Replicas: 2, Strategy: dcv1.DeploymentStrategyTypeRecreate, Hooks: map[string]*dcv1.LifecycleHook{
		"post": {
			FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort,
			TagImages: []dcv1.TagImageHook{{
				ContainerName: rollout.AppContainer,
				To:            corev1.ObjectReference{Kind: "DockerImage", Name: repo + ":deployed"},
			}},
		},
	}})
	dc.Spec.Template.Spec.Containers[0].Image = repo + ":live"
	dc.Spec.Triggers = append(dc.Spec.Triggers, dcv1.DeploymentTriggerPolicy{
		Type: dcv1.DeploymentTriggerOnImageChange,
		ImageChangeParams: &dcv1.DeploymentTriggerImageChangeParams{
			Automatic:      true,
			ContainerNames: []string{rollout.AppContainer},
			From:           dcv1.ImageTriggerSource{Kind: "DockerImage", Name: repo + ":live"},
		},
	})
	create(t, dc)
	requireComplete(t, ns, "web", 1)
	assertRunsDigest(t, ns, "web-1", repo, first)
	assertTagged(t, repo+":deployed", first)

	second := pushApp(t, repo+":live", "2")
	requireComplete(t, ns, "web", 2)
	assertRunsDigest(t, ns, "web-2", repo, second)
	assertTagged(t, repo+":deployed", second)
	assertInOrder(t, deployerLog(t, ns, "web"), fmt.Sprintf("--> post: Tagged %s@%s as %s:deployed", repo, second, repo), "--> Success")
}

// pushApp pushes the sample application's image, with VERSION set to
// version in its configuration (so each push has a digest of its own), to
// ref, and returns its digest.
func pushApp(t *testing.T, ref, version string) v1.Hash {
	t.Helper()
	img := suite.builtImages[imagebuild.SampleAppImageName]
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.Config.Env = append(cfg.Config.Env, "VERSION="+version)
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img, remote.WithTransport(suite.cluster.RegistryTransport()), remote.WithContext(t.Context())); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return digest
}

// assertRunsDigest checks that every running pod of rc runs repo@digest,
// as the kubelet reports it.
func assertRunsDigest(t *testing.T, ns, rc, repo string, digest v1.Hash) {
	t.Helper()
	pods := podsOf(t, ns, rc)
	if len(pods) == 0 {
		t.Fatalf("%s has no running pods", rc)
	}
	want := fmt.Sprintf("%s@%s", repo, digest)
	for _, pod := range pods {
		for _, status := range pod.Status.ContainerStatuses {
			if status.ImageID != want {
				t.Errorf("pod %s container %s runs image %s, want %s", pod.Name, status.Name, status.ImageID, want)
			}
		}
	}
}

// assertTagged checks that ref points at digest in the registry.
func assertTagged(t *testing.T, ref string, digest v1.Hash) {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(tag, remote.WithTransport(suite.cluster.RegistryTransport()), remote.WithContext(context.Background()))
	if err != nil {
		t.Fatalf("looking up %s: %v", ref, err)
	}
	if desc.Digest != digest {
		t.Errorf("%s points at %s, want %s", ref, desc.Digest, digest)
	}
}
