package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/analysis"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/trafficrouting"
)

func newDescribeCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a DeploymentConfig in detail",
		Long: `Show a DeploymentConfig in detail: its strategy and hooks, triggers, pod
template, its latest three rollouts with their pod counts, and recent events.`,
		Example:           `  kubectl dc describe web`,
		Args:              nameArg("describe"),
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := parseName(args[0])
			return a.describe(cmd.Context(), name)
		},
	}
}

func (a *app) describe(ctx context.Context, name string) error {
	c, err := a.clients()
	if err != nil {
		return err
	}
	dc, err := getDC(ctx, c, name)
	if err != nil {
		return err
	}
	rcs, err := listDeployments(ctx, c, dc)
	if err != nil {
		return err
	}
	pods := map[string]podCounts{}
	shown := newest(rcs, statusDeployments)
	for _, rc := range shown {
		if pods[rc.Name], err = countPods(ctx, c, rc); err != nil {
			return err
		}
	}
	events, err := dcEvents(ctx, c, dc, shown)
	if err != nil {
		return err
	}
	d := newDescriber(a.Streams.Out)
	a.describeConfig(d, dc)
	if p := governingPolicy(ctx, c, dc); p != nil {
		d.line(0, "Rollout Policy", policyLine(p, dc))
	}
	describeConditions(d, dc.Status.Conditions)
	a.describeDeployments(d, dc, rcs, pods)
	a.describeEvents(d, events)
	return d.flush()
}

// describeConfig writes the DeploymentConfig itself, with every default
// applied so that the reader sees the effective values.
func (a *app) describeConfig(d *describer, dc *dcv1.DeploymentConfig) {
	eff := dc.DeepCopy()
	dcv1.SetDefaults(eff)
	d.line(0, "Name", eff.Name)
	d.line(0, "Namespace", eff.Namespace)
	d.line(0, "Created", a.ago(eff.CreationTimestamp.Time))
	d.line(0, "Labels", keyValues(eff.Labels))
	d.line(0, "Annotations", keyValues(eff.Annotations))
	d.linef(0, "Latest Version", "%d", eff.Status.LatestVersion)
	d.line(0, "Selector", keyValues(eff.Spec.Selector))
	d.linef(0, "Replicas", "%d", eff.Spec.Replicas)
	if eff.Spec.Paused {
		d.line(0, "Paused", "yes: no rollouts until 'kubectl dc rollout resume "+eff.Name+"'")
	}
	if eff.Spec.Test {
		d.line(0, "Test", "yes: every rollout is scaled to 0 replicas when it ends")
	}
	if eff.Spec.MinReadySeconds > 0 {
		d.linef(0, "Min Ready Seconds", "%d", eff.Spec.MinReadySeconds)
	}
	d.line(0, "Triggers", describeTriggers(eff.Spec.Triggers))
	describeConfigSnapshots(d, eff)
	describeStrategy(d, &eff.Spec.Strategy)
	d.podTemplate(0, eff.Spec.Template)
}

// describeConditions writes the DeploymentConfig's conditions, with their
// messages: an image trigger's failure is only told there and in an event.
func describeConditions(d *describer, conditions []dcv1.DeploymentCondition) {
	if len(conditions) == 0 {
		return
	}
	d.heading(0, "Conditions")
	d.text(1, "Type\tStatus\tReason\tMessage")
	d.text(1, "----\t------\t------\t-------")
	for _, c := range conditions {
		d.text(1, fmt.Sprintf("%s\t%s\t%s\t%s", c.Type, c.Status, orNone(c.Reason), strings.TrimSpace(c.Message)))
	}
}

// describeTriggers lists triggers as oc does: "Config, Image(app:1, auto=true)".
func describeTriggers(triggers []dcv1.DeploymentTriggerPolicy) string {
	var out []string
	for _, t := range triggers {
		switch p := t.ImageChangeParams; {
		case t.Type == dcv1.DeploymentTriggerOnConfigChange:
			out = append(out, "Config")
		case p != nil:
			from := p.From.Name
			if p.From.Kind != "DockerImage" {
				from = p.From.Kind + " " + from
			}
			out = append(out, fmt.Sprintf("Image(%s, auto=%t)", from, p.Automatic))
		}
	}
	if len(out) == 0 {
		return "<none>: manual rollouts only"
	}
	return strings.Join(out, ", ")
}

