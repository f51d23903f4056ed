package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// testNow is the clock of the rendering tests.
var testNow = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// memoryStore is a store filled by hand, without watches: the rendering is
// what these tests check.
func memoryStore(t testing.TB, objs ...any) *store {
	t.Helper()
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	sc := &scope{
		dcs:      cache.NewSharedIndexInformer(&cache.ListWatch{}, &dcv1.DeploymentConfig{}, 0, indexers),
		rcs:      cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.ReplicationController{}, 0, indexers),
		pods:     cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Pod{}, 0, indexers),
		events:   cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Event{}, 0, indexers),
		policies: cache.NewSharedIndexInformer(&cache.ListWatch{}, &dcv1.RolloutPolicy{}, 0, indexers),
	}
	s := &store{hub: newHub(), all: true, scopes: map[string]*scope{"": sc}}
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *dcv1.DeploymentConfig:
			err = sc.dcs.GetIndexer().Add(o)
		case *corev1.ReplicationController:
			err = sc.rcs.GetIndexer().Add(o)
		case *corev1.Pod:
			err = sc.pods.GetIndexer().Add(o)
		case *corev1.Event:
			err = sc.events.GetIndexer().Add(o)
		case *dcv1.RolloutPolicy:
			err = sc.policies.GetIndexer().Add(o)
		default:
			err = fmt.Errorf("no informer for %T", o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// testServer is a server over objects whose commands go to run.
func testServer(t testing.TB, readOnly bool, run Runner, objs ...any) *Server {
	t.Helper()
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return testNow }
	st := memoryStore(t, objs...)
	s := &Server{opts: Options{ReadOnly: readOnly, Run: run, Log: logr.Discard(), Now: now, Address: "127.0.0.1"},
		store: st, tokens: newTokens(now), pages: pages, tails: newLogTails(t.Context(), run, st.hub, now), loopback: true}
	s.routes()
	return s
}

// canaryAtStep is web in shop with rollout #2 paused at step 2 of 2, one
// pod each for web-1 and web-2.
func canaryAtStep() []any {
	weight := int32(20)
	dc := &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-web"},
		Spec: dcv1.DeploymentConfigSpec{Replicas: 2, Strategy: dcv1.DeploymentStrategy{
			Type:          dcv1.DeploymentStrategyTypeRolling,
			RollingParams: &dcv1.RollingDeploymentStrategyParams{Steps: []dcv1.RollingStep{{SetWeight: &weight}, {Pause: &dcv1.RolloutPause{}}}},
		}, Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}},
		Status: dcv1.DeploymentConfigStatus{LatestVersion: 2, ReadyReplicas: 2, Conditions: []dcv1.DeploymentCondition{
			{Type: dcv1.DeploymentReady, Status: corev1.ConditionFalse}, {Type: dcv1.DeploymentReconciling, Status: corev1.ConditionTrue},
		}, Details: &dcv1.DeploymentDetails{Causes: []dcv1.DeploymentCause{{Type: dcv1.DeploymentTriggerOnConfigChange}}}},
	}
	objs := []any{dc}
	for version := int64(1); version <= 2; version++ {
		dc := dc.DeepCopy()
		dc.Status.LatestVersion = version
		rc, err := deployment.New(dc)
		if err != nil {
			panic(err)
		}
		rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseComplete)
		if version == 2 {
			rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseRunning)
			deployment.SetProgress(rc, deployment.Progress{Stage: deployment.StageSteps, Step: 2, Steps: 2, Weight: new(int32(20)),
				Wait:   &deployment.Wait{Gate: deployment.StepGate(2), Reason: dcv1.PauseReasonPause, Since: metav1.NewTime(testNow)},
				Runner: deployment.Runner{Kind: deployment.RunnerPod, Holder: deployment.DeployerPodName(rc.Name)}})
		}
		if version == 1 {
			rc.Annotations[dcv1.ConfigSnapshotsAnnotation] = `[{"kind":"ConfigMap","name":"app","copy":"app-1a2b3c4d5e"},{"kind":"Secret","name":"db","copy":"db-0f0f0f0f0f"}]`
		}
		one := int32(1)
		rc.Spec.Replicas = &one
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: rc.Name + "-abcde", Namespace: "shop", Labels: map[string]string{dcv1.DeploymentSelectorLabel: rc.Name}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}
		objs = append(objs, rc, pod)
	}
	return objs
}

