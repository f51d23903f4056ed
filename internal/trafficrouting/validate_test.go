package trafficrouting

import (
	"strings"
	"testing"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		regex string
		want  string // a part of the error; empty for none
	}{
		{"an RE2 regex", `^beta-[0-9]+$`, ""},
		{"nested repeats beyond RE2's limit", `((a{100}){100}){100}`, "steps[1].setHeaderRoute.match[0].headerValue.regex"},
		{"a repeat count beyond 1000", `a{1001}`, "must be an RE2 regular expression"},
		{"a backreference, which RE2 has not", `(a)\1`, "must be an RE2 regular expression"},
		{"a lookahead", `(?=a)`, "must be an RE2 regular expression"},
		{"unbalanced", `(a`, "missing closing )"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			regex := tc.regex
			s := &dcv1.DeploymentStrategy{RollingParams: &dcv1.RollingDeploymentStrategyParams{Steps: []dcv1.RollingStep{
				{SetWeight: new(int32)},
				{SetHeaderRoute: &dcv1.SetHeaderRoute{Name: "h", Match: []dcv1.HeaderRoutingMatch{{HeaderName: "X", HeaderValue: dcv1.StringMatch{Regex: &regex}}}}},
			}}}
			errs := Validate(s)
			switch {
			case tc.want == "" && len(errs) != 0:
				t.Fatalf("Validate = %v, want no error", errs)
			case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)):
				t.Fatalf("Validate = %v, want one error with %q", errs, tc.want)
			}
		})
	}
}
