package cli

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// resolvedImage is the digest reference the fake image-trigger controller
// resolves registry.example.com/web:stable to.
const resolvedImage = "registry.example.com/web@sha256:1111111111111111111111111111111111111111111111111111111111111111"

// requestToken is the token `rollout latest` sends: the fixed test time.
const requestToken = "2026-03-01T12:00:00Z"

// withManualImageTrigger adds an ImageChange trigger with automatic: false
// on the container, from registry.example.com/NAME:stable.
func withManualImageTrigger(dc *dcv1.DeploymentConfig) {
	withImageTrigger(dc)
	dc.Spec.Triggers[len(dc.Spec.Triggers)-1].ImageChangeParams.Automatic = false
}

// withImageStreamTrigger adds an ImageChange trigger from an
// ImageStreamTag, which nothing resolves.
func withImageStreamTrigger(dc *dcv1.DeploymentConfig) {
	withImageTrigger(dc)
	dc.Spec.Triggers[len(dc.Spec.Triggers)-1].ImageChangeParams.From = dcv1.ImageTriggerSource{Kind: "ImageStreamTag", Name: "web:stable"}
}

// imageAnswer is how the fake controller answers a request: the error it
// reports (none: it writes resolvedImage into the container), and whether
// writing the image starts a rollout before the answer is seen.
type imageAnswer struct {
	err     string
	rollout bool
}

// answerImageRequests plays dc-controller's image-trigger controller for
// the DeploymentConfig web until the test ends: it answers each request as
// ans says, in one update, as the real one does.
func answerImageRequests(ans imageAnswer) func(t *testing.T, f *fixture) {
	return func(t *testing.T, f *fixture) {
		ctx, cancel := context.WithCancel(context.Background())
		w, err := f.dc.Watch(ctx, &dcv1.DeploymentConfigList{}, client.InNamespace("default"))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The fake's own first write (a rollout) still shows the request.
			done := map[string]bool{}
			for ev := range w.ResultChan() {
				dc, ok := ev.Object.(*dcv1.DeploymentConfig)
				if !ok || ev.Type == watch.Deleted || dc.Name != "web" {
					continue
				}
				if token, asked := dc.Annotations[dcv1.ImageTriggerRequestAnnotation]; asked && !done[token] {
					done[token] = true
					answerRequest(t, f, token, ans)
				}
			}
		}()
		t.Cleanup(func() {
			cancel()
			w.Stop()
			wg.Wait()
		})
	}
}

// answerRequest answers one request. A rollout the new image starts is
// written first, so that the command sees it with the answer. Each write
// starts from a fresh read: the watch's copy may be stale.
func answerRequest(t *testing.T, f *fixture, token string, ans imageAnswer) {
	ctx := context.Background()
	write := func(change func(dc *dcv1.DeploymentConfig), update func(dc *dcv1.DeploymentConfig) error) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			dc := &dcv1.DeploymentConfig{}
			if err := f.dc.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, dc); err != nil {
				return err
			}
			change(dc)
			return update(dc)
		})
	}
	if ans.err == "" && ans.rollout {
		err := write(func(dc *dcv1.DeploymentConfig) {
			dc.Status.LatestVersion++
			dc.Status.Details = &dcv1.DeploymentDetails{Message: "config change", Causes: []dcv1.DeploymentCause{{Type: dcv1.DeploymentTriggerOnConfigChange}}}
		}, func(dc *dcv1.DeploymentConfig) error { return f.dc.Status().Update(ctx, dc) })
		if err != nil {
			t.Errorf("fake controller: start a rollout: %v", err)
			return
		}
	}
	err := write(func(dc *dcv1.DeploymentConfig) {
		delete(dc.Annotations, dcv1.ImageTriggerRequestAnnotation)
		dc.Annotations[dcv1.ImageTriggerResponseAnnotation] = token
		if ans.err != "" {
			dc.Annotations[dcv1.ImageTriggerErrorAnnotation] = ans.err
			return
		}
		dc.Spec.Template.Spec.Containers[0].Image = resolvedImage
		dc.Spec.Triggers[len(dc.Spec.Triggers)-1].ImageChangeParams.LastTriggeredImage = resolvedImage
	}, func(dc *dcv1.DeploymentConfig) error { return f.dc.Update(ctx, dc) })
	if err != nil {
		t.Errorf("fake controller: answer: %v", err)
	}
}

// wantLatest checks the DeploymentConfig's latestVersion, the image of its
// container and that no request is left pending.
func wantLatest(version int64, image string) func(t *testing.T, f *fixture) {
	return func(t *testing.T, f *fixture) {
		dc := f.getDC("web")
		if dc.Status.LatestVersion != version {
			t.Errorf("latestVersion = %d, want %d", dc.Status.LatestVersion, version)
		}
		if got := dc.Spec.Template.Spec.Containers[0].Image; got != image {
			t.Errorf("image = %s, want %s", got, image)
		}
		if token, ok := dc.Annotations[dcv1.ImageTriggerRequestAnnotation]; ok {
			t.Errorf("request %q left pending", token)
		}
	}
}

