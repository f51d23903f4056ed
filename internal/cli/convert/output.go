package convert

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// YAML renders the documents as YAML, separated by "---" when there are
// several.
func (r *Result) YAML() ([]byte, error) {
	var buf bytes.Buffer
	for i, doc := range r.Documents {
		data, err := yaml.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("render document %d as YAML: %w", i+1, err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(data)
	}
	return buf.Bytes(), nil
}

// JSON renders the documents as indented JSON: one object, or a v1 List of
// them when there are several (JSON has no document separator).
func (r *Result) JSON() ([]byte, error) {
	var out any
	switch len(r.Documents) {
	case 0:
		return nil, nil
	case 1:
		out = r.Documents[0]
	default:
		// Lists among the documents are flattened into the one List.
		items := make([]any, 0, len(r.Documents))
		for _, doc := range r.Documents {
			if inner, ok := doc["items"].([]any); ok && isList(doc) {
				items = append(items, inner...)
				continue
			}
			items = append(items, doc)
		}
		out = map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
	}
	data, err := json.MarshalIndent(out, "", "    ")
	if err != nil {
		return nil, fmt.Errorf("render as JSON: %w", err)
	}
	return append(data, '\n'), nil
}
