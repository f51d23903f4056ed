package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/analysis"
)

// argoAPIVersion is the API of Argo Rollouts' Rollout and AnalysisTemplate.
const argoAPIVersion = "argoproj.io/v1alpha1"

// argoTemplates are the AnalysisTemplates (by name) and
// ClusterAnalysisTemplates (by "cluster/" + name) found in an input, which
// a Rollout's analyses are inlined from.
type argoTemplates map[string]map[string]any

// collectArgoTemplates finds the AnalysisTemplates of the input, before the
// documents are converted one by one: a Rollout may come before the
// templates it references. Documents that do not decode are left to
// Convert, which reports them.
func collectArgoTemplates(data []byte) argoTemplates {
	templates := argoTemplates{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw any
		if err := dec.Decode(&raw); err != nil {
			// io.EOF ends the input; any other error is Convert's to report.
			return templates
		}
		doc, _ := raw.(map[string]any)
		objs := []map[string]any{doc}
		if isList(doc) {
			items, _ := doc["items"].([]any)
			objs = objs[:0]
			for _, item := range items {
				objs = append(objs, asMap(item))
			}
		}
		for _, obj := range objs {
			if str(obj, "apiVersion") != argoAPIVersion {
				continue
			}
			name := str(child(obj, "metadata"), "name")
			switch str(obj, "kind") {
			case "AnalysisTemplate":
				templates[name] = obj
			case "ClusterAnalysisTemplate":
				templates["cluster/"+name] = obj
			}
		}
	}
}

// isArgo reports whether an object is one of Argo Rollouts' kinds.
func isArgo(apiVersion string) bool {
	return apiVersion == argoAPIVersion
}

// convertArgoObject converts a Rollout and drops the other Argo Rollouts
// kinds with a warning (AnalysisTemplates are inlined where a Rollout in the
// same input references them).
func convertArgoObject(obj map[string]any, res *Result) (map[string]any, error) {
	ref := objectRef(obj)
	switch str(obj, "kind") {
	case "Rollout":
		return convertRollout(obj, res)
	case "AnalysisTemplate", "ClusterAnalysisTemplate":
		res.warnf("%s: deployconfig has no analysis templates: dropped (its Prometheus metrics are inlined into the analyses of the Rollouts in the same input that reference it)", ref)
		return nil, nil
	}
	res.warnf("%s: %s %s has no equivalent in deployconfig: dropped", ref, argoAPIVersion, str(obj, "kind"))
	return nil, nil
}

// rolloutConversion is the conversion of one Rollout.
type rolloutConversion struct {
	ref  string
	name string
	res  *Result
	// warned holds the warnings given: an AnalysisTemplate used by several
	// analyses of the Rollout drops the same fields each time.
	warned map[string]bool
}

func (c *rolloutConversion) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if c.warned[msg] {
		return
	}
	c.warned[msg] = true
	c.res.warnf("%s: %s", c.ref, msg)
}

// warnDropped warns about every key of m that is not in kept, naming it
// under path.
func (c *rolloutConversion) warnDropped(m map[string]any, path string, why map[string]string, kept ...string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if slices.Contains(kept, k) {
			continue
		}
		reason := why[k]
		if reason == "" {
			reason = "has no equivalent in deployconfig"
		}
		c.warnf("%s.%s %s: dropped", path, k, reason)
	}
}

