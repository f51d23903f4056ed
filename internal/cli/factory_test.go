package cli

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// TestRESTMapperMapsEveryKind: the CLI's client maps every kind of the
// deployconfig API without discovery; a kind it missed would make every
// command that reads it fail against a real API server ("no matches for
// kind"), which the fake clients of the other tests do not show.
func TestRESTMapperMapsEveryKind(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := dcv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := newRESTMapper()
	own := reflect.TypeFor[dcv1.DeploymentConfig]().PkgPath()
	for gvk, typ := range scheme.AllKnownTypes() {
		if typ.PkgPath() != own || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			t.Errorf("kind %s: %v", gvk.Kind, err)
		}
	}
}
