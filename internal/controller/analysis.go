package controller

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/analysis"
	"github.com/deployconfig/deployconfig/internal/trafficrouting"
)

// InvalidAnalysisError is why a rollout did not start: an analysis of the
// strategy that the API server could not check (a CEL condition that does
// not compile, a query template that does not render). Its message names
// each field.
type InvalidAnalysisError struct {
	Version int64
	Errs    field.ErrorList
}

// The bounds of an InvalidAnalysisError's message, which becomes the
// Progressing condition's message and an event's: a refused spec may hold
// hundreds of analyses' fields of up to 8192 characters each.
const (
	// maxListedErrors is how many errors the message names; a count
	// stands for the rest.
	maxListedErrors = 10
	// maxShownValue is how many bytes of a refused value it quotes.
	maxShownValue = 128
	// maxErrorText is how many bytes of one error it keeps (a CEL error
	// quotes the condition, once per problem found).
	maxErrorText = 512
)

// Error names the fields and what is wrong with them, on one line: the
// first maxListedErrors, each value cut at maxShownValue bytes and each
// error at maxErrorText.
func (e *InvalidAnalysisError) Error() string {
	return fmt.Sprintf("invalid analysis, version %d is not rolled out: %s", e.Version, fieldErrors(e.Errs))
}

// fieldErrors puts errs on one line, within the bounds above.
func fieldErrors(errs field.ErrorList) string {
	n := min(len(errs), maxListedErrors)
	msgs := make([]string, 0, n+1)
	for _, fe := range errs[:n] {
		msgs = append(msgs, cut(strings.Join(strings.Fields(shortValue(fe).Error()), " "), maxErrorText))
	}
	if more := len(errs) - n; more > 0 {
		msgs = append(msgs, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(msgs, "; ")
}

// InvalidHeaderRouteError is why a rollout did not start: a header route
// of its steps is one the Gateway API's data planes would refuse (a regex
// that is not RE2). Like an invalid analysis, only a change of the spec
// lets it start.
type InvalidHeaderRouteError struct {
	Version int64
	Errs    field.ErrorList
}

// Error names the fields and what is wrong with them, on one line.
func (e *InvalidHeaderRouteError) Error() string {
	return fmt.Sprintf("invalid header route, version %d is not rolled out: %s", e.Version, fieldErrors(e.Errs))
}

// ConditionReason is the reason of the Progressing condition it causes.
func (e *InvalidHeaderRouteError) ConditionReason() string {
	return dcv1.InvalidHeaderRouteReason
}

// refuseInvalidHeaderRoutes checks the header routes of the strategy's
// steps before a deployment is created, as refuseInvalidAnalyses does
// its analyses.
func (r *DeploymentConfigReconciler) refuseInvalidHeaderRoutes(dc *dcv1.DeploymentConfig) error {
	errs := trafficrouting.Validate(&dc.Spec.Strategy)
	if len(errs) == 0 {
		return nil
	}
	err := &InvalidHeaderRouteError{Version: dc.Status.LatestVersion, Errs: errs}
	r.Recorder.Eventf(dc, nil, corev1.EventTypeWarning, dcv1.InvalidHeaderRouteReason, "Create", "Couldn't deploy version %d: %v", dc.Status.LatestVersion, err)
	return err
}

// shortValue is fe with a string value longer than maxShownValue cut.
func shortValue(fe *field.Error) *field.Error {
	s, ok := fe.BadValue.(string)
	if !ok || len(s) <= maxShownValue {
		return fe
	}
	short := *fe
	short.BadValue = cut(s, maxShownValue)
	return &short
}

// cut is s if it has at most n bytes, else its first n bytes or fewer (at
// a character boundary) marked with "...".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// ConditionReason is the reason of the Progressing condition it causes.
func (e *InvalidAnalysisError) ConditionReason() string {
	return dcv1.InvalidAnalysisReason
}

// refuseInvalidAnalyses checks every analysis of the strategy before a
// deployment is created; an invalid one stops the rollout before it
// starts, with a Warning event naming the field.
func (r *DeploymentConfigReconciler) refuseInvalidAnalyses(dc *dcv1.DeploymentConfig) error {
	errs := r.invalid.check(dc)
	if len(errs) == 0 {
		return nil
	}
	err := &InvalidAnalysisError{Version: dc.Status.LatestVersion, Errs: errs}
	r.Recorder.Eventf(dc, nil, corev1.EventTypeWarning, dcv1.InvalidAnalysisReason, "Create", "Couldn't deploy version %d: %v", dc.Status.LatestVersion, err)
	return err
}

// analysisErrors validates every analysis of a strategy: the hooks', the
// canary steps', rollingParams' background analysis and blue-green's
// pre- and postPromotionAnalysis. analysis.Validate executes nothing the
// DeploymentConfig's author wrote, so this costs at most the length of
// the spec however hostile it is.
func analysisErrors(s *dcv1.DeploymentStrategy) field.ErrorList {
	var errs field.ErrorList
	for _, p := range analysis.Places(s) {
		errs = append(errs, analysis.Validate(p.Analysis, p.Path)...)
	}
	return errs
}

// maxRemembered bounds the invalid specs remembered; past it they are all
// forgotten, and each is checked once more on its next retry.
const maxRemembered = 4096

// invalidAnalyses remembers the generation of each DeploymentConfig whose
// analyses were found invalid, with the errors, so that the retries of a
// sync that cannot start its rollout do not check the same spec again.
// Compiling CEL conditions is the most expensive thing the controller does
// with user input: bounded, but up to a second of CPU for the largest
// hostile spec (BenchmarkValidateLargest). A nil *invalidAnalyses checks
// every time.
type invalidAnalyses struct {
	mu    sync.Mutex
	byUID map[types.UID]invalidSpec
}

// invalidSpec is a generation found invalid and why.
type invalidSpec struct {
	generation int64
	errs       field.ErrorList
}

// newInvalidAnalyses is an empty memory of invalid specs.
func newInvalidAnalyses() *invalidAnalyses {
	return &invalidAnalyses{byUID: map[types.UID]invalidSpec{}}
}

// check returns the errors of dc's analyses, from memory when this
// generation was found invalid before.
func (m *invalidAnalyses) check(dc *dcv1.DeploymentConfig) field.ErrorList {
	if m == nil {
		return analysisErrors(&dc.Spec.Strategy)
	}
	m.mu.Lock()
	known, ok := m.byUID[dc.UID]
	m.mu.Unlock()
	if ok && known.generation == dc.Generation {
		return known.errs
	}
	errs := analysisErrors(&dc.Spec.Strategy)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(errs) == 0 {
		delete(m.byUID, dc.UID)
		return nil
	}
	if len(m.byUID) >= maxRemembered {
		clear(m.byUID)
	}
	m.byUID[dc.UID] = invalidSpec{generation: dc.Generation, errs: errs}
	return errs
}