// convertRollout maps an Argo Rollout to a DeploymentConfig: its pod
// template, selector, replicas, history limit and minReadySeconds, and its
// canary steps (the Rolling strategy's steps) or blue-green fields (the
// BlueGreen strategy). What does not fit is named in a warning.
func convertRollout(obj map[string]any, res *Result) (map[string]any, error) {
	removeNulls(obj)
	c := &rolloutConversion{ref: objectRef(obj), res: res, warned: map[string]bool{}}
	meta := child(obj, "metadata")
	c.name = str(meta, "name")
	if c.name == "" {
		return nil, fmt.Errorf("%s: metadata.name is required", c.ref)
	}
	spec := child(obj, "spec")
	if spec == nil {
		return nil, fmt.Errorf("%s: spec is required", c.ref)
	}
	if _, ok := spec["workloadRef"]; ok {
		c.warnf("spec.workloadRef takes the pod template from another object, which deployconfig cannot: dropped the Rollout (copy the template into it and convert again)")
		return nil, nil
	}
	dc := &dcv1.DeploymentConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: dcv1.GroupVersion.String(), Kind: "DeploymentConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: str(meta, "namespace")},
	}
	if err := c.metadata(meta, dc); err != nil {
		return nil, err
	}
	if err := c.spec(spec, dc); err != nil {
		return nil, err
	}
	out, err := toMap(dc, c.ref)
	if err != nil {
		return nil, err
	}
	// The pod template goes over as it was written, not as a typed
	// round trip would render it (with empty resources and the like).
	template := child(spec, "template")
	delete(child(template, "metadata"), "creationTimestamp")
	child(out, "spec")["template"] = template
	return out, nil
}

// metadata copies labels and annotations (but kubectl's last-applied record).
func (c *rolloutConversion) metadata(meta map[string]any, dc *dcv1.DeploymentConfig) error {
	if err := decodeInto(meta["labels"], &dc.Labels); err != nil {
		return fmt.Errorf("%s: metadata.labels: %w", c.ref, err)
	}
	if err := decodeInto(meta["annotations"], &dc.Annotations); err != nil {
		return fmt.Errorf("%s: metadata.annotations: %w", c.ref, err)
	}
	delete(dc.Annotations, lastAppliedAnnotation)
	if len(dc.Annotations) == 0 {
		dc.Annotations = nil
	}
	return nil
}

// rolloutSpecWhy says why top-level Rollout fields are dropped.
var rolloutSpecWhy = map[string]string{
	"paused":                  "(a paused Rollout) would stop the DeploymentConfig's triggers here, which is not the same",
	"progressDeadlineSeconds": "has no equivalent (the strategy's timeoutSeconds bounds each wait for progress)",
	"progressDeadlineAbort":   "has no equivalent (a rollout that times out fails and falls back)",
	"analysis":                "(AnalysisRun history limits) has no equivalent",
	"restartAt":               "has no equivalent",
	"rollbackWindow":          "has no equivalent (every rollback is a new rollout: 'kubectl dc rollout undo')",
}

// spec maps the Rollout's spec.
func (c *rolloutConversion) spec(spec map[string]any, dc *dcv1.DeploymentConfig) error {
	c.warnDropped(spec, "spec", rolloutSpecWhy, "replicas", "selector", "template", "minReadySeconds", "revisionHistoryLimit", "strategy")
	dc.Spec.Replicas = 1 // Argo's default
	if v, ok := spec["replicas"]; ok {
		n, err := int32Of(v)
		if err != nil {
			return fmt.Errorf("%s: spec.replicas: %w", c.ref, err)
		}
		dc.Spec.Replicas = n
	}
	if err := c.intField(spec, "minReadySeconds", &dc.Spec.MinReadySeconds); err != nil {
		return err
	}
	if v, ok := spec["revisionHistoryLimit"]; ok {
		n, err := int32Of(v)
		if err != nil {
			return fmt.Errorf("%s: spec.revisionHistoryLimit: %w", c.ref, err)
		}
		dc.Spec.RevisionHistoryLimit = &n
	}
	if err := c.selector(child(spec, "selector"), dc); err != nil {
		return err
	}
	tmpl, ok := spec["template"].(map[string]any)
	if !ok {
		return fmt.Errorf("%s: spec.template is required", c.ref)
	}
	dc.Spec.Template = &corev1.PodTemplateSpec{}
	if err := decodeInto(tmpl, dc.Spec.Template); err != nil {
		return fmt.Errorf("%s: spec.template: %w", c.ref, err)
	}
	dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{{Type: dcv1.DeploymentTriggerOnConfigChange}}
	return c.strategy(child(spec, "strategy"), dc)
}

