package invariants

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// unstructuredDC is the DeploymentConfig web as the DC informer holds it.
func unstructuredDC(uid types.UID, created time.Time, latestVersion int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(dcv1.GroupVersion.String())
	u.SetKind("DeploymentConfig")
	u.SetNamespace("ns")
	u.SetName("web")
	u.SetUID(uid)
	u.SetCreationTimestamp(metav1.NewTime(created))
	_ = unstructured.SetNestedField(u.Object, latestVersion, "status", "latestVersion")
	return u
}

func TestLatestVersionGoesDown(t *testing.T) {
	w := newWorld(t)
	now := time.Now()
	w.c.observeDeploymentConfig(unstructuredDC("dc", now, 3), unstructuredDC("dc", now, 4))
	w.c.observeDeploymentConfig(unstructuredDC("dc", now, 4), unstructuredDC("other", now, 1)) // recreated
	w.c.observeDeploymentConfig(unstructuredDC("dc", now, 4), unstructuredDC("dc", now, 2))
	w.wantRules("latestVersion went down")
}

func TestOwnerUIDs(t *testing.T) {
	tests := []struct {
		name      string
		dcUID     types.UID
		dcCreated time.Duration // relative to the RC's creation
		want      []string
	}{
		{name: "controlled by the DC of that name", dcUID: "dc", dcCreated: -time.Minute},
		{name: "RC of a deleted DC of the same name, older than the new one", dcUID: "new", dcCreated: time.Minute},
		{name: "RC made for the new DC but controlled by the old one", dcUID: "new", dcCreated: -time.Minute,
			want: []string{"rc controlled by another deploymentconfig"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.c.dcs = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			rc := w.rc(1, dcv1.DeploymentPhaseComplete) // controlled by uid "dc"
			created := time.Now().Truncate(time.Second)
			rc.CreationTimestamp = metav1.NewTime(created)
			w.put(w.rcs, rc)
			if err := w.c.dcs.Add(unstructuredDC(tt.dcUID, created.Add(tt.dcCreated), 1)); err != nil {
				t.Fatal(err)
			}
			w.wantRules(tt.want...)
		})
	}
}
