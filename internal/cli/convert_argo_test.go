package cli

import "testing"

// TestConvertArgoRollouts converts Argo Rollouts manifests: canary steps
// with an inlined AnalysisTemplate, blue-green with pre- and
// post-promotion analyses, a background analysis, dry-run metrics, and
// the features that have no equivalent (each named in a warning, with its
// path), a canary routed through the Gateway API plugin and the other
// routers, which are named in warnings. A pause without a duration is bounded by the deployer pod's
// activeDeadlineSeconds, which a warning says.
func TestConvertArgoRollouts(t *testing.T) {
	runCases(t, []commandCase{{
		name: "canary with an analysis step",
		args: []string{"convert", "-f", "testdata/convert/argo-canary.yaml"},
	}, {
		name: "blue-green",
		args: []string{"convert", "-f", "testdata/convert/argo-bluegreen.yaml"},
	}, {
		name: "canary routed through the gateway api plugin",
		args: []string{"convert", "-f", "testdata/convert/argo-gateway.yaml"},
	}, {
		name: "what does not fit",
		args: []string{"convert", "-f", "testdata/convert/argo-unsupported.yaml"},
	}, {
		name: "analyses: background, dry run, post-promotion, and what they drop",
		args: []string{"convert", "-f", "testdata/convert/argo-analyses.yaml"},
	}, {
		name:  "bad pause duration",
		args:  []string{"convert", "-f", "-"},
		stdin: "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: web}\nspec:\n  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: web:1}]}}\n  strategy:\n    canary:\n      steps:\n      - pause: {duration: soon}\n",
	}})
}