// intField decodes an optional int32 field of m into dst.
func (c *rolloutConversion) intField(m map[string]any, key string, dst *int32) error {
	v, ok := m[key]
	if !ok {
		return nil
	}
	n, err := int32Of(v)
	if err != nil {
		return fmt.Errorf("%s: spec.%s: %w", c.ref, key, err)
	}
	*dst = n
	return nil
}

// selector maps spec.selector.matchLabels; matchExpressions have no
// equivalent (a DeploymentConfig's selector is a map).
func (c *rolloutConversion) selector(sel map[string]any, dc *dcv1.DeploymentConfig) error {
	if err := decodeInto(sel["matchLabels"], &dc.Spec.Selector); err != nil {
		return fmt.Errorf("%s: spec.selector.matchLabels: %w", c.ref, err)
	}
	if _, ok := sel["matchExpressions"]; ok {
		c.warnf("spec.selector.matchExpressions cannot be expressed by a DeploymentConfig's selector (labels only): dropped")
	}
	return nil
}

// strategy maps spec.strategy.canary or spec.strategy.blueGreen.
func (c *rolloutConversion) strategy(s map[string]any, dc *dcv1.DeploymentConfig) error {
	canary, blueGreen := child(s, "canary"), child(s, "blueGreen")
	switch {
	case canary != nil && blueGreen != nil:
		return fmt.Errorf("%s: spec.strategy: expected one of canary or blueGreen, got both", c.ref)
	case canary != nil:
		return c.canary(canary, dc)
	case blueGreen != nil:
		return c.blueGreen(blueGreen, dc)
	}
	return fmt.Errorf("%s: spec.strategy: expected canary or blueGreen", c.ref)
}

// canaryWhy says why canary fields are dropped.
var canaryWhy = map[string]string{
	"antiAffinity":                "has no equivalent",
	"canaryMetadata":              "has no equivalent: the new deployment's pods carry the deployment label",
	"stableMetadata":              "has no equivalent",
	"scaleDownDelaySeconds":       "has no equivalent: a routed canary scales the old deployment down once it takes no request",
	"scaleDownDelayRevisionLimit": "has no equivalent",
	"abortScaleDownDelaySeconds":  "has no equivalent: an aborted canary scales down once the routes are back at 100% stable",
	"dynamicStableScale":          "has no equivalent: the stable deployment keeps its pods until the end",
	"minPodsPerReplicaSet":        "has no equivalent",
	"pingPong":                    "has no equivalent: the stable Service's selector moves to the new deployment at the end",
}

// canary maps a canary strategy to Rolling with steps.
func (c *rolloutConversion) canary(canary map[string]any, dc *dcv1.DeploymentConfig) error {
	c.warnDropped(canary, "spec.strategy.canary", canaryWhy, "steps", "maxSurge", "maxUnavailable", "analysis", "trafficRouting", "stableService", "canaryService")
	params := &dcv1.RollingDeploymentStrategyParams{TrafficRouting: c.trafficRouting(canary, dc.Namespace)}
	for _, key := range []string{"maxSurge", "maxUnavailable"} {
		v, ok := canary[key]
		if !ok {
			continue
		}
		var is intstr.IntOrString
		if err := decodeInto(v, &is); err != nil {
			return fmt.Errorf("%s: spec.strategy.canary.%s: %w", c.ref, key, err)
		}
		if key == "maxSurge" {
			params.MaxSurge = &is
		} else {
			params.MaxUnavailable = &is
		}
	}
	steps, _ := canary["steps"].([]any)
	for i, s := range steps {
		step, err := c.step(asMap(s), fmt.Sprintf("spec.strategy.canary.steps[%d]", i), params.TrafficRouting != nil)
		if err != nil {
			return err
		}
		if step != nil {
			params.Steps = append(params.Steps, *step)
		}
	}
	params.Analysis = c.backgroundAnalysis(canary, len(params.Steps) > 0)
	dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: params}
	return nil
}

