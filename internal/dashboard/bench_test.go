package dashboard

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// manyDCs is n DeploymentConfigs in one namespace, each with one complete
// deployment.
func manyDCs(b *testing.B, n int) []any {
	b.Helper()
	var objs []any
	for i := range n {
		dc := &dcv1.DeploymentConfig{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%03d", i), Namespace: "big", UID: "uid"},
			Spec: dcv1.DeploymentConfigSpec{Replicas: 2, Template: &corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
			}},
			Status: dcv1.DeploymentConfigStatus{LatestVersion: 1, ReadyReplicas: 2},
		}
		rc, err := deployment.New(dc)
		if err != nil {
			b.Fatal(err)
		}
		rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseComplete)
		objs = append(objs, dc, rc)
	}
	return objs
}

// The list page's live part at 500 DeploymentConfigs in a namespace: what
// every change pushes to the open list pages. It reports the size of the
// fragment; test/e2e's BenchmarkDashboard500 measures the page in a browser.
func BenchmarkListFragment500(b *testing.B) {
	s := testServer(b, false, nil, manyDCs(b, 500)...)
	d := listData{Namespace: "big"}
	var size int
	for b.Loop() {
		d.Rows = listRows(s.store, d.Namespace, d.Query)
		w := &countingWriter{}
		if err := s.pages["list"].ExecuteTemplate(w, "live", d); err != nil {
			b.Fatal(err)
		}
		size = w.n
	}
	b.ReportMetric(float64(size)/1024, "KiB/page")
}

// countingWriter counts what is written to it.
type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}
