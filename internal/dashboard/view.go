package dashboard

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/configsnapshot"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// maxEvents is how many of a DeploymentConfig's newest events its page
// shows.
const maxEvents = 20

// listRow is one DeploymentConfig on the list page.
type listRow struct {
	Namespace, Name string
	// Phase is the latest deployment's phase, or "" before the first.
	Phase    string
	Revision int64
	Ready    int32
	Desired  int32
	// Ready, Reconciling and Stalled are the kstatus conditions' statuses.
	ReadyCond, Reconciling, Stalled string
	Trigger                         string
	Paused                          bool
	// Waiting is why the latest rollout waits in a RolloutPolicy's line,
	// or "".
	Waiting string
}

// listRows builds the list page's rows, filtered by namespace and by a
// part of the name, sorted by namespace and name.
func listRows(s *store, namespace, query string) []listRow {
	var rows []listRow
	waiting := waitingReasons(s, namespace)
	rcs := map[string]*corev1.ReplicationController{}
	for _, dc := range s.DeploymentConfigs(namespace) {
		if query != "" && !strings.Contains(dc.Name, query) {
			continue
		}
		if _, seen := rcs[dc.Namespace]; !seen {
			for _, rc := range s.Deployments(dc.Namespace) {
				rcs[rc.Namespace+"/"+rc.Name] = rc
			}
			rcs[dc.Namespace] = nil
		}
		row := listRow{
			Namespace: dc.Namespace, Name: dc.Name,
			Revision: dc.Status.LatestVersion, Ready: dc.Status.ReadyReplicas, Desired: dc.Spec.Replicas,
			ReadyCond:   conditionStatus(dc, dcv1.DeploymentReady),
			Reconciling: conditionStatus(dc, dcv1.DeploymentReconciling),
			Stalled:     conditionStatus(dc, dcv1.DeploymentStalled),
			Trigger:     trigger(dc),
			Paused:      dc.Spec.Paused,
			Waiting:     waiting[dc.Namespace+"/"+dc.Name],
		}
		if rc := rcs[dc.Namespace+"/"+deployment.Name(dc.Name, dc.Status.LatestVersion)]; rc != nil && dc.Status.LatestVersion > 0 {
			row.Phase = string(deployment.Phase(rc))
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Namespace != rows[j].Namespace {
			return rows[i].Namespace < rows[j].Namespace
		}
		return rows[i].Name < rows[j].Name
	})
	return rows
}

// conditionStatus is a condition's status, or "" when it is not set.
func conditionStatus(dc *dcv1.DeploymentConfig, typ dcv1.DeploymentConditionType) string {
	for _, c := range dc.Status.Conditions {
		if c.Type == typ {
			return string(c.Status)
		}
	}
	return ""
}

// trigger says what started the latest rollout, as `kubectl dc get` does.
func trigger(dc *dcv1.DeploymentConfig) string {
	d := dc.Status.Details
	if d == nil || len(d.Causes) == 0 {
		return ""
	}
	var causes []string
	for _, c := range d.Causes {
		switch {
		case c.Type == dcv1.DeploymentTriggerOnImageChange && c.ImageTrigger != nil:
			causes = append(causes, "image("+c.ImageTrigger.From.Name+")")
		case c.Type == dcv1.DeploymentTriggerOnConfigChange:
			causes = append(causes, "config")
		default:
			causes = append(causes, strings.ToLower(string(c.Type)))
		}
	}
	return strings.Join(causes, ", ")
}

// dcView is one DeploymentConfig's page.
type dcView struct {
	Namespace, Name string
	Strategy        string
	Paused          bool
	Replicas        int32
	Conditions      []conditionView
	// Held names the RolloutPolicy that governs the DC and, while its
	// rollout waits, where in line and why; nil when none governs it.
	Held     *heldView
	Rollout  *rolloutView
	Versions []versionView
	Hooks    []hookView
	Analyses []analysisView
	Events   []eventView
	History  []historyView
	// Diff is the form that compares two revisions' pod templates.
	Diff diffData
	// Actions are the actions that apply now; nil when read-only.
	Actions []action
	// Undo lists the revisions undo can go back to; nil when read-only.
	Undo []int64
	// Missing names the kinds the user may not list.
	Missing []string
}

// conditionView is one status condition.
type conditionView struct {
	Type, Status, Reason, Message string
}