// backgroundAnalysis maps the canary's strategy-level analysis to
// rollingParams.analysis, which runs beside the steps and so needs some.
func (c *rolloutConversion) backgroundAnalysis(canary map[string]any, hasSteps bool) *dcv1.Analysis {
	a, ok := canary["analysis"]
	if !ok {
		return nil
	}
	const path = "spec.strategy.canary.analysis"
	if !hasSteps {
		c.warnf("%s (a background analysis) runs beside the canary steps here, and no step was converted: dropped (add steps, or an analysis post hook)", path)
		return nil
	}
	return c.analysis(asMap(a), path)
}

// step maps one canary step; nil for a step that does not fit.
func (c *rolloutConversion) step(step map[string]any, path string, routed bool) (*dcv1.RollingStep, error) {
	if out, ok, err := c.trafficStep(step, path, routed); ok {
		return out, err
	}
	switch {
	case step["setWeight"] != nil:
		w, err := int32Of(step["setWeight"])
		if err != nil || w < 0 || w > 100 {
			return nil, fmt.Errorf("%s: %s.setWeight: expected a percentage from 0 to 100, got %v", c.ref, path, step["setWeight"])
		}
		return &dcv1.RollingStep{SetWeight: &w}, nil
	case step["pause"] != nil:
		pause, err := c.pause(asMap(step["pause"]), path+".pause")
		if err != nil {
			return nil, err
		}
		return &dcv1.RollingStep{Pause: pause}, nil
	case step["analysis"] != nil:
		a := c.analysis(asMap(step["analysis"]), path+".analysis")
		if a == nil {
			return nil, nil
		}
		return &dcv1.RollingStep{Analysis: a}, nil
	}
	keys := make([]string, 0, len(step))
	for k := range step {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	c.warnf("%s (%s) has no equivalent in deployconfig (steps set a weight, pause, run an analysis, or with traffic routing set the canary's scale or a header route): dropped", path, strings.Join(keys, ", "))
	return nil, nil
}

// pause maps a pause: its duration is a number of seconds or a string with
// a unit ("30s", "1h").
func (c *rolloutConversion) pause(p map[string]any, path string) (*dcv1.RolloutPause, error) {
	v, ok := p["duration"]
	if !ok {
		c.warnIndefiniteWait(path + " has no duration")
		return &dcv1.RolloutPause{}, nil
	}
	d, err := durationOf(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %s.duration: %w", c.ref, path, err)
	}
	return &dcv1.RolloutPause{Duration: &metav1.Duration{Duration: d}}, nil
}

// warnIndefiniteWait warns that a wait for `kubectl dc rollout promote`
// is not indefinite here: the deployer pod that waits is bounded by
// activeDeadlineSeconds.
func (c *rolloutConversion) warnIndefiniteWait(what string) {
	c.warnf("%s: the rollout waits for 'kubectl dc rollout promote' only as long as its deployer pod may run, spec.strategy.activeDeadlineSeconds "+
		"(default 21600 s = 6 h); then the rollout fails and the previous version serves: raise it if a person may take longer", what)
}

// blueGreenWhy says why blue-green fields are dropped.
var blueGreenWhy = map[string]string{
	"previewReplicaCount":         "has no equivalent: the new deployment comes up at full size",
	"antiAffinity":                "has no equivalent",
	"previewMetadata":             "has no equivalent: the new deployment's pods carry the deployment label",
	"activeMetadata":              "has no equivalent",
	"scaleDownDelayRevisionLimit": "has no equivalent: only the last complete deployment is kept up during a rollout",
	"abortScaleDownDelaySeconds":  "has no equivalent: an aborted deployment is scaled down at once",
	"maxUnavailable":              "has no equivalent: the new deployment comes up beside the old one",
}

// blueGreen maps a blue-green strategy to BlueGreen.
func (c *rolloutConversion) blueGreen(bg map[string]any, dc *dcv1.DeploymentConfig) error {
	c.warnDropped(bg, "spec.strategy.blueGreen", blueGreenWhy, "activeService", "previewService", "autoPromotionEnabled", "autoPromotionSeconds", "scaleDownDelaySeconds",
		"prePromotionAnalysis", "postPromotionAnalysis")
	params := &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: str(bg, "activeService"), PreviewService: str(bg, "previewService")}
	if params.ActiveService == "" {
		return fmt.Errorf("%s: spec.strategy.blueGreen.activeService is required", c.ref)
	}
	auto, hasAuto := bg["autoPromotionEnabled"].(bool)
	if _, ok := bg["autoPromotionEnabled"]; ok && !hasAuto {
		return fmt.Errorf("%s: spec.strategy.blueGreen.autoPromotionEnabled: expected true or false, got %v", c.ref, bg["autoPromotionEnabled"])
	}
	if !hasAuto || auto {
		// Argo promotes as soon as the new pods are ready, or
		// autoPromotionSeconds later.
		var seconds int32
		if v, ok := bg["autoPromotionSeconds"]; ok {
			n, err := int32Of(v)
			if err != nil {
				return fmt.Errorf("%s: spec.strategy.blueGreen.autoPromotionSeconds: %w", c.ref, err)
			}
			seconds = n
		}
		params.AutoPromotionSeconds = &seconds
	} else {
		c.warnIndefiniteWait("spec.strategy.blueGreen.autoPromotionEnabled is false")
		if _, ok := bg["autoPromotionSeconds"]; ok {
			c.warnf("spec.strategy.blueGreen.autoPromotionSeconds is ignored by Argo with autoPromotionEnabled false: dropped")
		}
	}
	delay := int32(30) // Argo's default
	if v, ok := bg["scaleDownDelaySeconds"]; ok {
		n, err := int32Of(v)
		if err != nil {
			return fmt.Errorf("%s: spec.strategy.blueGreen.scaleDownDelaySeconds: %w", c.ref, err)
		}
		delay = n
	}
	params.ScaleDownDelaySeconds = &delay
	if a, ok := bg["prePromotionAnalysis"]; ok {
		params.PrePromotionAnalysis = c.analysis(asMap(a), "spec.strategy.blueGreen.prePromotionAnalysis")
	}
	if a, ok := bg["postPromotionAnalysis"]; ok {
		params.PostPromotionAnalysis = c.analysis(asMap(a), "spec.strategy.blueGreen.postPromotionAnalysis")
	}
	dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeBlueGreen, BlueGreenParams: params}
	return nil
}

