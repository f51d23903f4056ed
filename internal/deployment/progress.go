package deployment

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// ProgressFormat is the version of the progress record's JSON that this
// code writes. A record of a later format is refused rather than misread.
const ProgressFormat = 1

// Stage is where a rollout is in its strategy. Every record names one: no
// stage is ever implied by a missing field.
type Stage string

const (
	// StageStarted: the strategy has recorded nothing yet; it starts from
	// the beginning.
	StageStarted Stage = "Started"
	// StageSteps: a canary is at step Step of Steps (1-based).
	StageSteps Stage = "Steps"
	// StageFinalRoll: a canary is past its steps (or was promoted in full)
	// and rolls the rest of the way to 100%. A resumed rollout goes on
	// rolling from where the replicas are, never back to a step.
	StageFinalRoll Stage = "FinalRoll"
	// StageBeforeSwitch: a blue-green rollout brings the new deployment up
	// beside the live one, analyses it and waits for its promotion.
	StageBeforeSwitch Stage = "BeforeSwitch"
	// StageSwitched: the active Service (or every request of the routes)
	// moved to the new deployment; Switch says whether for good.
	StageSwitched Stage = "Switched"
)

// Switch says how far a blue-green rollout (or a routed canary) moved live
// traffic to the new deployment.
type Switch string

const (
	// SwitchNone: the live deployment serves.
	SwitchNone Switch = ""
	// SwitchTrial: the new deployment serves while its
	// postPromotionAnalysis may still switch back.
	SwitchTrial Switch = dcv1.SwitchedTrial
	// SwitchFinal: the new deployment serves for good (it is live).
	SwitchFinal Switch = dcv1.SwitchedFinal
)

// Wait is a rollout waiting: in a pause step, for a blue-green promotion,
// or for a person after an Inconclusive analysis.
type Wait struct {
	// Gate names what waits ("step-2", "promotion", "prePromotion",
	// "postPromotion"); a promote request answers one gate.
	Gate string `json:"gate"`
	// Reason says why it waits.
	Reason dcv1.PauseReason `json:"reason"`
	// Since is when the wait started; a resumed runner counts from it.
	Since metav1.Time `json:"since"`
	// Duration is how long a timed wait lasts; nil waits for a person.
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// Ends returns when a timed wait ends, and whether it is timed.
func (w *Wait) Ends() (time.Time, bool) {
	if w == nil || w.Duration == nil {
		return time.Time{}, false
	}
	return w.Since.Add(w.Duration.Duration), true
}

// RunnerKind says what runs a rollout.
type RunnerKind string

const (
	// RunnerPod: a deployer pod runs the rollout.
	RunnerPod RunnerKind = "pod"
	// RunnerController: the leading dc-controller runs it.
	RunnerController RunnerKind = dcv1.DeploymentRunnerController
)

// Runner says who runs the rollout's current attempt and since when.
type Runner struct {
	// Kind is a deployer pod or dc-controller.
	Kind RunnerKind `json:"kind"`
	// Holder is the deployer pod's name, or "dc-controller".
	Holder string `json:"holder,omitempty"`
	// Since is when the runner started the attempt; the
	// activeDeadlineSeconds of an in-controller rollout count from it.
	Since *metav1.Time `json:"since,omitempty"`
}

// Progress is the one record of how far a rollout went: written by its
// runner (the strategy, in a deployer pod or in dc-controller) and, before
// the runner starts, by the controller that chooses the runner. Clients
// never write it: they write a Request, which the runner consumes and
// records here. Its JSON is the RC's deployconfig.io/rollout annotation.
type Progress struct {
	// Format is ProgressFormat.
	Format int `json:"format"`
	// Seq rises with every write; two writers that read the same record
	// cannot both write it (see Update).
	Seq int64 `json:"seq"`
	// Stage is where the strategy is.
	Stage Stage `json:"stage"`
	// Step and Steps: with StageSteps, the canary step (1-based) and the
	// number of steps.
	Step  int `json:"step,omitempty"`
	Steps int `json:"steps,omitempty"`
	// Weight is the weight the last setWeight step reached, if any.
	Weight *int32 `json:"weight,omitempty"`
	// Switch is how far live traffic moved to the new deployment.
	Switch Switch `json:"switch,omitempty"`
	// Wait is set while the rollout waits.
	Wait *Wait `json:"wait,omitempty"`
	// Passed names the gate whose wait ended last: a runner resumed
	// before it recorded the next step does not wait there again.
	Passed string `json:"passed,omitempty"`
	// Analysis names the gate whose analysis runs now, and since when.
	Analysis *RunningAnalysis `json:"analysis,omitempty"`
	// Consumed lists the IDs of the requests the runner acted on (the last
	// few), so that no request is acted on twice.
	Consumed []string `json:"consumed,omitempty"`
	// Runner is who runs the current attempt.
	Runner Runner `json:"runner"`
	// Log says where the log of an in-controller rollout is kept: the
	// deployconfig.io/deployment.log annotation ("annotation"); empty for
	// a deployer pod, whose log is the pod's.
	Log string `json:"log,omitempty"`
}

// RunningAnalysis is an analysis the runner measures now.
type RunningAnalysis struct {
	// Label names it ("step-3", "prePromotion").
	Label string `json:"label"`
	// Since is when it started.
	Since metav1.Time `json:"since"`
}

// LogInAnnotation is Progress.Log for a log kept on the RC.
const LogInAnnotation = "annotation"

// consumedKept bounds Progress.Consumed: a request is answered within a
// few writes of its arrival, and one request waits at a time.
const consumedKept = 8

// NewProgress is the record a deployment starts with: nothing done, to be
// run by its deployer pod.
func NewProgress(rcName string) Progress {
	return Progress{Format: ProgressFormat, Stage: StageStarted, Runner: Runner{Kind: RunnerPod, Holder: DeployerPodName(rcName)}}
}

// ReadProgress returns the deployment's progress record. A deployment made
// before the record existed has its progress read from the annotations it
// was kept in then, so that a rollout in flight across an upgrade of
// dc-controller goes on where it was. A record that cannot be read is an
// error: guessing could skip a gate.
func ReadProgress(rc *corev1.ReplicationController) (Progress, error) {
	raw, ok := rc.Annotations[dcv1.RolloutProgressAnnotation]
	if !ok {
		return legacyProgress(rc), nil
	}
	var p Progress
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return Progress{}, fmt.Errorf("replicationcontroller %s/%s: annotation %s: %w", rc.Namespace, rc.Name, dcv1.RolloutProgressAnnotation, err)
	}
	if p.Format != ProgressFormat {
		return Progress{}, fmt.Errorf("replicationcontroller %s/%s: annotation %s has format %d, this dc-controller reads format %d",
			rc.Namespace, rc.Name, dcv1.RolloutProgressAnnotation, p.Format, ProgressFormat)
	}
	if p.Stage == "" {
		return Progress{}, fmt.Errorf("replicationcontroller %s/%s: annotation %s names no stage", rc.Namespace, rc.Name, dcv1.RolloutProgressAnnotation)
	}
	return p, nil
}

