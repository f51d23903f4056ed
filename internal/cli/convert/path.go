package convert

import (
	"strconv"
	"strings"
)

// deletePath deletes the field at a path as encoding/json reports it, e.g.
// "spec.template.spec.containers[0].args". A path that does not resolve is
// left alone: the field is then already absent.
func deletePath(obj map[string]any, path string) {
	deleteParts(obj, strings.Split(path, "."))
}

// deleteParts removes the field the path parts lead to. A key may itself
// hold dots (a field path does not quote them), so at each level it tries
// the longest run of parts that names a key first.
func deleteParts(cur any, parts []string) bool {
	m, ok := cur.(map[string]any)
	if !ok || len(parts) == 0 {
		return false
	}
	for n := len(parts); n >= 1; n-- {
		name, indexes := splitIndexes(strings.Join(parts[:n], "."))
		child, found := m[name]
		if !found {
			continue
		}
		if n == len(parts) && len(indexes) == 0 {
			delete(m, name)
			return true
		}
		for _, index := range indexes {
			list, ok := child.([]any)
			if !ok || index < 0 || index >= len(list) {
				child = nil
				break
			}
			child = list[index]
		}
		if child != nil && deleteParts(child, parts[n:]) {
			return true
		}
	}
	return false
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