// argsPattern finds Argo's {{args.NAME}} in queries and limits.
var argsPattern = regexp.MustCompile(`\{\{\s*args\.([A-Za-z0-9_.-]+)\s*\}\}`)

// analysisWhy says why fields of a Rollout's analysis, or of an
// AnalysisTemplate's spec, are dropped.
var analysisWhy = map[string]string{
	"measurementRetention": "has no equivalent: no AnalysisRun keeps measurements; the outcome is recorded on the deployment (an annotation and an event) and the deployer's log has every measurement",
	"analysisRunMetadata":  "has no equivalent: no AnalysisRun object is created",
	"startingStep":         "has no equivalent: the background analysis starts with the first step",
}

// metricWhy says why fields of an AnalysisTemplate's metric are dropped.
var metricWhy = map[string]string{
	"initialDelay":            "has no equivalent (the first measurement is taken at once; a pause step before the analysis step waits)",
	"inconclusiveLimit":       "has no equivalent: the first Inconclusive measurement makes the analysis Inconclusive, which waits for 'kubectl dc rollout promote' (or cancel), as Argo's default inconclusiveLimit 0 does",
	"consecutiveSuccessLimit": "has no equivalent: the analysis succeeds once count measurements were taken without reaching a limit",
}

// analysis inlines the AnalysisTemplates an analysis references, with its
// args substituted: their Prometheus metrics make one analysis, with their
// dry-run metrics. It returns nil, with a warning, when nothing of it can
// be kept.
func (c *rolloutConversion) analysis(a map[string]any, path string) *dcv1.Analysis {
	c.warnDropped(a, path, analysisWhy, "templates", "args", "dryRun")
	templates, _ := a["templates"].([]any)
	if len(templates) == 0 {
		c.warnf("%s references no AnalysisTemplate: dropped", path)
		return nil
	}
	out := &dcv1.Analysis{}
	for i, t := range templates {
		tref := asMap(t)
		name, key, kind := str(tref, "templateName"), str(tref, "templateName"), "AnalysisTemplate"
		if cluster, _ := tref["clusterScope"].(bool); cluster {
			key, kind = "cluster/"+name, "ClusterAnalysisTemplate"
		}
		tmpl, ok := c.res.templates[key]
		if !ok {
			c.warnf("%s.templates[%d]: %s %q is not in the input, so its metrics cannot be inlined: dropped (convert it together with the Rollout)", path, i, kind, name)
			continue
		}
		from := fmt.Sprintf("%s %s", strings.ToLower(kind), name)
		spec := child(tmpl, "spec")
		c.warnDropped(spec, from+": spec", analysisWhy, "metrics", "args", "dryRun")
		args := c.args(spec["args"], a["args"], from+": spec.args", path+".args")
		first := len(out.Metrics)
		c.inlineMetrics(out, spec, args, from)
		c.dryRun(out, spec["dryRun"], out.Metrics[first:], from+": spec.dryRun")
	}
	if len(out.Metrics) == 0 {
		c.warnf("%s has no Prometheus metric left: dropped", path)
		return nil
	}
	c.dryRun(out, a["dryRun"], out.Metrics, path+".dryRun")
	for _, e := range analysis.Validate(out, field.NewPath(path)) {
		c.warnf("%s (CEL here, where Argo has expr: rewrite it)", e.Error())
	}
	return out
}

