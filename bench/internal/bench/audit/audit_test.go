package audit

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestActor(t *testing.T) {
	tests := []struct {
		name, ua, user, impersonated string
		want                         string
	}{
		{"controller", "dc-controller", "kubernetes-admin", "", ActorDCController},
		{"bench", "dc-bench", "kubernetes-admin", "", ActorBench},
		{"deployer by user agent", "dc-deploy (ns/web-2-deploy)", "kubernetes-admin", "system:serviceaccount:ns:deployer", ActorDeployer},
		{"deployer by service account", "Go-http-client/1.1", "admin", "system:serviceaccount:ns:deployer", ActorDeployer},
		{"pod runtime", "dc-local-runtime", "admin", "", ActorPodRuntime},
		{"rc manager by user agent", "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc/replication-controller", "admin", "", ActorRCManager},
		{"rs manager by service account", "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc/replicaset-controller", "system:serviceaccount:kube-system:replicaset-controller", "", ActorRSManager},
		{"deployment controller", "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc/deployment-controller", "admin", "", ActorDeploymentCtrl},
		{"garbage collector", "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc/generic-garbage-collector", "admin", "", ActorGarbageCollector},
		{"other kcm controller", "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc/endpointslice-controller", "admin", "", "kcm: endpointslice-controller"},
		{"scheduler", "kube-scheduler/v1.37.2 (linux/amd64) kubernetes/abc/scheduler", "admin", "", ActorScheduler},
		{"kwok", "kwok/v0.8.0 (linux/amd64)", "admin", "", ActorKwok},
		{"kubectl", "kubectl/v1.37.2 (linux/amd64) kubernetes/abc", "admin", "", "other: kubectl"},
		{"no user agent", "", "system:apiserver", "", "other: system:apiserver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Event{UserAgent: tt.ua, User: UserInfo{Username: tt.user}}
			if tt.impersonated != "" {
				e.ImpersonatedUser = &UserInfo{Username: tt.impersonated}
			}
			if got := Actor(e); got != tt.want {
				t.Errorf("Actor() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCategoryOf(t *testing.T) {
	tests := []struct {
		resource, name string
		want           Category
	}{
		{"logs", "web-2-deploy", CategoryDeployerPods},
		{"pods", "web-1-abcde", CategoryAppPods},
		{"pods", "web-6d9f7-x2x9q", CategoryAppPods},
		{"pods", "web-2-deploy", CategoryDeployerPods},
		{"pods", "web-2-hook-pre", CategoryDeployerPods},
		{"events", "web.17a", CategoryEvents},
		{"replicationcontrollers", "web-2", CategoryObjects},
	}
	for _, tt := range tests {
		t.Run(tt.resource+"/"+tt.name, func(t *testing.T) {
			e := Event{ObjectRef: &ObjectRef{Resource: tt.resource, Name: tt.name}}
			if tt.resource == "logs" {
				e.ObjectRef.APIGroup = "kwok.x-k8s.io"
			}
			if got := CategoryOf(e); got != tt.want {
				t.Errorf("CategoryOf = %v, want %v", got, tt.want)
			}
		})
	}
	if got := CategoryOf(Event{}); got != CategoryObjects {
		t.Errorf("non-resource request: %v", got)
	}
}

// logLines is an audit log: a write by each of several actors, a read, a
// watch-free request list and records of stages that must be skipped.
const logLines = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/b/replicationcontrollers","verb":"create","user":{"username":"admin"},"userAgent":"dc-controller","objectRef":{"resource":"replicationcontrollers","namespace":"b","name":"web-1","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-11-29T10:00:00.000000Z","stageTimestamp":"2026-11-29T10:00:00.010000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"2","stage":"ResponseComplete","verb":"create","user":{"username":"admin"},"userAgent":"dc-controller","objectRef":{"resource":"pods","namespace":"b","name":"web-1-deploy","apiVersion":"v1"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-11-29T10:00:00.100000Z","stageTimestamp":"2026-11-29T10:00:00.150000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"3","stage":"ResponseComplete","verb":"patch","user":{"username":"admin"},"impersonatedUser":{"username":"system:serviceaccount:b:deployer"},"userAgent":"dc-deploy (b/web-1-deploy)","objectRef":{"resource":"replicationcontrollers","subresource":"scale","namespace":"b","name":"web-1","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-29T10:00:01Z","stageTimestamp":"2026-11-29T10:00:01.001Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"4","stage":"ResponseComplete","verb":"update","user":{"username":"admin"},"userAgent":"dc-controller","objectRef":{"resource":"replicationcontrollers","namespace":"b","name":"web-1","apiVersion":"v1"},"responseStatus":{"code":409},"requestReceivedTimestamp":"2026-11-29T10:00:02Z","stageTimestamp":"2026-11-29T10:00:02.001Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"5","stage":"ResponseComplete","verb":"create","user":{"username":"admin"},"userAgent":"kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/x/replication-controller","objectRef":{"resource":"pods","namespace":"b","name":"web-1-x7k2p","apiVersion":"v1"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-11-29T10:00:03Z","stageTimestamp":"2026-11-29T10:00:03.001Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"6","stage":"ResponseComplete","verb":"create","user":{"username":"admin"},"userAgent":"kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/x/replication-controller","objectRef":{"resource":"events","namespace":"b","name":"web-1.1","apiVersion":"v1"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-11-29T10:00:03Z","stageTimestamp":"2026-11-29T10:00:03.002Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"7","stage":"ResponseComplete","verb":"get","user":{"username":"admin"},"userAgent":"dc-deploy (b/web-1-deploy)","objectRef":{"resource":"replicationcontrollers","namespace":"b","name":"web-1","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-29T10:00:04Z","stageTimestamp":"2026-11-29T10:00:04.001Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"8","stage":"ResponseStarted","verb":"create","user":{"username":"admin"},"userAgent":"dc-controller","objectRef":{"resource":"pods","namespace":"b","name":"skip-me","apiVersion":"v1"},"requestReceivedTimestamp":"2026-11-29T10:00:04Z","stageTimestamp":"2026-11-29T10:00:04.001Z"}

{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"9","stage":"ResponseComplete","verb":"update","user":{"username":"admin"},"userAgent":"dc-controller","objectRef":{"resource":"replicationcontrollers","namespace":"other","name":"x-1","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-29T10:00:05Z","stageTimestamp":"2026-11-29T10:00:05.001Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"10","stage":"ResponseComplete","verb":"update","user":{"username":"admin"},"userAgent":"dc-controller","objectRef":{"resource":"replicationcontrollers","namespace":"b","name":"web-1","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-29T10:00:09Z","stageTimestamp":"2026-11-29T10:00:09.001Z"}
`

func readAll(t *testing.T, log string) []Event {
	t.Helper()
	var events []Event
	if err := Read(strings.NewReader(log), func(e Event) error {
		events = append(events, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return events
}

func TestRead(t *testing.T) {
	events := readAll(t, logLines)
	if len(events) != 9 {
		t.Fatalf("read %d events, want 9 (the ResponseStarted record and the blank line skipped)", len(events))
	}
	e := events[1]
	if e.Verb != "create" || e.Resource() != "pods" || e.Name() != "web-1-deploy" || e.Code() != 201 || !e.Succeeded() {
		t.Errorf("event 2 read as %+v", e)
	}
	if want := time.Date(2026, 11, 29, 10, 0, 0, 150_000_000, time.UTC); !e.Completed.Equal(want) {
		t.Errorf("completed %v, want %v", e.Completed, want)
	}
	if got := events[2].Resource(); got != "replicationcontrollers/scale" {
		t.Errorf("subresource read as %q", got)
	}
	if got := events[2].Username(); got != "system:serviceaccount:b:deployer" {
		t.Errorf("impersonated user read as %q", got)
	}
	if err := Read(strings.NewReader("{not json\n"), func(Event) error { return nil }); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad line: err = %v", err)
	}
}

func TestTally(t *testing.T) {
	base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	tally := NewTally(
		Window{Namespace: "b", From: base, To: base.Add(5 * time.Second)},
		Window{Namespace: "b", From: base.Add(5 * time.Second), To: base.Add(time.Minute)},
	)
	for _, e := range readAll(t, logLines) {
		tally.Add(e)
	}
	first := tally.Counts(0)
	want := []ActorCount{
		{Actor: ActorDCController, Objects: 2, DeployerPods: 1, Conflicts: 1},
		{Actor: ActorDeployer, Objects: 1, Reads: 1},
		{Actor: ActorRCManager, AppPods: 1, Events: 1},
	}
	if len(first) != len(want) {
		t.Fatalf("window 1 has %d actors, want %d: %+v", len(first), len(want), first)
	}
	for i, w := range want {
		got := first[i]
		got.ByResource, got.RolloutWrites = nil, nil
		if !reflect.DeepEqual(got, w) {
			t.Errorf("window 1 actor %d = %+v, want %+v", i, got, w)
		}
	}
	if got := first[0].ByResource["replicationcontrollers create"]; got != 1 {
		t.Errorf("by resource: %v", first[0].ByResource)
	}
	if got := first[0].Writes(); got != 3 {
		t.Errorf("writes = %d, want 3", got)
	}
	second := tally.Counts(1)
	if len(second) != 1 || second[0].Objects != 1 {
		t.Errorf("window 2 = %+v, want one dc-controller update (the other namespace left out)", second)
	}
}

func TestTimes(t *testing.T) {
	created := NewTimes(func(e Event) (string, bool) {
		if Actor(e) == ActorDCController && e.Verb == "create" && CategoryOf(e) == CategoryDeployerPods && e.Succeeded() {
			return e.Namespace() + "/" + e.Name(), true
		}
		return "", false
	})
	for _, e := range readAll(t, logLines) {
		created.Add(e)
	}
	if created.Len() != 1 {
		t.Fatalf("recorded %d, want 1", created.Len())
	}
	got, ok := created.Get("b/web-1-deploy")
	if want := time.Date(2026, 11, 29, 10, 0, 0, 150_000_000, time.UTC); !ok || !got.Equal(want) {
		t.Errorf("deployer pod created at %v (%v), want %v", got, ok, want)
	}
}

func TestWriteKeyAndRolloutWrites(t *testing.T) {
	tests := []struct {
		actor, resource, sub, name, verb string
		wantKey                          string
		rollout                          bool
	}{
		{"dc-controller", "pods", "", "web-1-deploy", "create", "pods create (deployer pod)", true},
		{"kube-scheduler", "pods", "binding", "web-1-deploy", "create", "pods/binding create (deployer pod)", true},
		{"kube-scheduler", "pods", "binding", "web-1-x7k2p", "create", "pods/binding create", false},
		{"kube-scheduler", "events", "", "web-1-deploy.18a2b", "create", "events create (deployer pod)", true},
		{"kube-scheduler", "events", "", "web-1-x7k2p.18a2b", "create", "events create", true},
		{"dc-local-runtime", "logs", "", "web-1-deploy", "create", "logs create (deployer pod)", true},
		{"kwok", "pods", "status", "web-1-x7k2p", "patch", "pods/status patch", false},
		{"dc-controller", "replicationcontrollers", "", "web-1", "patch", "replicationcontrollers patch", true},
	}
	for _, tt := range tests {
		t.Run(tt.wantKey, func(t *testing.T) {
			e := Event{Verb: tt.verb, UserAgent: tt.actor, Stage: "ResponseComplete",
				ObjectRef: &ObjectRef{Resource: tt.resource, Subresource: tt.sub, Namespace: "b", Name: tt.name}}
			if tt.resource == "logs" {
				e.ObjectRef.APIGroup = "kwok.x-k8s.io"
			}
			if got := WriteKey(e); got != tt.wantKey {
				t.Errorf("WriteKey = %q, want %q", got, tt.wantKey)
			}
			tally := NewTally(Window{Namespace: "b", To: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)})
			tally.Add(e)
			c := tally.Counts(0)[0]
			if got := c.RolloutWrites[tt.wantKey] == 1; got != tt.rollout {
				t.Errorf("counted as the rollout's: %v, want %v (%+v)", got, tt.rollout, c)
			}
			if want := map[bool]int{true: 1, false: 0}[tt.rollout]; c.RolloutWriteCount() != want {
				t.Errorf("RolloutWriteCount = %d, want %d", c.RolloutWriteCount(), want)
			}
		})
	}
}

func TestPurpose(t *testing.T) {
	// Every write a DC rollout of the benchmark makes (N=1000 report of
	// 2026-11-30, app pods excluded) has a stated purpose, and so do the
	// scale steps dc-controller makes itself in controller mode.
	for _, w := range [][2]string{
		{ActorDCController, "deploymentconfigs/status update"},
		{ActorDCController, "replicationcontrollers/scale update"},
		{ActorDCController, "replicationcontrollers patch"},
		{ActorDCController, "pods create (deployer pod)"},
		{ActorDeployer, "replicationcontrollers/scale update"},
		{ActorDeployer, "replicationcontrollers patch"},
		{ActorPodRuntime, "pods/status update (deployer pod)"},
		{ActorPodRuntime, "logs create (deployer pod)"},
		{ActorScheduler, "pods/binding create (deployer pod)"},
		{ActorDeploymentCtrl, "replicasets update"},
	} {
		if Purpose(w[0], w[1]) == "" {
			t.Errorf("no purpose for %s %q", w[0], w[1])
		}
	}
	if got := Purpose(ActorKwok, "pods/status patch"); got != "" {
		t.Errorf("an app pod's write has purpose %q, want none (not the rollout's)", got)
	}
}
