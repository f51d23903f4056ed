package trafficrouting

import (
	"regexp/syntax"

	"k8s.io/apimachinery/pkg/util/validation/field"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Validate checks what the API server cannot about a strategy's header
// routes: that each regex is one RE2 accepts, as the Gateway API requires
// of a RegularExpression match. A data plane handed anything else rejects
// the route or, worse, spends its memory on it. Go's regexp/syntax parses
// RE2's syntax with RE2's limits (a repeat count of at most 1000, nested
// repeats included), in time linear in the regex's length, which the
// schema bounds.
func Validate(s *dcv1.DeploymentStrategy) field.ErrorList {
	if s.RollingParams == nil {
		return nil
	}
	var errs field.ErrorList
	steps := field.NewPath("spec", "strategy", "rollingParams", "steps")
	for i, step := range s.RollingParams.Steps {
		if step.SetHeaderRoute == nil {
			continue
		}
		match := steps.Index(i).Child("setHeaderRoute", "match")
		for j, m := range step.SetHeaderRoute.Match {
			if m.HeaderValue.Regex == nil {
				continue
			}
			if _, err := syntax.Parse(*m.HeaderValue.Regex, syntax.Perl); err != nil {
				errs = append(errs, field.Invalid(match.Index(j).Child("headerValue", "regex"), *m.HeaderValue.Regex,
					"must be an RE2 regular expression: "+err.Error()))
			}
		}
	}
	return errs
}