// args resolves analysis arguments: the template's defaults (under
// defaultsPath), overridden by the Rollout's values (under valuesPath). An
// argument from the pod template hash becomes {{.Deployment}} (the new
// deployment's name, which its pods carry as the deployment label),
// metadata.name and metadata.namespace become {{.DeploymentConfig}} and
// {{.Namespace}}; the rest (a Secret, another field) cannot be resolved,
// and each such argument the Rollout does not give a value to is named in
// a warning.
func (c *rolloutConversion) args(defaults, values any, defaultsPath, valuesPath string) map[string]string {
	resolved := map[string]string{}
	unresolved := map[string]string{} // name → warning
	set := func(list any, path string) {
		items, _ := list.([]any)
		for i, item := range items {
			arg := asMap(item)
			name := str(arg, "name")
			where := fmt.Sprintf("%s[%d]", path, i)
			if v, ok := arg["value"].(string); ok {
				resolved[name] = v
				delete(unresolved, name)
				continue
			}
			from := child(arg, "valueFrom")
			if from == nil {
				continue
			}
			delete(unresolved, name)
			switch {
			case str(from, "podTemplateHashValue") != "":
				resolved[name] = "{{.Deployment}}"
				c.warnf("%s.valueFrom.podTemplateHashValue (arg %q) becomes the deployment's name: match the pods' deployment label instead of rollouts-pod-template-hash in the query", where, name)
			case str(child(from, "fieldRef"), "fieldPath") == "metadata.name":
				resolved[name] = "{{.DeploymentConfig}}"
			case str(child(from, "fieldRef"), "fieldPath") == "metadata.namespace":
				resolved[name] = "{{.Namespace}}"
			default:
				delete(resolved, name)
				unresolved[name] = fmt.Sprintf("%s.valueFrom.%s (arg %q) cannot be resolved here (queries are rendered without Secrets or other fields): dropped, with what uses it", where, keysOf(from), name)
			}
		}
	}
	set(defaults, defaultsPath)
	set(values, valuesPath)
	names := make([]string, 0, len(unresolved))
	for name := range unresolved {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		c.warnf("%s", unresolved[name])
	}
	return resolved
}

