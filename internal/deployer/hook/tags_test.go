package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
)

// pullSecret is a kubernetes.io/dockerconfigjson secret of namespace shop
// with a registry's credentials.
func pullSecret(name, host, user, password string) *corev1.Secret {
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"username": user, "password": password}}})
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
	}
}

// tagHook is a tagImages hook with one target per container:target pair.
func tagHook(policy dcv1.LifecycleHookFailurePolicy, pairs ...[2]string) *dcv1.LifecycleHook {
	h := &dcv1.LifecycleHook{FailurePolicy: policy}
	for _, p := range pairs {
		h.TagImages = append(h.TagImages, dcv1.TagImageHook{
			ContainerName: p[0],
			To:            corev1.ObjectReference{Kind: "DockerImage", Name: p[1]},
		})
	}
	return h
}

// fakeTime is a clock that moves only when the executor pauses, so that
// retries until the deadline take no real time.
type fakeTime struct {
	mu  sync.Mutex
	now time.Time
	// onPause runs at every pause, e.g. to fix the registry.
	onPause func()
}

func (f *fakeTime) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeTime) Pause(_ context.Context, d time.Duration) error {
	f.mu.Lock()
	f.now = f.now.Add(d)
	onPause := f.onPause
	f.mu.Unlock()
	if onPause != nil {
		onPause()
	}
	return nil
}