func TestRolloutLatestImageTriggers(t *testing.T) {
	const tagged = "registry.example.com/web:3"
	manual := history3(dcv1.DeploymentPhaseComplete, withManualImageTrigger)
	runCases(t, []commandCase{{
		name:  "resolves the image triggers, then rolls out",
		objs:  manual,
		args:  []string{"rollout", "latest", "web"},
		setup: answerImageRequests(imageAnswer{}),
		check: func(t *testing.T, f *fixture) {
			wantLatest(4, resolvedImage)(t, f)
			dc := f.getDC("web")
			if dc.Annotations[dcv1.ImageTriggerResponseAnnotation] != requestToken {
				t.Errorf("annotations %v, want the response to %s", dc.Annotations, requestToken)
			}
			if d := dc.Status.Details; d == nil || d.Causes[0].Type != dcv1.DeploymentTriggerManual {
				t.Errorf("details %+v, want a manual cause", d)
			}
		},
	}, {
		name:  "the new image started a rollout by itself",
		objs:  manual,
		args:  []string{"rollout", "latest", "web"},
		setup: answerImageRequests(imageAnswer{rollout: true}),
		check: func(t *testing.T, f *fixture) {
			wantLatest(4, resolvedImage)(t, f)
			if d := f.getDC("web").Status.Details; d == nil || d.Message != "config change" {
				t.Errorf("details %+v: the command started a second rollout", d)
			}
		},
	}, {
		name:  "the started rollout with -o name",
		objs:  manual,
		args:  []string{"rollout", "latest", "web", "-o", "name"},
		setup: answerImageRequests(imageAnswer{rollout: true}),
	}, {
		name:  "the controller cannot resolve a tag",
		objs:  manual,
		args:  []string{"rollout", "latest", "web"},
		setup: answerImageRequests(imageAnswer{err: "registry.example.com/web:stable: GET https://registry.example.com/v2/web/manifests/stable: UNAUTHORIZED: authentication required"}),
		check: wantLatest(3, tagged),
	}, {
		name:  "dc-controller does not answer",
		objs:  manual,
		args:  []string{"rollout", "latest", "web", "--timeout", "50ms"},
		check: wantLatest(3, tagged),
	}, {
		name:  "--again deploys the template as it is",
		objs:  manual,
		args:  []string{"rollout", "latest", "web", "--again"},
		check: wantLatest(4, tagged),
	}, {
		name:  "a dry run asks nothing",
		objs:  manual,
		args:  []string{"rollout", "latest", "web", "--dry-run"},
		check: wantLatest(3, tagged),
	}, {
		name:  "refused while in progress, before asking",
		objs:  history3(dcv1.DeploymentPhaseRunning, withManualImageTrigger),
		args:  []string{"rollout", "latest", "web"},
		check: wantLatest(3, tagged),
	}, {
		name:  "ImageStreamTag triggers are not resolved",
		objs:  history3(dcv1.DeploymentPhaseComplete, withImageStreamTrigger),
		args:  []string{"rollout", "latest", "web"},
		check: wantLatest(4, tagged),
	}, {
		name: "bad timeout",
		objs: manual,
		args: []string{"rollout", "latest", "web", "--timeout", "0s"},
	}})
}

func TestImageRequestAnswered(t *testing.T) {
	withAnnotations := func(kv ...string) *dcv1.DeploymentConfig {
		dc := &dcv1.DeploymentConfig{}
		dc.Annotations = map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			dc.Annotations[kv[i]] = kv[i+1]
		}
		return dc
	}
	req, resp := dcv1.ImageTriggerRequestAnnotation, dcv1.ImageTriggerResponseAnnotation
	steps := []struct {
		name string
		dc   *dcv1.DeploymentConfig
		want bool
	}{
		{"pending", withAnnotations(req, "mine"), false},
		{"an older answer", withAnnotations(req, "mine", resp, "old"), false},
		{"replaced by another client's request", withAnnotations(req, "theirs", resp, "old"), false},
		{"their answer answers ours", withAnnotations(resp, "theirs"), true},
	}
	r := &imageRequest{token: "mine"}
	for _, s := range steps {
		if got := r.answered(s.dc); got != s.want {
			t.Errorf("%s: answered = %v, want %v", s.name, got, s.want)
		}
	}
	if !(&imageRequest{token: "mine"}).answered(withAnnotations(resp, "mine")) {
		t.Error("our own answer is not seen")
	}
}

// TestRolloutLatestWaitsForTheAnswer checks that the command does not bump
// latestVersion before the controller has answered, however late.
func TestRolloutLatestWaitsForTheAnswer(t *testing.T) {
	f := newFixture(t, history3(dcv1.DeploymentPhaseComplete, withManualImageTrigger)(t)...)
	done := make(chan result, 1)
	go func() { done <- f.run("rollout", "latest", "web") }()
	waitRequest(t, f)
	if v := f.getDC("web").Status.LatestVersion; v != 3 {
		t.Fatalf("latestVersion = %d before the answer", v)
	}
	answerRequest(t, f, requestToken, imageAnswer{})
	res := <-done
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantLatest(4, resolvedImage)(t, f)
}

// waitRequest waits until web carries an image trigger request.
func waitRequest(t *testing.T, f *fixture) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := f.dc.Watch(ctx, &dcv1.DeploymentConfigList{}, client.InNamespace("default"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, ok := f.getDC("web").Annotations[dcv1.ImageTriggerRequestAnnotation]; ok {
		return
	}
	for {
		select {
		case <-ctx.Done():
			t.Fatal("no image trigger request within 10s")
		case ev := <-w.ResultChan():
			if dc, ok := ev.Object.(*dcv1.DeploymentConfig); ok && dc.Annotations[dcv1.ImageTriggerRequestAnnotation] != "" {
				return
			}
		}
	}
}