// dryRun maps Argo's dryRun entries (a metric name, or a regular
// expression matching metric names, "*" for all) onto the metrics they
// match, naming in a warning an entry that matches none.
func (c *rolloutConversion) dryRun(out *dcv1.Analysis, list any, metrics []dcv1.AnalysisMetric, path string) {
	items, _ := list.([]any)
	for i, item := range items {
		pattern := str(asMap(item), "metricName")
		where := fmt.Sprintf("%s[%d].metricName %q", path, i, pattern)
		if pattern == "*" || pattern == ".*" {
			addDryRun(out, "*")
			continue
		}
		re, err := regexp.Compile("^(?:" + pattern + ")$")
		if err != nil {
			c.warnf("%s is not a metric name or a regular expression: dropped", where)
			continue
		}
		matched := false
		for _, m := range metrics {
			if re.MatchString(m.Name) {
				addDryRun(out, m.Name)
				matched = true
			}
		}
		if !matched {
			c.warnf("%s matches no metric that was kept: dropped", where)
		}
	}
}

// addDryRun adds a dry-run metric once.
func addDryRun(out *dcv1.Analysis, name string) {
	for _, d := range out.DryRun {
		if d.MetricName == name || d.MetricName == "*" {
			return
		}
	}
	if name == "*" {
		out.DryRun = nil
	}
	out.DryRun = append(out.DryRun, dcv1.DryRunMetric{MetricName: name})
}

// inlineMetrics adds the template's Prometheus metrics to out.
func (c *rolloutConversion) inlineMetrics(out *dcv1.Analysis, spec map[string]any, args map[string]string, from string) {
	metrics, _ := spec["metrics"].([]any)
	for i, m := range metrics {
		metric := asMap(m)
		where := fmt.Sprintf("%s: metrics[%d] (%s)", from, i, str(metric, "name"))
		prom := child(child(metric, "provider"), "prometheus")
		if prom == nil {
			c.warnf("%s: the %s provider has no equivalent (Prometheus only): dropped", where, keysOf(child(metric, "provider")))
			continue
		}
		query, ok := c.substitute(str(prom, "query"), args, where+".provider.prometheus.query")
		if !ok {
			continue
		}
		c.warnDropped(metric, where, metricWhy, "name", "interval", "count", "failureLimit", "consecutiveErrorLimit",
			"successCondition", "failureCondition", "provider")
		c.warnDropped(prom, where+".provider.prometheus", nil, "address", "query")
		out.Metrics = append(out.Metrics, dcv1.AnalysisMetric{
			Name:             str(metric, "name"),
			Prometheus:       &dcv1.PrometheusMetric{Address: str(prom, "address"), Query: query},
			SuccessCondition: str(metric, "successCondition"),
			FailureCondition: str(metric, "failureCondition"),
		})
		c.limits(out, metric, args, where)
	}
}

