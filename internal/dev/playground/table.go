package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// tableAccept asks the API server for the table kubectl get prints.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// GetTable fetches the server-side table of a resource in a namespace (all
// namespaces when namespace is ""), with the columns `kubectl get` shows.
func GetTable(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) (*metav1.Table, error) {
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making a client: %w", err)
	}
	data, err := client.RESTClient().Get().AbsPath(resourcePath(gvr, namespace)).
		SetHeader("Accept", tableAccept).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
	}
	// Numbers stay json.Number, so that 1000000 prints as such, not 1e+06.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var table metav1.Table
	if err := dec.Decode(&table); err != nil {
		return nil, fmt.Errorf("decoding the %s table: %w", gvr.Resource, err)
	}
	if table.Kind != "Table" {
		return nil, fmt.Errorf("listing %s: the API server sent a %s, not a Table", gvr.Resource, table.Kind)
	}
	return &table, nil
}

// resourcePath is the REST path of a resource's collection.
func resourcePath(gvr schema.GroupVersionResource, namespace string) string {
	p := path.Join("/apis", gvr.Group, gvr.Version)
	if gvr.Group == "" {
		p = path.Join("/api", gvr.Version)
	}
	if namespace != "" {
		p = path.Join(p, "namespaces", namespace)
	}
	return path.Join(p, gvr.Resource)
}

// WriteTable prints a table the way `kubectl get` does: upper-case headers,
// aligned columns, no wide-only columns, empty cells for missing values.
func WriteTable(w io.Writer, table *metav1.Table) error {
	if len(table.Rows) == 0 {
		_, err := fmt.Fprintln(w, "No resources found.")
		return err
	}
	visible := visibleColumns(table.ColumnDefinitions)
	tw := tabwriter.NewWriter(w, 6, 4, 3, ' ', 0) // kubectl's settings
	header := make([]string, len(visible))
	for i, c := range visible {
		header[i] = strings.ToUpper(table.ColumnDefinitions[c].Name)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, row := range table.Rows {
		fmt.Fprintln(tw, strings.Join(rowCells(row, visible), "\t"))
	}
	return tw.Flush()
}

// visibleColumns are the indexes of the columns kubectl shows without -o
// wide.
func visibleColumns(cols []metav1.TableColumnDefinition) []int {
	var visible []int
	for i, c := range cols {
		if c.Priority == 0 {
			visible = append(visible, i)
		}
	}
	return visible
}

// rowCells formats the visible cells of a row.
func rowCells(row metav1.TableRow, visible []int) []string {
	cells := make([]string, len(visible))
	for i, c := range visible {
		if c < len(row.Cells) && row.Cells[c] != nil {
			cells[i] = fmt.Sprint(row.Cells[c])
		}
	}
	return cells
}
