package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// dockerImageKind is the source kind of the ImageChange triggers that
// dc-controller resolves against a registry.
const dockerImageKind = "DockerImage"

// withdrawTimeout bounds the withdrawal of an unanswered request, which
// runs after the wait has already given up (or was interrupted).
const withdrawTimeout = 5 * time.Second

// resolveImageTriggers asks dc-controller to resolve every registry
// ImageChange trigger of the DeploymentConfig now and waits for the
// answer: the request annotation carries a token, and the controller
// writes the resolved images and the same token as its response in one
// update. A request the controller could not carry out is
// returned as an error with the controller's reason.
func (a *app) resolveImageTriggers(ctx context.Context, c *Clients, name string, timeout time.Duration) error {
	token := a.Clock.Now().UTC().Format(time.RFC3339Nano)
	if err := requestImages(ctx, c, name, token); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dc, err := waitImageAnswer(wctx, c, name, token)
	if err != nil {
		// Left in place, the request would be answered whenever the
		// controller comes back, and could start a rollout nobody waits for.
		withdrawImageRequest(ctx, c, name, token)
		return imageWaitError(ctx, wctx, name, timeout, err)
	}
	if msg := dc.Annotations[dcv1.ImageTriggerErrorAnnotation]; msg != "" {
		return fmt.Errorf("cannot resolve the image triggers of deploymentconfig %q: %s", name, msg)
	}
	return nil
}

// imageWaitError words why waiting for the answer stopped.
func imageWaitError(ctx, wctx context.Context, name string, timeout time.Duration, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted while waiting for the image triggers of deploymentconfig %q to be resolved", name)
	case errors.Is(wctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("timed out after %s waiting for the image triggers of deploymentconfig %q to be resolved: is dc-controller running?", timeout, name)
	}
	return err
}

// requestImages sets the request annotation with a merge patch, which
// touches nothing else of the object and so never conflicts.
func requestImages(ctx context.Context, c *Clients, name, token string) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{dcv1.ImageTriggerRequestAnnotation: token}},
	})
	if err != nil {
		return fmt.Errorf("encode the image trigger request: %w", err)
	}
	if err := c.DC.Patch(ctx, dcRef(c, name), client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("ask dc-controller to resolve the image triggers: %w", dcError(err, c.Namespace, name))
	}
	return nil
}

// withdrawImageRequest removes the request annotation if it still holds
// token: a JSON patch whose test fails leaves a newer request, or the
// controller's answer, alone. It is best effort, after the wait has failed
// for a reason the user is told.
func withdrawImageRequest(ctx context.Context, c *Clients, name, token string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	path := "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(dcv1.ImageTriggerRequestAnnotation)
	patch, err := json.Marshal([]map[string]string{
		{"op": "test", "path": path, "value": token},
		{"op": "remove", "path": path},
	})
	if err != nil {
		return
	}
	_ = c.DC.Patch(ctx, dcRef(c, name), client.RawPatch(types.JSONPatchType, patch))
}

// dcRef is the DeploymentConfig of that name, for patches.
func dcRef(c *Clients, name string) *dcv1.DeploymentConfig {
	dc := &dcv1.DeploymentConfig{}
	dc.Namespace, dc.Name = c.Namespace, name
	return dc
}

// waitImageAnswer watches the DeploymentConfig until the request with
// token is answered, and returns the DeploymentConfig as answered.
func waitImageAnswer(ctx context.Context, c *Clients, name, token string) (*dcv1.DeploymentConfig, error) {
	req := &imageRequest{token: token}
	for {
		w, err := c.DC.Watch(ctx, &dcv1.DeploymentConfigList{}, client.InNamespace(c.Namespace), client.MatchingFields{"metadata.name": name})
		if err != nil {
			return nil, dcError(err, c.Namespace, name)
		}
		dc, err := req.await(ctx, c, name, w)
		w.Stop()
		if !errors.Is(err, errFeedClosed) {
			return dc, err
		}
	}
}

// imageRequest follows the answer to one request.
type imageRequest struct {
	token string
	// supersededBy is the token of another client's request that replaced
	// ours. Its answer answers ours too: the controller resolved the tags
	// after we asked.
	supersededBy string
}

// await reads the DeploymentConfig once the watch is open, so that no
// change between the read and the watch is missed, then follows the watch
// until the request is answered.
func (r *imageRequest) await(ctx context.Context, c *Clients, name string, w watch.Interface) (*dcv1.DeploymentConfig, error) {
	dc, err := getDC(ctx, c, name)
	if err != nil {
		return nil, err
	}
	for !r.answered(dc) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return nil, errFeedClosed
			}
			got, isDC := ev.Object.(*dcv1.DeploymentConfig)
			if !isDC || got.Name != name {
				continue
			}
			if ev.Type == watch.Deleted {
				return nil, fmt.Errorf("deploymentconfig %q was deleted while its image triggers were being resolved", name)
			}
			dc = got
		}
	}
	return dc, nil
}

// answered reports whether the DeploymentConfig carries the answer to the
// request, noting on the way any request that replaced it.
func (r *imageRequest) answered(dc *dcv1.DeploymentConfig) bool {
	response := dc.Annotations[dcv1.ImageTriggerResponseAnnotation]
	if response == r.token || (r.supersededBy != "" && response == r.supersededBy) {
		return true
	}
	if pending, ok := dc.Annotations[dcv1.ImageTriggerRequestAnnotation]; ok && pending != r.token {
		r.supersededBy = pending
	}
	return false
}