// limits takes the analysis-wide interval, count and limits from the first
// metric that sets them (Argo sets them per metric), warning when a later
// metric differs.
func (c *rolloutConversion) limits(out *dcv1.Analysis, metric map[string]any, args map[string]string, where string) {
	if v, ok := metric["interval"].(string); ok {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			c.warnf("%s.interval %q is not a duration: dropped", where, v)
		case out.Interval.Duration == 0:
			out.Interval = metav1.Duration{Duration: d}
		case out.Interval.Duration != d:
			c.warnf("%s.interval %s differs from the analysis' %s (one interval for all metrics here): dropped", where, d, out.Interval.Duration)
		}
	}
	for _, l := range []struct {
		key string
		dst **int32
	}{{"count", &out.Count}, {"failureLimit", &out.FailureLimit}, {"consecutiveErrorLimit", &out.ConsecutiveErrorLimit}} {
		v, ok := metric[l.key]
		if !ok {
			continue
		}
		if s, isString := v.(string); isString {
			resolved, ok := c.substitute(s, args, where+"."+l.key)
			if !ok {
				continue
			}
			v = resolved
		}
		n, err := int32Of(v)
		switch {
		case err != nil:
			c.warnf("%s.%s %v is not a number: dropped", where, l.key, v)
		case *l.dst == nil:
			*l.dst = &n
		case **l.dst != n:
			c.warnf("%s.%s %d differs from the analysis' %d (one %s for all metrics here): dropped", where, l.key, n, **l.dst, l.key)
		}
	}
	if out.Interval.Duration == 0 {
		// The API wants an interval even for one measurement; Argo's
		// metrics without one measure once (or back to back).
		out.Interval = metav1.Duration{Duration: analysis.DefaultInterval}
	}
}

// substitute replaces {{args.NAME}} with the arguments' values; it reports
// false, with a warning, when one has no value.
func (c *rolloutConversion) substitute(s string, args map[string]string, where string) (string, bool) {
	missing := ""
	out := argsPattern.ReplaceAllStringFunc(s, func(m string) string {
		name := argsPattern.FindStringSubmatch(m)[1]
		v, ok := args[name]
		if !ok {
			missing = name
			return m
		}
		return v
	})
	if missing != "" {
		c.warnf("%s uses the argument %q, which has no value: dropped", where, missing)
		return "", false
	}
	return out, true
}

// keysOf lists a map's keys, sorted and comma-separated.
func keysOf(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

// int32Of reads a whole number that fits an int32.
func int32Of(v any) (int32, error) {
	var n int64
	switch v := v.(type) {
	case int64:
		n = v
	case float64:
		if v != float64(int64(v)) {
			return 0, fmt.Errorf("expected a whole number, got %v", v)
		}
		n = int64(v)
	case string:
		i, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("expected a whole number, got %q", v)
		}
		n = i
	default:
		return 0, fmt.Errorf("expected a whole number, got %v", v)
	}
	if n < -1<<31 || n > 1<<31-1 {
		return 0, fmt.Errorf("%d is out of range", n)
	}
	return int32(n), nil
}

// durationOf reads Argo's pause duration: a number of seconds, or a string
// of a number and a unit (s, m or h), or a bare number in a string.
func durationOf(v any) (time.Duration, error) {
	if s, ok := v.(string); ok {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, nil
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("expected seconds or a duration such as 30s, 5m or 1h, got %q", s)
		}
		return d, nil
	}
	n, err := int32Of(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("expected seconds or a duration such as 30s, 5m or 1h, got %v", v)
	}
	return time.Duration(n) * time.Second, nil
}

// decodeInto decodes a generic value into a typed one through JSON.
func decodeInto(v, dst any) error {
	if v == nil {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, dst)
}

// toMap renders the converted DeploymentConfig as a document, without the
// empty status and timestamps a typed object carries.
func toMap(dc *dcv1.DeploymentConfig, ref string) (map[string]any, error) {
	data, err := json.Marshal(dc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	delete(out, "status")
	removeNulls(out)
	delete(child(out, "metadata"), "creationTimestamp")
	spec := child(out, "spec")
	if test, _ := spec["test"].(bool); !test {
		delete(spec, "test")
	}
	if strategy := child(spec, "strategy"); len(child(strategy, "resources")) == 0 {
		delete(strategy, "resources")
	}
	return out, nil
}
