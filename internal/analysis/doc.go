// Package analysis measures a deployment with metric queries and decides
// whether its rollout may go on: the runner behind lifecycle hooks with
// `analysis`, canary steps with `analysis` and blue-green's
// prePromotionAnalysis (docs/progressive-delivery.md).
//
// Run takes Analysis.Count measurements, one every Analysis.Interval (the
// first at once). A measurement of one metric renders the metric's query
// (Go template syntax, but only the fields of Vars: CheckQuery refuses
// anything else, and rendering substitutes the fields into the checked
// parse tree, so no template is ever executed), asks Prometheus's HTTP API
// for its instant value (at most MaxResponseBytes) and judges the result
// with the metric's CEL conditions:
//
//   - a vector is `result` as a list of doubles (one per series, in the
//     order Prometheus returns them; an empty vector is an empty list);
//     a scalar is `result` as a double. Other result types are an Error.
//     NaN and ±Inf are doubles too, judged as Argo Rollouts judges them:
//     an ordering with NaN is false, and isNaN and isInf test for them
//     (cel.go).
//   - failureCondition true: Failed. Otherwise successCondition true:
//     Successful. With only a successCondition that is false: Failed; with
//     only a failureCondition that is false: Successful; with both set and
//     neither true: Inconclusive.
//   - Prometheus unreachable, an HTTP or query error, or a condition that
//     cannot judge the result (result[0] of an empty vector, a non-bool
//     value) is an Error.
//
// Each metric keeps its own counts, as Argo Rollouts does: more than
// FailureLimit Failed measurements fail the analysis; more than
// ConsecutiveErrorLimit Errors in a row end it in Error; an Inconclusive
// measurement ends it Inconclusive (there is nobody to ask in a deployer).
// When every metric was measured Count times without that, it is
// Successful. Metrics named in Analysis.DryRun (DryRunAll: every one) are
// measured, logged and counted the same way, but their verdict only ends
// their own measurements and is recorded in the outcome's message: they
// never make the analysis Failed, Error or Inconclusive, as Argo's dryRun.
// Every measurement is written as one line to Options.Out.
package analysis