// ProgressOf is ReadProgress for readers that only report (status, the CLI,
// the dashboard): an unreadable record reads as a new one.
func ProgressOf(rc *corev1.ReplicationController) Progress {
	p, err := ReadProgress(rc)
	if err != nil {
		return NewProgress(rc.Name)
	}
	return p
}

// legacyProgress reads the progress of a deployment whose rollout started
// before the record existed, from the keys it was kept in: the canary step,
// the weight, the pause and the blue-green switch.
func legacyProgress(rc *corev1.ReplicationController) Progress {
	a := rc.Annotations
	p := NewProgress(rc.Name)
	if a[legacyRunner] == dcv1.DeploymentRunnerController {
		p.Runner = Runner{Kind: RunnerController, Holder: "dc-controller"}
		if t, err := time.Parse(time.RFC3339, a[legacyRunnerStarted]); err == nil {
			p.Runner.Since = &metav1.Time{Time: t}
		}
		p.Log = LogInAnnotation
	}
	if w, err := strconv.ParseInt(a[legacyWeight], 10, 32); err == nil {
		p.Weight = new(int32(w))
	}
	step, errStep := strconv.Atoi(a[legacyStep])
	steps, errSteps := strconv.Atoi(a[legacySteps])
	if errStep == nil && errSteps == nil && step >= 1 && step <= steps {
		p.Stage, p.Step, p.Steps = StageSteps, step, steps
	}
	switch Switch(a[legacySwitched]) {
	case SwitchTrial, SwitchFinal:
		p.Stage, p.Switch = StageSwitched, Switch(a[legacySwitched])
	}
	if since, err := time.Parse(time.RFC3339, a[legacyPausedSince]); err == nil {
		reason := dcv1.PauseReason(a[legacyPauseReason])
		if reason == "" {
			reason = dcv1.PauseReasonPause
		}
		w := &Wait{Reason: reason, Since: metav1.Time{Time: since}, Gate: legacyGate(p, reason)}
		if d, err := time.ParseDuration(a[legacyPauseDuration]); err == nil {
			w.Duration = &metav1.Duration{Duration: d}
		}
		p.Wait = w
		if reason == dcv1.PauseReasonPromotion {
			p.Stage = StageBeforeSwitch
		}
	}
	return p
}

