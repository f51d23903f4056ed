package integration

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/dashboard"
)

// TestDashboardSelectedWatchesShowTheDC: the dashboard asks the API
// server only for the RCs, pods and events its pages show (by label and
// field selectors, which the unit tests' in-memory store skips); against
// a real API server a DeploymentConfig's page still shows its deployment,
// that deployment's pod and the DeploymentConfig's events.
func TestDashboardSelectedWatchesShowTheDC(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", nil))
	waitRC(t, ns, "web-1", "created", func(*corev1.ReplicationController) bool { return true })
	waitEvent(t, ns, "web", controller.EventDeploymentCreated)
	mustCreate(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1-abcde", Labels: map[string]string{dcv1.DeploymentSelectorLabel: "web-1", dcv1.DeploymentConfigSelectorLabel: "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/web:1"}}},
	})
	dcs, err := client.NewWithWatch(cluster.cfg, client.Options{Scheme: cluster.client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := dashboard.New(ctx, dashboard.Options{
		Kube: kubernetes.NewForConfigOrDie(cluster.cfg), DC: dcs, Namespace: ns, Address: "127.0.0.1", Log: logr.Discard(),
		Run: func(context.Context, []string, io.Writer, io.Writer) error { return errors.New("no commands here") },
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/dc/"+ns+"/web", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET the page: %d\n%s", rec.Code, body)
	}
	for _, want := range []string{"web-1-abcde", controller.EventDeploymentCreated} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
}
