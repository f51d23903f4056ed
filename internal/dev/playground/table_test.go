package playground

import (
	"bytes"
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWriteTable(t *testing.T) {
	columns := []metav1.TableColumnDefinition{
		{Name: "Name"}, {Name: "Revision"}, {Name: "Selector", Priority: 1}, {Name: "Triggered By"}, {Name: "Age"},
	}
	tests := []struct {
		name  string
		table metav1.Table
		want  string
	}{
		{
			name:  "kubectl's layout",
			table: metav1.Table{ColumnDefinitions: columns, Rows: []metav1.TableRow{{Cells: []any{"hello", json.Number("1"), "app=hello", "ConfigChange", "5s"}}}},
			want:  "NAME    REVISION   TRIGGERED BY   AGE\nhello   1          ConfigChange   5s\n",
		},
		{
			name:  "missing cells are empty",
			table: metav1.Table{ColumnDefinitions: columns, Rows: []metav1.TableRow{{Cells: []any{"hello", nil, nil}}}},
			want:  "NAME    REVISION   TRIGGERED BY   AGE\nhello                             \n",
		},
		{
			name:  "no rows",
			table: metav1.Table{ColumnDefinitions: columns},
			want:  "No resources found.\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteTable(&out, &tt.table); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", out.String(), tt.want)
			}
		})
	}
}

func TestResourcePath(t *testing.T) {
	dc := schema.GroupVersionResource{Group: "apps.deployconfig.io", Version: "v1", Resource: "deploymentconfigs"}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	tests := []struct {
		gvr  schema.GroupVersionResource
		ns   string
		want string
	}{
		{dc, "default", "/apis/apps.deployconfig.io/v1/namespaces/default/deploymentconfigs"},
		{dc, "", "/apis/apps.deployconfig.io/v1/deploymentconfigs"},
		{pods, "kube-system", "/api/v1/namespaces/kube-system/pods"},
	}
	for _, tt := range tests {
		if got := resourcePath(tt.gvr, tt.ns); got != tt.want {
			t.Errorf("resourcePath(%v, %q) = %s, want %s", tt.gvr, tt.ns, got, tt.want)
		}
	}
}
