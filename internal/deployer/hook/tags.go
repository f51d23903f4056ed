package hook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/registry"
)

// dockerImageKind is the only kind of tagImages target: there are no
// ImageStreams to tag into on plain Kubernetes.
const dockerImageKind = "DockerImage"

// Pauses between the attempts of a tagImages hook whose failurePolicy is
// Retry: short at first, since a registry hiccup passes quickly, and never
// so long that a fixed registry waits minutes for the next attempt.
const (
	tagRetryFirstPause = time.Second
	tagRetryMaxPause   = 30 * time.Second
)

// tagImages runs a tagImages hook: it gives each target tag the image, by
// digest, that the named container of the deployment runs. The registry
// calls share what is left of the rollout's active deadline. With
// failurePolicy Retry a failed attempt is repeated for the tags not yet
// done, after a growing pause, until that deadline.
func (e *Executor) tagImages(ctx context.Context, hook *dcv1.LifecycleHook, rc *corev1.ReplicationController, hookType string) error {
	if _, err := ActiveDeadline(e.deadline, e.now()); err != nil {
		return err
	}
	tctx, cancel := context.WithDeadline(ctx, e.deadline)
	defer cancel()
	pending := hook.TagImages
	pause := tagRetryFirstPause
	for retry := 1; ; retry++ {
		var err error
		if pending, err = e.tagEach(tctx, pending, rc, hookType); err == nil {
			return nil
		}
		if hook.FailurePolicy != dcv1.LifecycleHookFailurePolicyRetry || ctx.Err() != nil {
			fmt.Fprintf(e.out, "--> %s: Failed\n", hookType)
			return err
		}
		if !e.now().Add(pause).Before(e.deadline) {
			fmt.Fprintf(e.out, "--> %s: Failed\n", hookType)
			return fmt.Errorf("%w (no time left to retry before the rollout's active deadline %s)", err, e.deadline.UTC().Format(time.RFC3339))
		}
		// The failure is shown here because a retry that succeeds never
		// returns it.
		fmt.Fprintf(e.out, "--> %s: Failed: %v\n", hookType, err)
		fmt.Fprintf(e.out, "--> %s: Retrying tagImages (retry #%d)\n", hookType, retry)
		if err := e.pause(tctx, pause); err != nil {
			return fmt.Errorf("wait to retry the %s hook's tagImages: %w", hookType, err)
		}
		pause = min(2*pause, tagRetryMaxPause)
	}
}

// tagEach tags in turn and returns the tags not done: the one that failed
// and those after it. The keychain is read for every attempt, so that a
// pull secret fixed during retries is used.
func (e *Executor) tagEach(ctx context.Context, tags []dcv1.TagImageHook, rc *corev1.ReplicationController, hookType string) ([]dcv1.TagImageHook, error) {
	if rc.Spec.Template == nil {
		return tags, fmt.Errorf("replicationcontroller %s/%s has no pod template", rc.Namespace, rc.Name)
	}
	kc, err := registry.KeychainForPod(ctx, registry.ClientsetReader(e.client), rc.Namespace, &rc.Spec.Template.Spec)
	if err != nil {
		return tags, fmt.Errorf("read the image pull secrets of replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	for i, t := range tags {
		tagged, err := e.tagOne(ctx, t, rc, kc)
		if err != nil {
			return tags[i:], err
		}
		fmt.Fprintf(e.out, "--> %s: Tagged %s as %s\n", hookType, tagged.Source, tagged.Target)
	}
	return nil, nil
}

// tagOne copies the image of one template container to its target tag.
func (e *Executor) tagOne(ctx context.Context, t dcv1.TagImageHook, rc *corev1.ReplicationController, kc authn.Keychain) (registry.Tagged, error) {
	if t.To.Kind != dockerImageKind {
		// The API server refuses other kinds; an RC made before that rule
		// existed could still carry one.
		return registry.Tagged{}, fmt.Errorf("cannot tag into %s %q: only DockerImage targets are supported", t.To.Kind, t.To.Name)
	}
	if t.ContainerName == "" {
		return registry.Tagged{}, errors.New("a tagImages entry names no container")
	}
	c, err := baseContainer(&rc.Spec.Template.Spec, t.ContainerName)
	if err != nil {
		return registry.Tagged{}, fmt.Errorf("replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	tagged, err := registry.TagImage(ctx, c.Image, t.To.Name, kc, e.registryOpts)
	if err != nil {
		return registry.Tagged{}, fmt.Errorf("tag the image of container %q as %s: %w", t.ContainerName, t.To.Name, err)
	}
	return tagged, nil
}

// sleep waits for d unless the context ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