// rolloutView is the latest rollout.
type rolloutView struct {
	Version     int64
	Phase       string
	Reason      string
	Step, Steps string
	Weight      string
	PausedSince string
	PauseReason string
	// Terminal is true once the rollout ended: its step is where it
	// stopped, not where it waits.
	Terminal bool
	// Routed is true for a canary with trafficRouting: its weight is a
	// share of the requests, not of the pods.
	Routed   bool
	StepList []stepView
}

// stepView is one canary step: what it does and whether it is done,
// current or to come.
type stepView struct {
	Index       int
	Description string
	State       string
}

// versionView is one deployment that has (or should have) pods.
type versionView struct {
	Name     string
	Version  int64
	Phase    string
	Replicas int32
	Pods     []podView
	Latest   bool
}

// podView is one pod with its readiness.
type podView struct {
	Name, Phase string
	Ready       bool
}

// hookView is a hook pod of the latest rollout and its outcome.
type hookView struct {
	Type, Pod, Phase string
}

// eventView is one event.
type eventView struct {
	Time, Type, Reason, Object, Message string
}

// historyView is one revision.
type historyView struct {
	Version  int64
	Name     string
	Phase    string
	Created  string
	Reason   string
	Replicas int32
	// Config lists the configuration snapshots the revision's pods read
	// (docs/config-snapshots.md), as "ConfigMap/app: app-1a2b3c4d5e".
	Config []string
}

// action is a button of the DC page: Name is what the server runs, Label
// the button's words, Confirm the question asked before.
type action struct {
	Name, Label, Confirm string
}