func describeStrategy(d *describer, s *dcv1.DeploymentStrategy) {
	d.line(0, "Strategy", string(s.Type))
	if p := s.RollingParams; p != nil && s.Type == dcv1.DeploymentStrategyTypeRolling {
		d.linef(1, "Update Period", "%ds", deref(p.UpdatePeriodSeconds))
		d.linef(1, "Interval", "%ds", deref(p.IntervalSeconds))
		d.linef(1, "Timeout", "%ds", deref(p.TimeoutSeconds))
		d.line(1, "Max Surge", p.MaxSurge.String())
		d.line(1, "Max Unavailable", p.MaxUnavailable.String())
		describeHook(d, "Pre-deployment hook", p.Pre)
		describeHook(d, "Post-deployment hook", p.Post)
		describeTraffic(d, p.TrafficRouting)
		describeSteps(d, p.Steps)
		if p.Analysis != nil {
			d.heading(1, "Background analysis")
			describeAnalysis(d, 2, p.Analysis)
		}
	}
	if p := s.BlueGreenParams; p != nil && s.Type == dcv1.DeploymentStrategyTypeBlueGreen {
		describeBlueGreen(d, p)
	}
	if p := s.RecreateParams; p != nil && s.Type == dcv1.DeploymentStrategyTypeRecreate {
		d.linef(1, "Timeout", "%ds", deref(p.TimeoutSeconds))
		describeHook(d, "Pre-deployment hook", p.Pre)
		describeHook(d, "Mid-deployment hook", p.Mid)
		describeHook(d, "Post-deployment hook", p.Post)
	}
	if p := s.CustomParams; p != nil {
		d.heading(1, "Custom deployer")
		d.line(2, "Image", orNone(p.Image))
		d.line(2, "Command", orNone(strings.Join(p.Command, " ")))
		for _, e := range p.Environment {
			d.line(2, "Env "+e.Name, envValue(e))
		}
	}
	if s.ActiveDeadlineSeconds != nil {
		d.linef(1, "Active Deadline", "%ds", *s.ActiveDeadlineSeconds)
	}
}

// describeSteps shows a canary's steps, one line each.
func describeSteps(d *describer, steps []dcv1.RollingStep) {
	if len(steps) == 0 {
		return
	}
	d.heading(1, "Steps")
	for i, st := range steps {
		label := fmt.Sprintf("%d", i+1)
		switch {
		case st.SetWeight != nil:
			d.line(2, label, fmt.Sprintf("setWeight %d%%", *st.SetWeight))
		case st.Pause != nil && st.Pause.Duration != nil:
			d.line(2, label, "pause "+st.Pause.Duration.Duration.String())
		case st.Pause != nil:
			d.line(2, label, "pause until 'kubectl dc rollout promote'")
		case st.Analysis != nil:
			d.line(2, label, "analysis")
			describeAnalysis(d, 3, st.Analysis)
		case st.SetCanaryScale != nil:
			d.line(2, label, st.SetCanaryScale.String())
		case st.SetHeaderRoute != nil:
			d.line(2, label, describeHeaderRoute(st.SetHeaderRoute))
		}
	}
}

// describeTraffic shows trafficRouting: the Services and the routes.
func describeTraffic(d *describer, tr *dcv1.TrafficRouting) {
	if tr == nil {
		return
	}
	d.heading(1, "Traffic routing")
	d.line(2, "Stable Service", tr.StableService)
	d.line(2, "Canary Service", tr.CanaryService)
	for _, ref := range trafficrouting.Refs(tr) {
		what := ref.String()
		if len(ref.Rules) > 0 {
			what += " rules " + strings.Join(ref.Rules, ",")
		}
		if ref.HeaderRoutes {
			what += " (with header routes)"
		}
		d.line(2, "Route", what)
	}
	for _, m := range tr.ManagedRoutes {
		d.line(2, "Header route", m.Name)
	}
}

func describeHeaderRoute(h *dcv1.SetHeaderRoute) string {
	if len(h.Match) == 0 {
		return h.String()
	}
	var parts []string
	for _, m := range h.Match {
		v := m.HeaderValue
		switch {
		case v.Exact != nil:
			parts = append(parts, fmt.Sprintf("%s=%q", m.HeaderName, *v.Exact))
		case v.Prefix != nil:
			parts = append(parts, fmt.Sprintf("%s starts with %q", m.HeaderName, *v.Prefix))
		case v.Regex != nil:
			parts = append(parts, fmt.Sprintf("%s matches %q", m.HeaderName, *v.Regex))
		}
	}
	return "setHeaderRoute " + h.Name + ": " + strings.Join(parts, " and ") + " to the canary"
}