// legacyGate names the gate of a wait recorded in the old keys.
func legacyGate(p Progress, reason dcv1.PauseReason) string {
	switch {
	case p.Stage == StageSteps:
		return StepGate(p.Step)
	case reason == dcv1.PauseReasonPromotion:
		return GatePromotion
	case p.Switch == SwitchTrial:
		return GatePostPromotion
	}
	return GatePrePromotion
}

// The keys progress was kept in before the record; read only to migrate.
const (
	legacyStep          = dcv1.KeyPrefix + "deployment.step"
	legacySteps         = dcv1.KeyPrefix + "deployment.steps"
	legacyWeight        = dcv1.KeyPrefix + "deployment.weight"
	legacyPausedSince   = dcv1.KeyPrefix + "deployment.paused-since"
	legacyPauseDuration = dcv1.KeyPrefix + "deployment.pause-duration"
	legacyPauseReason   = dcv1.KeyPrefix + "deployment.pause-reason"
	legacySwitched      = dcv1.KeyPrefix + "deployment.switched"
	legacyRunner        = dcv1.KeyPrefix + "deployment.runner"
	legacyRunnerStarted = dcv1.KeyPrefix + "deployment.runner-started"
)

// legacyKeys are removed by the first write of the record.
var legacyKeys = []string{legacyStep, legacySteps, legacyWeight, legacyPausedSince, legacyPauseDuration, legacyPauseReason,
	legacySwitched, legacyRunner, legacyRunnerStarted}

// Gates that are not canary steps.
const (
	// GatePromotion: a blue-green rollout waits to switch.
	GatePromotion = "promotion"
	// GatePrePromotion and GatePostPromotion: a blue-green analysis.
	GatePrePromotion  = "prePromotion"
	GatePostPromotion = "postPromotion"
)

// StepGate names the gate of canary step k (1-based).
func StepGate(k int) string { return "step-" + strconv.Itoa(k) }

// BackgroundGate names the wait after canary step k that an Inconclusive
// background analysis holds the rollout in.
func BackgroundGate(k int) string { return StepGate(k) + "-background" }

// Encode returns the record as its annotation's value.
func (p Progress) Encode() string {
	data, err := json.Marshal(p)
	if err != nil {
		// The record holds only strings, numbers and times.
		panic(fmt.Sprintf("encode progress: %v", err))
	}
	return string(data)
}

// HasConsumed reports whether the runner acted on the request.
func (p Progress) HasConsumed(id string) bool { return slices.Contains(p.Consumed, id) }

// Consume records that the runner acted on a request.
func (p *Progress) Consume(id string) {
	if p.HasConsumed(id) {
		return
	}
	p.Consumed = append(p.Consumed, id)
	if over := len(p.Consumed) - consumedKept; over > 0 {
		p.Consumed = slices.Delete(p.Consumed, 0, over)
	}
}

// IsSwitchedFinal reports whether live traffic moved to the deployment for
// good.
func IsSwitchedFinal(rc *corev1.ReplicationController) bool {
	return ProgressOf(rc).Switch == SwitchFinal
}

// IsOnTrial reports whether the active Service was switched to the
// deployment while its postPromotionAnalysis runs.
func IsOnTrial(rc *corev1.ReplicationController) bool {
	return ProgressOf(rc).Switch == SwitchTrial
}

// RunsInController reports whether dc-controller, not a deployer pod, runs
// the deployment's rollout.
func RunsInController(rc *corev1.ReplicationController) bool {
	return ProgressOf(rc).Runner.Kind == RunnerController
}

