package integration

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/imagetrigger"
	"github.com/deployconfig/deployconfig/internal/registry"
)

// leakyBody is what the fake registries below answer with: a host behind a
// trigger's address, which must never show in a condition or an event.
const leakyBody = "root:x:0:0:internal-metadata-credentials"

// forbiddingServer listens on ip and answers every request with 403 and
// leakyBody; it counts the requests it gets.
func forbiddingServer(t *testing.T, ip string) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(leakyBody))
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String(), &hits
}

// The suite's controller may reach registries on 127.0.0.1 only (its
// --allow-registry-networks): one on 127.0.0.2, still loopback, is refused
// at the address, never contacted, and the condition and event say so,
// naming the host and the flag.
func TestImageTriggerRefusesLoopbackRegistry(t *testing.T) {
	ns := newNamespace(t)
	addr, hits := forbiddingServer(t, "127.0.0.2")
	mustCreate(t, imageDC(ns, "inside", addr+"/app:1", true, nil, "web"))
	waitCondition(t, ns, "inside", dcv1.ImageTriggerFailure, corev1.ConditionTrue, imagetrigger.ReasonImageResolveFailed)
	msg := conditionMessage(t, ns, "inside", dcv1.ImageTriggerFailure)
	if !strings.Contains(msg, `"127.0.0.2"`) || !strings.Contains(msg, registry.AllowNetworksFlag) {
		t.Errorf("condition message %q does not name the host and %s", msg, registry.AllowNetworksFlag)
	}
	waitEvent(t, ns, "inside", imagetrigger.ReasonImageResolveFailed)
	if n := hits.Load(); n != 0 {
		t.Errorf("the refused registry got %d requests", n)
	}
	if dc := getDC(t, ns, "inside"); dc.Status.LatestVersion != 0 {
		t.Errorf("latestVersion %d, want no rollout", dc.Status.LatestVersion)
	}
}

// A registry's answer never reaches the DeploymentConfig: its condition and
// events give the status code and no more.
func TestImageTriggerFailureCarriesNoResponseBody(t *testing.T) {
	ns := newNamespace(t)
	addr, hits := forbiddingServer(t, "127.0.0.1")
	mustCreate(t, imageDC(ns, "leak", addr+"/app:1", true, nil, "web"))
	waitCondition(t, ns, "leak", dcv1.ImageTriggerFailure, corev1.ConditionTrue, imagetrigger.ReasonImageResolveFailed)
	waitEvent(t, ns, "leak", imagetrigger.ReasonImageResolveFailed)
	if hits.Load() == 0 {
		t.Fatal("the allowed registry was never asked")
	}
	msg := conditionMessage(t, ns, "leak", dcv1.ImageTriggerFailure)
	if strings.Contains(msg, leakyBody) || !strings.Contains(msg, "403") {
		t.Errorf("condition message %q: want the status code and not the body", msg)
	}
	events := &corev1.EventList{}
	if err := cluster.client.List(context.Background(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if strings.Contains(e.Message, leakyBody) {
			t.Errorf("event %s carries the response body: %q", e.Reason, e.Message)
		}
	}
}

// conditionMessage returns the message of a DeploymentConfig's condition.
func conditionMessage(t *testing.T, ns, name string, ct dcv1.DeploymentConditionType) string {
	t.Helper()
	for _, c := range getDC(t, ns, name).Status.Conditions {
		if c.Type == ct {
			return c.Message
		}
	}
	t.Fatalf("dc %s has no %s condition", name, ct)
	return ""
}