// describeBlueGreen shows the BlueGreen strategy's parameters.
func describeBlueGreen(d *describer, p *dcv1.BlueGreenDeploymentStrategyParams) {
	d.linef(1, "Timeout", "%ds", deref(p.TimeoutSeconds))
	d.line(1, "Active Service", p.ActiveService)
	d.line(1, "Preview Service", orNone(p.PreviewService))
	if p.AutoPromotionSeconds != nil {
		d.linef(1, "Auto Promotion", "after %ds", *p.AutoPromotionSeconds)
	} else {
		d.line(1, "Auto Promotion", "<none>: waits for 'kubectl dc rollout promote'")
	}
	d.linef(1, "Scale Down Delay", "%ds", deref(p.ScaleDownDelaySeconds))
	if p.PrePromotionAnalysis != nil {
		d.heading(1, "Pre-promotion analysis")
		describeAnalysis(d, 2, p.PrePromotionAnalysis)
	}
	if p.PostPromotionAnalysis != nil {
		d.heading(1, "Post-promotion analysis")
		describeAnalysis(d, 2, p.PostPromotionAnalysis)
	}
}

func describeHook(d *describer, title string, h *dcv1.LifecycleHook) {
	if h == nil {
		return
	}
	d.heading(1, fmt.Sprintf("%s (failure policy: %s)", title, h.FailurePolicy))
	if e := h.ExecNewPod; e != nil {
		d.line(2, "Container", e.ContainerName)
		d.line(2, "Command", strings.Join(e.Command, " "))
		for _, env := range e.Env {
			d.line(2, "Env "+env.Name, envValue(env))
		}
		if len(e.Volumes) > 0 {
			d.line(2, "Volumes", strings.Join(e.Volumes, ", "))
		}
	}
	for _, t := range h.TagImages {
		d.line(2, "Tag Image", fmt.Sprintf("container %s to %s %s", t.ContainerName, t.To.Kind, t.To.Name))
	}
	describeAnalysis(d, 2, h.Analysis)
}

// describeAnalysis shows an analysis: its counts and each metric's query
// and conditions.
func describeAnalysis(d *describer, level int, a *dcv1.Analysis) {
	if a == nil {
		return
	}
	count := func(p *int32, def int32) int32 {
		if p == nil {
			return def
		}
		return *p
	}
	d.line(level, "Analysis", fmt.Sprintf("%d measurement(s) every %s, failureLimit %d, consecutiveErrorLimit %d",
		count(a.Count, analysis.DefaultCount), a.Interval.Duration, count(a.FailureLimit, analysis.DefaultFailureLimit),
		count(a.ConsecutiveErrorLimit, analysis.DefaultConsecutiveErrorLimit)))
	if len(a.DryRun) > 0 {
		names := make([]string, len(a.DryRun))
		for i, m := range a.DryRun {
			names[i] = m.MetricName
		}
		d.line(level+1, "Dry Run", strings.Join(names, ", ")+" (measured and recorded only)")
	}
	for _, m := range a.Metrics {
		if m.Prometheus != nil {
			d.line(level+1, "Metric "+m.Name, m.Prometheus.Address+" "+strings.TrimSpace(m.Prometheus.Query))
		}
		if m.SuccessCondition != "" {
			d.line(level+2, "Success", m.SuccessCondition)
		}
		if m.FailureCondition != "" {
			d.line(level+2, "Failure", m.FailureCondition)
		}
	}
}

// describeAnalysisOutcomes shows the outcomes the deployer recorded on a
// deployment, in the order of their keys.
func describeAnalysisOutcomes(d *describer, rc *corev1.ReplicationController) {
	outcomes := deployment.AnalysisOutcomes(rc)
	for _, label := range slices.Sorted(maps.Keys(outcomes)) {
		d.line(1, "Analysis "+label, outcomes[label])
	}
}

// podCounts are a deployment's pods by phase.
type podCounts struct {
	running, waiting, succeeded, failed int
}