func TestDCPageShowsTheRolloutAndItsActions(t *testing.T) {
	tests := []struct {
		name     string
		readOnly bool
		want     []string
		wantNot  []string
	}{
		{
			name: "actions",
			want: []string{
				`<p id="rollout-step">Step 2 of 2, weight 20%: paused, waiting for promote</p>`,
				`data-version="web-2"`, `data-version="web-1"`, `web-2-abcde`,
				`id="act-promote"`, `id="act-promote-full"`, `id="act-cancel"`, `id="act-pause"`,
				`<option value="1">1</option>`,
				`data-log-url="/log/shop/web?version=2"`,
				`aria-current="step"`,
				`<span class="config">ConfigMap/app: app-1a2b3c4d5e</span> <span class="config">Secret/db: db-0f0f0f0f0f</span>`,
			},
			wantNot: []string{`id="act-latest"`, `id="act-retry"`},
		},
		{
			name:     "read-only",
			readOnly: true,
			want:     []string{`<p id="rollout-step">Step 2 of 2`, `read-only`},
			wantNot:  []string{`data-action=`, `<form class="action`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testServer(t, tt.readOnly, nil, canaryAtStep()...)
			body := get(t, s, "/dc/shop/web")
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %s", w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("the page has %s", w)
				}
			}
			if t.Failed() {
				t.Log(body)
			}
		})
	}
}

func TestListPage(t *testing.T) {
	s := testServer(t, false, nil, canaryAtStep()...)
	body := get(t, s, "/?namespace=shop&q=we")
	for _, w := range []string{`<tr data-dc="shop/web">`, `<a href="/dc/shop/web">web</a>`, `>Running<`, `>config<`, `1 DeploymentConfig(s)`} {
		if !strings.Contains(body, w) {
			t.Errorf("the list lacks %s:\n%s", w, body)
		}
	}
	if body := get(t, s, "/?q=nothing"); !strings.Contains(body, "0 DeploymentConfig(s)") {
		t.Errorf("the filter by name kept rows:\n%s", body)
	}
}

// get fetches a page as a browser on loopback does.
func get(t *testing.T, s *Server, path string) string {
	t.Helper()
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8990"+path, nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
	}
	return w.Body.String()
}

func TestActions(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "replicationcontrollers"}, "web-2", fmt.Errorf(`User "viewer" cannot patch resource`))
	tests := []struct {
		name     string
		readOnly bool
		origin   string
		host     string
		token    string
		action   string
		runErr   error
		status   int
		want     actionResult
		wantArgs string
	}{
		{name: "promote", action: "promote", status: 200,
			want: actionResult{OK: true, Message: "done"}, wantArgs: "rollout promote web --namespace shop"},
		{name: "forbidden", action: "cancel", runErr: fmt.Errorf("cancel rollout #2 (web-2): %w", forbidden), status: 200,
			want:     actionResult{Forbidden: true, Message: `Forbidden: cancel rollout #2 (web-2): replicationcontrollers "web-2" is forbidden: User "viewer" cannot patch resource`},
			wantArgs: "rollout cancel web --namespace shop"},
		{name: "refused by the CLI", action: "retry", runErr: fmt.Errorf("rollout #2 is running; only failed deployments can be retried"), status: 200,
			want: actionResult{Message: "Error: rollout #2 is running; only failed deployments can be retried"}, wantArgs: "rollout retry web --namespace shop"},
		{name: "read-only", readOnly: true, action: "promote", status: 403,
			want: actionResult{Message: "This dashboard is read-only (--read-only): it runs no actions."}},
		{name: "another site", origin: "http://evil.example", action: "promote", status: 403,
			want: actionResult{Message: `Refused: the request comes from "http://evil.example", not from the dashboard (http://127.0.0.1:8990)`}},
		{name: "forged token", token: "forged", action: "promote", status: 403,
			want: actionResult{Message: "Refused: the page's token is missing or expired; reload the page."}},
		{name: "unknown action", action: "delete", status: 400, want: actionResult{Message: `unknown action "delete"`}},
		{name: "rebound host", host: "rebound.example:8990", action: "promote", status: http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran string
			run := func(_ context.Context, args []string, stdout, _ io.Writer) error {
				ran = strings.Join(args, " ")
				if tt.runErr == nil {
					fmt.Fprintln(stdout, "done")
				}
				return tt.runErr
			}
			s := testServer(t, tt.readOnly, run, canaryAtStep()...)
			token := tt.token
			if token == "" {
				token, _ = s.tokens.issue()
			}
			host := tt.host
			if host == "" {
				host = "127.0.0.1:8990"
			}
			origin := tt.origin
			if origin == "" {
				origin = "http://" + host
			}
			form := url.Values{"action": {tt.action}, "token": {token}}
			r := httptest.NewRequest(http.MethodPost, "http://"+host+"/dc/shop/web/actions", strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("Origin", origin)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if ran != tt.wantArgs {
				t.Errorf("ran %q, want %q", ran, tt.wantArgs)
			}
			if tt.status == http.StatusMisdirectedRequest {
				return
			}
			var got actionResult
			if err := json.NewDecoder(bytes.NewReader(w.Body.Bytes())).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("answer %+v, want %+v", got, tt.want)
			}
		})
	}
}
