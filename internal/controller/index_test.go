package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestNamespacedKeys(t *testing.T) {
	byLabel := func(o client.Object) []string {
		if v := o.GetLabels()["dc"]; v != "" {
			return []string{v}
		}
		return nil
	}
	tests := []struct {
		name string
		obj  any
		want []string
		err  bool
	}{
		{name: "one value", obj: &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Labels: map[string]string{"dc": "web"}}}, want: []string{"shop/web"}},
		{name: "no value", obj: &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "shop"}}, want: []string{}},
		{name: "not an object", obj: "web", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := namespacedKeys(byLabel)(tt.obj)
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want error %v", err, tt.err)
			}
			if !tt.err && !sets.New(got...).Equal(sets.New(tt.want...)) {
				t.Errorf("keys %q, want %q", got, tt.want)
			}
		})
	}
}