// buildDCView gathers one DeploymentConfig's page from the store; nil when
// the store does not have it.
func buildDCView(s *store, namespace, name string, readOnly bool) *dcView {
	dc := s.DeploymentConfig(namespace, name)
	if dc == nil {
		return nil
	}
	rcs := deploymentsOf(s, dc)
	v := &dcView{
		Namespace: namespace, Name: name,
		Strategy: string(dc.Spec.Strategy.Type), Paused: dc.Spec.Paused, Replicas: dc.Spec.Replicas,
		Held: buildHeld(s, dc), Missing: s.missing,
	}
	for _, c := range dc.Status.Conditions {
		v.Conditions = append(v.Conditions, conditionView{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	var latest *corev1.ReplicationController
	if n := len(rcs); n > 0 && deployment.Version(rcs[n-1]) == dc.Status.LatestVersion {
		latest = rcs[n-1]
	}
	pods := s.Pods(namespace)
	if latest != nil {
		v.Rollout = buildRollout(latest)
		v.Hooks = hooksOf(pods, latest)
	}
	v.Versions = versionsOf(rcs, pods, latest)
	v.Events = eventsOf(s.Events(namespace), dc, rcs)
	for i := len(rcs) - 1; i >= 0; i-- {
		rc := rcs[i]
		v.History = append(v.History, historyView{
			Version: deployment.Version(rc), Name: rc.Name, Phase: string(deployment.Phase(rc)),
			Created: rc.CreationTimestamp.UTC().Format(time.DateTime), Reason: rc.Annotations[dcv1.DeploymentStatusReasonAnnotation],
			Replicas: deployment.Replicas(rc), Config: configOf(rc),
		})
		if !readOnly && deployment.Version(rc) != dc.Status.LatestVersion {
			v.Undo = append(v.Undo, deployment.Version(rc))
		}
	}
	v.Diff = diffData{Namespace: namespace, Name: name}
	for _, rc := range rcs {
		v.Diff.Versions = append(v.Diff.Versions, deployment.Version(rc))
	}
	if n := len(v.Diff.Versions); n > 0 {
		v.Diff.From, v.Diff.To = v.Diff.Versions[max(n-2, 0)], v.Diff.Versions[n-1]
	}
	if !readOnly {
		v.Actions = actionsFor(dc, latest)
	}
	return v
}

// deploymentsOf is a DeploymentConfig's deployments, oldest first.
func deploymentsOf(s *store, dc *dcv1.DeploymentConfig) []*corev1.ReplicationController {
	var rcs []*corev1.ReplicationController
	for _, rc := range s.Deployments(dc.Namespace) {
		if rc.Labels[dcv1.DeploymentConfigLabel] == dc.Name {
			rcs = append(rcs, rc)
		}
	}
	deployment.SortByVersion(rcs)
	return rcs
}

// buildRollout describes the latest rollout from what its RC records.
func buildRollout(rc *corev1.ReplicationController) *rolloutView {
	p := deployment.ProgressOf(rc)
	r := &rolloutView{
		Version: deployment.Version(rc), Phase: string(deployment.Phase(rc)),
		Reason:   rc.Annotations[dcv1.DeploymentStatusReasonAnnotation],
		Terminal: deployment.IsTerminal(deployment.Phase(rc)),
	}
	if p.Stage == deployment.StageSteps {
		r.Step, r.Steps = strconv.Itoa(p.Step), strconv.Itoa(p.Steps)
	}
	if p.Weight != nil {
		r.Weight = strconv.Itoa(int(*p.Weight))
	}
	if p.Wait != nil {
		r.PausedSince, r.PauseReason = p.Wait.Since.UTC().Format(time.RFC3339), string(p.Wait.Reason)
	}
	if r.PauseReason == string(dcv1.PauseReasonPause) {
		// "paused (Pause)" says nothing more than "paused".
		r.PauseReason = ""
	}
	encoded, err := deployment.DecodeConfig(rc)
	if err != nil || encoded.Spec.Strategy.RollingParams == nil {
		return r
	}
	r.Routed = encoded.Spec.Strategy.RollingParams.TrafficRouting != nil
	current := p.Step
	if p.Stage == deployment.StageFinalRoll || p.Switch == deployment.SwitchFinal {
		current = len(encoded.Spec.Strategy.RollingParams.Steps) + 1
	}
	phase := deployment.Phase(rc)
	for i, step := range encoded.Spec.Strategy.RollingParams.Steps {
		state := "to come"
		switch {
		case phase == dcv1.DeploymentPhaseComplete || i+1 < current:
			state = "done"
		case i+1 == current && phase == dcv1.DeploymentPhaseFailed:
			state = "stopped"
		case i+1 == current:
			state = "current"
		}
		r.StepList = append(r.StepList, stepView{Index: i + 1, Description: describeStep(step, encoded.Name), State: state})
	}
	return r
}

// describeStep says what a canary step does.
func describeStep(step dcv1.RollingStep, dcName string) string {
	switch {
	case step.SetWeight != nil:
		return fmt.Sprintf("setWeight %d%%", *step.SetWeight)
	case step.Pause != nil && step.Pause.Duration != nil:
		return fmt.Sprintf("pause %s (or until promote)", step.Pause.Duration.Duration)
	case step.Pause != nil:
		return "pause until promote"
	case step.Analysis != nil:
		var names []string
		for _, m := range step.Analysis.Metrics {
			names = append(names, m.Name)
		}
		return "analysis: " + strings.Join(names, ", ")
	case step.SetCanaryScale != nil:
		return step.SetCanaryScale.String()
	case step.SetHeaderRoute != nil:
		return step.SetHeaderRoute.String()
	}
	return "step"
}

// versionsOf lists the deployments that have replicas, and the latest, with
// their pods.
func versionsOf(rcs []*corev1.ReplicationController, pods []*corev1.Pod, latest *corev1.ReplicationController) []versionView {
	var out []versionView
	for i := len(rcs) - 1; i >= 0; i-- {
		rc := rcs[i]
		if rc != latest && deployment.Replicas(rc) == 0 && rc.Status.Replicas == 0 {
			continue
		}
		v := versionView{Name: rc.Name, Version: deployment.Version(rc), Phase: string(deployment.Phase(rc)), Replicas: deployment.Replicas(rc), Latest: rc == latest}
		selector := labels.SelectorFromSet(labels.Set{dcv1.DeploymentSelectorLabel: rc.Name})
		for _, p := range pods {
			if selector.Matches(labels.Set(p.Labels)) && p.Labels[dcv1.DeployerPodForDeploymentLabel] == "" {
				v.Pods = append(v.Pods, podView{Name: p.Name, Phase: string(p.Status.Phase), Ready: podReady(p)})
			}
		}
		sort.Slice(v.Pods, func(i, j int) bool { return v.Pods[i].Name < v.Pods[j].Name })
		out = append(out, v)
	}
	return out
}

// podReady reports a pod's Ready condition.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// hooksOf lists the hook pods of a deployment.
func hooksOf(pods []*corev1.Pod, rc *corev1.ReplicationController) []hookView {
	var out []hookView
	for _, p := range pods {
		typ := p.Labels[dcv1.DeployerPodTypeLabel]
		if p.Labels[dcv1.DeployerPodForDeploymentLabel] != rc.Name || !strings.HasPrefix(typ, "hook-") {
			continue
		}
		out = append(out, hookView{Type: strings.TrimPrefix(typ, "hook-"), Pod: p.Name, Phase: string(p.Status.Phase)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out
}

// eventsOf lists the newest events of a DeploymentConfig and its
// deployments, newest first. Their times are absolute: a page is rendered
// again only when something changes, and "2s ago" would go stale.
func eventsOf(events []*corev1.Event, dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) []eventView {
	names := map[string]bool{"DeploymentConfig/" + dc.Name: true}
	for _, rc := range rcs {
		names["ReplicationController/"+rc.Name] = true
	}
	var mine []*corev1.Event
	for _, e := range events {
		if names[e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name] {
			mine = append(mine, e)
		}
	}
	sort.SliceStable(mine, func(i, j int) bool { return eventTime(mine[i]).After(eventTime(mine[j])) })
	if len(mine) > maxEvents {
		mine = mine[:maxEvents]
	}
	out := make([]eventView, 0, len(mine))
	for _, e := range mine {
		out = append(out, eventView{
			Time: eventTime(e).UTC().Format(time.DateTime), Type: e.Type, Reason: e.Reason,
			Object: strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name, Message: e.Message,
		})
	}
	return out
}

// eventTime is when an event last happened.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// actionsFor lists the actions that apply to a DeploymentConfig now, each
// run as the CLI command of the same name.
func actionsFor(dc *dcv1.DeploymentConfig, latest *corev1.ReplicationController) []action {
	if dc.Spec.Paused {
		return []action{{Name: "resume", Label: "Resume", Confirm: fmt.Sprintf("Resume %s? Its triggers fire again.", dc.Name)}}
	}
	var out []action
	running := latest != nil && !deployment.IsTerminal(deployment.Phase(latest))
	switch {
	case running:
		out = append(out,
			action{Name: "promote", Label: "Promote", Confirm: fmt.Sprintf("Promote rollout #%d of %s to its next step?", dc.Status.LatestVersion, dc.Name)},
			action{Name: "promote-full", Label: "Promote fully", Confirm: fmt.Sprintf("Skip every remaining step of rollout #%d of %s and go to 100%%?", dc.Status.LatestVersion, dc.Name)},
			action{Name: "cancel", Label: "Cancel rollout", Confirm: fmt.Sprintf("Cancel rollout #%d of %s? The last complete version gets its replicas back.", dc.Status.LatestVersion, dc.Name)})
	case latest != nil && deployment.Phase(latest) == dcv1.DeploymentPhaseFailed:
		out = append(out,
			action{Name: "retry", Label: "Retry", Confirm: fmt.Sprintf("Retry the failed rollout #%d of %s from its first step?", dc.Status.LatestVersion, dc.Name)},
			action{Name: "latest", Label: "Roll out latest", Confirm: fmt.Sprintf("Start a new rollout of %s?", dc.Name)})
	default:
		out = append(out, action{Name: "latest", Label: "Roll out latest", Confirm: fmt.Sprintf("Start a new rollout of %s?", dc.Name)})
	}
	return append(out, action{Name: "pause", Label: "Pause", Confirm: fmt.Sprintf("Pause %s? No rollout starts until it is resumed.", dc.Name)})
}

// actionArgs is the kubectl dc command line of an action on a
// DeploymentConfig; ok is false for an unknown action.
func actionArgs(name, namespace, dcName string, revision int64) ([]string, bool) {
	var args []string
	switch name {
	case "latest", "cancel", "retry", "promote":
		args = []string{"rollout", name, dcName}
	case "promote-full":
		args = []string{"rollout", "promote", dcName, "--full"}
	case "pause", "resume":
		args = []string{"rollout", name, dcName}
	case "undo":
		if revision <= 0 {
			return nil, false
		}
		args = []string{"rollout", "undo", dcName, "--to-revision", fmt.Sprint(revision)}
	default:
		return nil, false
	}
	return append(args, "--namespace", namespace), true
}

// configOf lists the configuration snapshots a deployment's pods read;
// none for a deployment made without configSnapshots. Secrets are named,
// never shown.
func configOf(rc *corev1.ReplicationController) []string {
	set, ok, err := configsnapshot.Of(rc.Annotations)
	if !ok {
		return nil
	}
	if err != nil {
		return []string{"unreadable: " + err.Error()}
	}
	out := make([]string, 0, len(set))
	for _, e := range set {
		copied := e.Copy
		if copied == "" {
			copied = "(optional, missing)"
		}
		out = append(out, e.Kind+"/"+e.Name+": "+copied)
	}
	return out
}
