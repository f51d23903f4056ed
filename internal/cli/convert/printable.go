package convert

import (
	"fmt"
	"sort"
)

// yamlPrintable reports whether YAML can hold r in a document: the YAML
// 1.2 printable set. JSON input can carry other characters (DEL, C0 and
// C1 controls) that no YAML output, and no Kubernetes name, can.
func yamlPrintable(r rune) bool {
	switch {
	case r == '\t', r == '\n', r == '\r', r == 0x85:
		return true
	case r >= 0x20 && r <= 0x7E:
		return true
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// unprintable finds the first key or string value under v with a
// character YAML cannot hold, and returns its path and the character; ""
// when there is none. Map keys are visited in order, so the answer is the
// same for the same input.
func unprintable(v any, path string) (string, rune) {
	switch v := v.(type) {
	case string:
		for _, r := range v {
			if !yamlPrintable(r) {
				return path, r
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child := path + "." + k
			if p, r := unprintable(k, child); p != "" {
				return p, r
			}
			if p, r := unprintable(v[k], child); p != "" {
				return p, r
			}
		}
	case []any:
		for i, item := range v {
			if p, r := unprintable(item, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p, r
			}
		}
	}
	return "", 0
}
