package convert

import (
	"strings"
	"testing"
)

// Input with characters no YAML (and no Kubernetes name) can hold is
// refused with the field named, instead of converting into output that
// cannot be rendered (a fuzz finding, kept in testdata/fuzz).
func TestConvertRefusesUnprintableCharacters(t *testing.T) {
	for _, tc := range []struct {
		name, input, want string
	}{
		{name: "DEL in a volume name",
			input: "{\"apiVersion\":\"apps.openshift.io/v1\",\"kind\":\"DeploymentConfig\",\"metadata\":{\"name\":\"web\"},\"spec\":{\"template\":{\"spec\":{\"volumes\":[{\"name\":\"app-con\x7fig\"}]}}}}",
			want:  "document 1: spec.template.spec.volumes[0].name: contains the control character U+007F"},
		{name: "escaped C0 control in a label key",
			input: `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Service","metadata":{"labels":{"a\u0001b":"x"}}}]}`,
			want:  "document 1: items[0].metadata.labels.a\x01b: contains the control character U+0001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Convert([]byte(tc.input), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Convert error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := Convert([]byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: tab\tand-\u00e9\n"), Options{}); err != nil {
		t.Errorf("printable input refused: %v", err)
	}
}