func countPods(ctx context.Context, c *Clients, rc *corev1.ReplicationController) (podCounts, error) {
	var counts podCounts
	selector := labels.SelectorFromSet(rc.Spec.Selector).String()
	list, err := c.Kube.CoreV1().Pods(rc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return counts, fmt.Errorf("list the pods of %s: %w", rc.Name, err)
	}
	for _, pod := range list.Items {
		switch pod.Status.Phase {
		case corev1.PodRunning:
			counts.running++
		case corev1.PodSucceeded:
			counts.succeeded++
		case corev1.PodFailed:
			counts.failed++
		default:
			counts.waiting++
		}
	}
	return counts, nil
}

func (a *app) describeDeployments(d *describer, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController, pods map[string]podCounts) {
	if len(rcs) == 0 {
		d.text(0, "")
		d.line(0, "Latest Deployment", "<none>")
		return
	}
	active := deployment.Live(rcs, nil)
	for _, rc := range newest(rcs, statusDeployments) {
		title := fmt.Sprintf("Deployment #%d", deployment.Version(rc))
		switch {
		case deployment.Version(rc) == dc.Status.LatestVersion:
			title += " (latest)"
		case active != nil && rc.Name == active.Name:
			title += " (active)"
		}
		d.text(0, "")
		d.heading(0, title)
		d.line(1, "Name", rc.Name)
		d.line(1, "Created", a.ago(rc.CreationTimestamp.Time))
		d.line(1, "Status", statusWord(rc))
		if reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; reason != "" {
			d.line(1, "Reason", reason)
		}
		describeAnalysisOutcomes(d, rc)
		describeDeploymentSnapshots(d, rc)
		wanted := deployment.Replicas(rc)
		if desired, ok := deployment.DesiredReplicas(rc); ok && !deployment.IsTerminal(deployment.Phase(rc)) {
			wanted = desired
		}
		d.linef(1, "Replicas", "%d current / %d desired", rc.Status.Replicas, wanted)
		p := pods[rc.Name]
		d.linef(1, "Pods Status", "%d Running / %d Waiting / %d Succeeded / %d Failed", p.running, p.waiting, p.succeeded, p.failed)
	}
}

// dcEvents returns the events of the DeploymentConfig and of the given
// deployments (why a rollout failed or was cancelled is recorded on its RC),
// oldest first.
func dcEvents(ctx context.Context, c *Clients, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) ([]corev1.Event, error) {
	objects := []struct{ kind, name string }{{"DeploymentConfig", dc.Name}}
	for _, rc := range rcs {
		objects = append(objects, struct{ kind, name string }{"ReplicationController", rc.Name})
	}
	var events []corev1.Event
	for _, o := range objects {
		selector := fields.Set{"involvedObject.kind": o.kind, "involvedObject.name": o.name}.AsSelector().String()
		list, err := c.Kube.CoreV1().Events(dc.Namespace).List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			return nil, fmt.Errorf("list the events of %s %q: %w", strings.ToLower(o.kind), o.name, err)
		}
		for _, e := range list.Items {
			// A server that ignores the field selector still gets the
			// right answer.
			if e.InvolvedObject.Kind == o.kind && e.InvolvedObject.Name == o.name {
				events = append(events, e)
			}
		}
	}
	sort.SliceStable(events, func(i, j int) bool { return eventTime(events[i]).Before(eventTime(events[j])) })
	return events, nil
}

// eventTime is when an event last happened.
func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func (a *app) describeEvents(d *describer, events []corev1.Event) {
	d.text(0, "")
	if len(events) == 0 {
		d.line(0, "Events", "<none>")
		return
	}
	d.heading(0, "Events")
	d.text(1, "Type\tReason\tAge\tFrom\tMessage")
	d.text(1, "----\t------\t---\t----\t-------")
	for _, e := range events {
		age := a.age(eventTime(e))
		if e.Count > 1 && !e.FirstTimestamp.IsZero() {
			age = fmt.Sprintf("%s (x%d over %s)", age, e.Count, a.age(e.FirstTimestamp.Time))
		}
		from := e.Source.Component
		if from == "" {
			from = e.ReportingController
		}
		d.text(1, fmt.Sprintf("%s\t%s\t%s\t%s\t%s", e.Type, e.Reason, age, from, strings.TrimSpace(e.Message)))
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
