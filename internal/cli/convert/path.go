package convert

import (
	"strconv"
	"strings"
)

// deletePath deletes the field at a path as encoding/json reports it, e.g.
// "spec.template.spec.containers[0].args". A path that does not resolve is
// left alone: the field is then already absent.
func deletePath(obj map[string]any, path string) {
	parts := strings.Split(path, ".")
	var cur any = obj
	for i, part := range parts {
		name, indexes := splitIndexes(part)
		m, ok := cur.(map[string]any)
		if !ok {
			return
		}
		if i == len(parts)-1 && len(indexes) == 0 {
			delete(m, name)
			return
		}
		cur = m[name]
		for _, index := range indexes {
			list, ok := cur.([]any)
			if !ok || index < 0 || index >= len(list) {
				return
			}
			cur = list[index]
		}
	}
}

// splitIndexes splits "containers[0]" into "containers" and [0].
func splitIndexes(part string) (string, []int) {
	open := strings.Index(part, "[")
	if open < 0 {
		return part, nil
	}
	name := part[:open]
	var indexes []int
	for _, piece := range strings.Split(part[open+1:], "[") {
		n, err := strconv.Atoi(strings.TrimSuffix(piece, "]"))
		if err != nil {
			return part, nil
		}
		indexes = append(indexes, n)
	}
	return name, indexes
}