func TestExecutorTagImages(t *testing.T) {
	reg := registrytest.New(t, registrytest.WithBasicAuth("pusher", "secret"))
	released := reg.Push(t, "app:1")
	app := reg.Ref("app@" + released.String())
	good := pullSecret("pull", reg.Host, "pusher", "secret")
	// The template of testRC pulls with the secret "pull" and runs as the
	// service account "web".
	viaAccount := []runtime.Object{
		pullSecret("from-account", reg.Host, "pusher", "secret"),
		&corev1.ServiceAccount{
			ObjectMeta:       metav1.ObjectMeta{Namespace: "shop", Name: "web"},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "from-account"}},
		},
	}
	tests := []struct {
		name    string
		hook    *dcv1.LifecycleHook
		objects []runtime.Object
		// deadline is when the rollout's active deadline ends, from now;
		// 20s when zero.
		deadline time.Duration
		// sidecar is the image of the template's sidecar container.
		sidecar string
		// onPause runs at each pause before a retry.
		onPause func()
		// wantLines are prefixes of the output's lines, one each.
		wantLines []string
		wantErr   string
		// wantTags maps tags of the registry to the digest they must hold.
		wantTags map[string]string
		// wantMissing are tags that must not exist.
		wantMissing []string
	}{
		{
			name:    "tags by digest in the same and in another repository, with the template's pull secret",
			hook:    tagHook(dcv1.LifecycleHookFailurePolicyAbort, [2]string{"app", reg.Ref("app:released")}, [2]string{"app", reg.Ref("copy:prod")}),
			objects: []runtime.Object{good},
			wantLines: []string{
				"--> post: Tagged " + app + " as " + reg.Ref("app:released"),
				"--> post: Tagged " + reg.Ref("app@"+released.String()) + " as " + reg.Ref("copy:prod"),
			},
			wantTags: map[string]string{"app:released": released.String(), "copy:prod": released.String()},
		},
		{
			name:      "the service account's pull secret",
			hook:      tagHook(dcv1.LifecycleHookFailurePolicyAbort, [2]string{"app", reg.Ref("app:sa")}),
			objects:   viaAccount,
			wantLines: []string{"--> post: Tagged " + app + " as " + reg.Ref("app:sa")},
			wantTags:  map[string]string{"app:sa": released.String()},
		},
		{
			name:        "Abort fails the rollout when the registry refuses",
			hook:        tagHook(dcv1.LifecycleHookFailurePolicyAbort, [2]string{"app", reg.Ref("app:refused")}),
			wantLines:   []string{"--> post: Failed"},
			wantErr:     `post hook failed: tag the image of container "app" as ` + reg.Ref("app:refused") + ": ",
			wantMissing: []string{"app:refused"},
		},
		{
			name: "Ignore warns and goes on",
			hook: tagHook(dcv1.LifecycleHookFailurePolicyIgnore, [2]string{"app", reg.Ref("app:ignored")}),
			wantLines: []string{
				"--> post: Failed",
				`--> post: Warning: the hook failed and its failurePolicy is Ignore, so the rollout goes on: tag the image of container "app" as ` + reg.Ref("app:ignored") + ": ",
			},
			wantMissing: []string{"app:ignored"},
		},
		{
			name:        "an unknown container fails the hook",
			hook:        tagHook(dcv1.LifecycleHookFailurePolicyAbort, [2]string{"nope", reg.Ref("app:nope")}),
			objects:     []runtime.Object{good},
			wantLines:   []string{"--> post: Failed"},
			wantErr:     `post hook failed: replicationcontroller shop/web-3: no container named "nope" in the pod template`,
			wantMissing: []string{"app:nope"},
		},
		{
			name:    "Retry repeats only the tags not done, until they work",
			hook:    tagHook(dcv1.LifecycleHookFailurePolicyRetry, [2]string{"app", reg.Ref("app:first")}, [2]string{"sidecar", reg.Ref("side:prod")}),
			objects: []runtime.Object{good},
			sidecar: reg.Ref("side:1"),
			onPause: func() { reg.Push(t, "side:1") },
			wantLines: []string{
				"--> post: Tagged " + app + " as " + reg.Ref("app:first"),
				`--> post: Failed: tag the image of container "sidecar" as ` + reg.Ref("side:prod") + ": ",
				"--> post: Retrying tagImages (retry #1)",
				"--> post: Tagged " + reg.Ref("side@sha256:"),
			},
			wantTags: map[string]string{"app:first": released.String()},
		},
		{
			name:        "no time left",
			hook:        tagHook(dcv1.LifecycleHookFailurePolicyAbort, [2]string{"app", reg.Ref("app:late")}),
			objects:     []runtime.Object{good},
			deadline:    -time.Second,
			wantErr:     "post hook failed: the rollout's active deadline",
			wantMissing: []string{"app:late"},
		},
		{
			name: "Retry gives up at the rollout's deadline",
			hook: tagHook(dcv1.LifecycleHookFailurePolicyRetry, [2]string{"app", reg.Ref("app:never")}),
			// Pauses of 1s, 2s, 4s and 8s fit in the 20s deadline; 16s more does not.
			wantLines: []string{
				"--> post: Failed: ", "--> post: Retrying tagImages (retry #1)",
				"--> post: Failed: ", "--> post: Retrying tagImages (retry #2)",
				"--> post: Failed: ", "--> post: Retrying tagImages (retry #3)",
				"--> post: Failed: ", "--> post: Retrying tagImages (retry #4)",
				"--> post: Failed",
			},
			wantErr:     `post hook failed: tag the image of container "app" as ` + reg.Ref("app:never") + ": ",
			wantMissing: []string{"app:never"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			cluster := fc.New(ctx, fc.Options{}, tt.objects...)
			defer cluster.Wait()
			defer cancel()
			rc := testRC()
			rc.Spec.Template.Spec.Containers[0].Image = app
			if tt.sidecar != "" {
				rc.Spec.Template.Spec.Containers[1].Image = tt.sidecar
			}
			clock := &fakeTime{now: time.Now(), onPause: tt.onPause}
			var out bytes.Buffer
			deadline := tt.deadline
			if deadline == 0 {
				deadline = 20 * time.Second
			}
			e := NewExecutor(cluster.Client, &out, &dcv1.DeploymentStrategy{}, clock.now.Add(deadline))
			e.now, e.pause = clock.Now, clock.Pause

			err := e.Run(ctx, tt.hook, rc, Post)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want it to start with %q", err, tt.wantErr)
			}
			checkLines(t, out.String(), tt.wantLines)
			for tag, digest := range tt.wantTags {
				if got := reg.Digest(t, tag); got.String() != digest {
					t.Errorf("%s points at %s, want %s", tag, got, digest)
				}
			}
			for _, tag := range tt.wantMissing {
				if hasTag(t, reg, tag) {
					t.Errorf("%s exists; the hook should not have made it", tag)
				}
			}
			if got := len(cluster.Created()); got != 0 {
				t.Errorf("%d pods created; tagImages runs in the deployer", got)
			}
		})
	}
}

// checkLines checks that each line of out starts with its prefix.
func checkLines(t *testing.T, out string, prefixes []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if out == "" {
		lines = nil
	}
	ok := len(lines) == len(prefixes)
	for i := 0; ok && i < len(lines); i++ {
		ok = strings.HasPrefix(lines[i], prefixes[i])
	}
	if !ok {
		t.Errorf("output:\n%s\nwant lines starting with:\n%s", out, strings.Join(prefixes, "\n"))
	}
}

// hasTag reports whether the registry has the tag (e.g. "app:1").
func hasTag(t *testing.T, reg *registrytest.Server, tag string) bool {
	t.Helper()
	ref, err := name.NewTag(reg.Ref(tag))
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.Head(ref, remote.WithAuth(reg.Auth()))
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return false
	}
	if err != nil {
		t.Fatalf("look up %s: %v", ref, err)
	}
	return true
}