// RetryPatch returns the merge patch that moves a failed deployment back
// to New for a retry: without its cancel mark and failure reason, and with
// its progress record reset, so that the retried rollout starts its
// strategy again (a leftover step would resume a pause with no canary
// pods, a leftover wait would shorten a pause, a leftover analysis outcome
// or log would describe the attempt that failed). The patch carries rc's
// resourceVersion: it fails if the deployment changed since rc was read.
// No runner runs a failed deployment, so the retry is the record's only
// writer.
//
// A switch made for good stays: that deployment serves (see Live), and its
// retried runner must not switch the active Service back to the version it
// replaced. The requests it consumed stay consumed, and so does one it
// left unanswered.
func RetryPatch(rc *corev1.ReplicationController) ([]byte, error) {
	old := ProgressOf(rc)
	fresh := NewProgress(rc.Name)
	fresh.Seq = old.Seq + 1
	fresh.Consumed = old.Consumed
	if req, ok := ReadRequest(rc); ok {
		// A request the failed attempt never acted on is not the retry's.
		fresh.Consume(req.ID)
	}
	if old.Switch == SwitchFinal {
		fresh.Switch, fresh.Stage = SwitchFinal, StageSwitched
	}
	annotations := map[string]*string{
		dcv1.DeploymentPhaseAnnotation:        new(string(dcv1.DeploymentPhaseNew)),
		dcv1.DeploymentCancelledAnnotation:    nil,
		dcv1.DeploymentStatusReasonAnnotation: nil,
		dcv1.DeploymentLogAnnotation:          nil,
		dcv1.RolloutProgressAnnotation:        new(fresh.Encode()),
	}
	for k := range rc.Annotations {
		if isResetOnRetry(k) {
			annotations[k] = nil
		}
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": rc.ResourceVersion, "annotations": annotations}})
}

// IsProgressKey reports whether an annotation key is the deployment's
// progress record, for code that treats annotations by key (a cache
// deciding what to share) without reading the record itself.
func IsProgressKey(key string) bool {
	return key == dcv1.RolloutProgressAnnotation
}

// isResetOnRetry reports whether an annotation describes the attempt a
// retry replaces: an analysis outcome, the log, the old keys of progress.
func isResetOnRetry(key string) bool {
	return key == dcv1.DeploymentLogAnnotation || strings.HasPrefix(key, dcv1.AnalysisAnnotationPrefix) || slices.Contains(legacyKeys, key)
}

// AnalysisKey is the annotation that keeps the outcome of the deployment's
// analysis of a place (a gate's label).
func AnalysisKey(label string) string { return dcv1.AnalysisAnnotationPrefix + label }

// AnalysisOutcomes returns the recorded analysis outcomes by label.
func AnalysisOutcomes(rc *corev1.ReplicationController) map[string]string {
	out := map[string]string{}
	for k, v := range rc.Annotations {
		if label, ok := strings.CutPrefix(k, dcv1.AnalysisAnnotationPrefix); ok {
			out[label] = v
		}
	}
	return out
}

// Log returns the log of an in-controller rollout as its deployment keeps it.
func Log(rc *corev1.ReplicationController) string {
	return rc.Annotations[dcv1.DeploymentLogAnnotation]
}

// LogPatch returns the annotation change that keeps log on the deployment.
func LogPatch(log string) map[string]*string {
	return map[string]*string{dcv1.DeploymentLogAnnotation: &log}
}

// SetProgress writes p as rc's progress record in memory, for a writer
// that builds a whole deployment object (and for tests that need a
// deployment at a given point of its rollout).
func SetProgress(rc *corev1.ReplicationController, p Progress) {
	if rc.Annotations == nil {
		rc.Annotations = map[string]string{}
	}
	if p.Format == 0 {
		p.Format = ProgressFormat
	}
	rc.Annotations[dcv1.RolloutProgressAnnotation] = p.Encode()
}

// ControllerRunnerPatch returns the annotation changes that record, in the
// write that moves a New deployment to Running, that dc-controller runs its
// rollout from now on and keeps its log on the deployment: the record with
// its runner, and no deployer pod (the RC was made naming one). The phase
// write's own test of the phase keeps it the only writer then: no runner
// has started.
func ControllerRunnerPatch(rc *corev1.ReplicationController, now time.Time) (map[string]*string, error) {
	p, err := ReadProgress(rc)
	if err != nil {
		return nil, err
	}
	p.Seq++
	p.Runner = Runner{Kind: RunnerController, Holder: "dc-controller", Since: &metav1.Time{Time: now.UTC().Truncate(time.Second)}}
	p.Log = LogInAnnotation
	return map[string]*string{
		dcv1.RolloutProgressAnnotation: new(p.Encode()),
		dcv1.DeployerPodAnnotation:     nil,
	}, nil
}

// StartInController makes a deployment about to be created one that
// dc-controller runs from its creation: Running, with the runner and the
// kept log recorded and no deployer pod named. One write, the create,
// then takes the rollout from nothing to its first scale, where New then
// Running would be two, each behind the controller's rate limiter. The
// create itself keeps it the only writer: nothing else knows the
// deployment yet.
func StartInController(rc *corev1.ReplicationController, now time.Time) error {
	changes, err := ControllerRunnerPatch(rc, now)
	if err != nil {
		return err
	}
	for key, value := range changes {
		if value == nil {
			delete(rc.Annotations, key)
			continue
		}
		rc.Annotations[key] = *value
	}
	rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseRunning)
	return nil
}

// HasLog reports whether the deployment keeps an in-controller log.
func HasLog(rc *corev1.ReplicationController) bool {
	_, ok := rc.Annotations[dcv1.DeploymentLogAnnotation]
	return ok
}

// WithoutLog returns a copy of annotations without the log.
func WithoutLog(annotations map[string]string) map[string]string {
	out := maps.Clone(annotations)
	delete(out, dcv1.DeploymentLogAnnotation)
	return out
}
