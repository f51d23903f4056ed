package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RolloutPolicy governs when the rollouts of the DeploymentConfigs it
// selects may start: how many at once, in which waves for one change, in
// which windows, and not after too many failures. It only holds rollouts
// back before their deployment is created; a rollout that runs is never
// cut off. Who may edit a RolloutPolicy may lift it (spec.suspend,
// spec.overrideUntil): break-glass is plain RBAC.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rp
// +kubebuilder:printcolumn:name="Max",type=string,JSONPath=`.spec.maxConcurrent`
// +kubebuilder:printcolumn:name="Selected",type=integer,JSONPath=`.status.selected`
// +kubebuilder:printcolumn:name="Running",type=integer,JSONPath=`.status.running`
// +kubebuilder:printcolumn:name="Waiting",type=integer,JSONPath=`.status.waiting`
// +kubebuilder:printcolumn:name="Holding",type=string,JSONPath=`.status.conditions[?(@.type=="Holding")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RolloutPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says which DeploymentConfigs the policy governs and how.
	Spec RolloutPolicySpec `json:"spec"`

	// Status is the policy's line and state, written by dc-controller.
	// +optional
	Status RolloutPolicyStatus `json:"status,omitempty"`
}

// RolloutPolicyList is a list of RolloutPolicies.
//
// +kubebuilder:object:root=true
type RolloutPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the RolloutPolicies.
	Items []RolloutPolicy `json:"items"`
}

// RolloutPolicySpec is the desired behaviour of a RolloutPolicy.
//
// +kubebuilder:validation:XValidation:rule="!has(self.waves) || self.waves.all(w, has(w.size)) || (!has(self.waves[size(self.waves)-1].size) && self.waves.filter(w, !has(w.size)).size() == 1)",message="only the last wave may omit size (it takes the rest)",fieldPath=".waves"
type RolloutPolicySpec struct {
	// Selector selects, by label, the DeploymentConfigs of the policy's
	// namespace it governs. An empty selector selects all of them. A
	// DeploymentConfig two policies select follows the one whose name
	// sorts first.
	Selector metav1.LabelSelector `json:"selector"`

	// MaxConcurrent is how many rollouts of the selected DeploymentConfigs
	// may run at once: a count, or a percentage of the selected
	// DeploymentConfigs (rounded up, at least one). Absent, no limit.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^[1-9][0-9]?%$|^100%$')",message="must be a positive integer or a percentage from 1% to 100%"
	// +optional
	MaxConcurrent *intstr.IntOrString `json:"maxConcurrent,omitempty"`

	// Waves split the rollouts one change starts (one ConfigMap's or
	// Secret's new data, one image, one manual rollout, one template
	// change) into ordered groups. A wave starts once every rollout of the
	// one before is Complete and that wave's soak has passed; a failed
	// rollout stops the later waves of its change until
	// `kubectl dc policy resume`. Rollouts beyond the listed waves form a
	// last wave of the rest.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Waves []RolloutWave `json:"waves,omitempty"`

	// Windows are when rollouts may start. Absent, at any time but a
	// freeze. A rollout triggered outside them waits for the next one.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Windows []RolloutWindow `json:"windows,omitempty"`

	// TimeZone is the IANA time zone of the windows, such as
	// "Europe/Berlin". Absent, UTC.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9_+/-]*$`
	// +optional
	TimeZone string `json:"timeZone,omitempty"`

	// Freezes are periods in which no rollout starts, whatever the windows.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Freezes []RolloutFreeze `json:"freezes,omitempty"`

	// CircuitBreaker stops new rollouts once too many have failed.
	// +optional
	CircuitBreaker *RolloutCircuitBreaker `json:"circuitBreaker,omitempty"`

	// Suspend lifts the policy: while true, the selected DeploymentConfigs
	// roll out as if no policy selected them (nor dc-controller's flags).
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// OverrideUntil lifts the windows, the freezes and the circuit breaker
	// until this time, for an emergency change; maxConcurrent and the
	// waves still hold.
	// +optional
	OverrideUntil *metav1.Time `json:"overrideUntil,omitempty"`
}

// RolloutWave is one group of the rollouts of a change.
type RolloutWave struct {
	// Size is how many rollouts the wave holds: a count, or a percentage of
	// the selected DeploymentConfigs (rounded up, at least one). Absent
	// (the last wave only), the rest.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^[1-9][0-9]?%$|^100%$')",message="must be a positive integer or a percentage from 1% to 100%"
	// +optional
	Size *intstr.IntOrString `json:"size,omitempty"`

	// Soak is how long the next wave waits after the last rollout of this
	// one completed, such as "10m".
	// +optional
	Soak *metav1.Duration `json:"soak,omitempty"`
}

// Weekday is a day of the week, as Go's time package names it.
// +kubebuilder:validation:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
type Weekday string

// RolloutWindow is a period in which rollouts may start: weekly (days,
// start and end) or a cron schedule with a duration.
//
// +kubebuilder:validation:XValidation:rule="has(self.cron) ? (has(self.duration) && !has(self.start) && !has(self.end) && !has(self.days)) : (has(self.start) && has(self.end) && !has(self.duration))",message="set either start and end (and days), or cron and duration"
// +kubebuilder:validation:XValidation:rule="!has(self.start) || !has(self.end) || self.start != self.end",message="must differ from start",fieldPath=".end"
type RolloutWindow struct {
	// Days are the days the window opens on. Absent, every day.
	// +kubebuilder:validation:MaxItems=7
	// +listType=set
	// +optional
	Days []Weekday `json:"days,omitempty"`

	// Start is when the window opens, as HH:MM in the policy's time zone.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +kubebuilder:validation:MaxLength=5
	// +optional
	Start string `json:"start,omitempty"`

	// End is when it closes, as HH:MM; an end before the start closes on
	// the next day.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +kubebuilder:validation:MaxLength=5
	// +optional
	End string `json:"end,omitempty"`

	// Cron opens the window at each time this five-field cron expression
	// (minute hour day-of-month month day-of-week, in the policy's time
	// zone) matches, such as "0 22 * * 5" for Fridays at 22:00. Fields
	// take *, numbers, ranges (1-5), lists (1,3) and steps (*/15).
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[0-9*,/ -]+$`
	// +optional
	Cron string `json:"cron,omitempty"`

	// Duration is how long a cron window stays open, such as "4h"; at most
	// a week.
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('168h')",message="must be more than 0s and at most 168h"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// RolloutFreeze is a period in which no rollout starts.
//
// +kubebuilder:validation:XValidation:rule="self.end > self.start",message="must be after start",fieldPath=".end"
type RolloutFreeze struct {
	// Name says why, such as "year-end".
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Name string `json:"name,omitempty"`

	// Start is when the freeze begins.
	Start metav1.Time `json:"start"`

	// End is when it ends.
	End metav1.Time `json:"end"`
}

// RolloutCircuitBreaker opens, and starts no rollout, once MaxFailures of
// the policy's rollouts have failed within Period.
type RolloutCircuitBreaker struct {
	// MaxFailures is how many failed rollouts open the breaker: a count, or
	// a percentage of the selected DeploymentConfigs (rounded up, at least
	// one).
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^[1-9][0-9]?%$|^100%$')",message="must be a positive integer or a percentage from 1% to 100%"
	MaxFailures intstr.IntOrString `json:"maxFailures"`

	// Period is how long a failure counts, such as "1h". Absent, one hour.
	// +optional
	Period *metav1.Duration `json:"period,omitempty"`
}

// RolloutPolicyStatus is what dc-controller observed and decided. It is
// the policy's memory: the order of the line and the waves of each change
// survive a restart of dc-controller.
type RolloutPolicyStatus struct {
	// ObservedGeneration is the generation of the spec this status follows.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Selected is how many DeploymentConfigs the policy selects.
	// +optional
	Selected int32 `json:"selected,omitempty"`

	// Running is how many of their rollouts run.
	// +optional
	Running int32 `json:"running,omitempty"`

	// Waiting is how many wait in line.
	// +optional
	Waiting int32 `json:"waiting,omitempty"`

	// Line is the rollouts that wait, first come first.
	// +kubebuilder:validation:MaxItems=5000
	// +optional
	Line []RolloutPolicyWaiter `json:"line,omitempty"`

	// Changes are the changes whose waves are under way.
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	Changes []RolloutPolicyChange `json:"changes,omitempty"`

	// Failures are the failed rollouts that count against the circuit
	// breaker and stop waves, oldest first.
	// +kubebuilder:validation:MaxItems=5000
	// +optional
	Failures []RolloutPolicyFailure `json:"failures,omitempty"`

	// NextWindow is when rollouts may next start, while the windows or a
	// freeze hold them.
	// +optional
	NextWindow *metav1.Time `json:"nextWindow,omitempty"`

	// ResumedAt is the last `kubectl dc policy resume` the controller
	// followed: failures before it stop nothing.
	// +optional
	ResumedAt *metav1.Time `json:"resumedAt,omitempty"`

	// Conditions: Holding is True while the policy holds every rollout
	// (a window, a freeze or the open breaker), with the reason;
	// Invalid is True when the spec cannot be followed (a bad time zone),
	// and then every rollout waits.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RolloutPolicyWaiter is one rollout in line.
type RolloutPolicyWaiter struct {
	// Name is the DeploymentConfig's.
	Name string `json:"name"`
	// Version is the rollout's (the DeploymentConfig's latestVersion).
	Version int64 `json:"version"`
	// Change names the change that started it, as in changes.
	// +optional
	Change string `json:"change,omitempty"`
	// Since is when it joined the line.
	Since metav1.Time `json:"since"`
	// Reason is why it waits: RolloutQueued, AwaitingWindow, AwaitingWave
	// or CircuitOpen.
	Reason string `json:"reason"`
}

// RolloutPolicyChange is one change whose rollouts go in waves.
type RolloutPolicyChange struct {
	// Name names the change: its cause and what changed, such as
	// "ConfigData ConfigMap/shared".
	Name string `json:"name"`
	// Wave is the wave under way, from 1.
	Wave int32 `json:"wave"`
	// Started are the rollouts of the change that started, with their wave.
	// +optional
	Started []RolloutPolicyStarted `json:"started,omitempty"`
	// WaveCompleted is when the last rollout of the wave before Wave
	// completed; the wave's soak runs from there.
	// +optional
	WaveCompleted *metav1.Time `json:"waveCompleted,omitempty"`
	// Stopped says which failed rollout stopped the later waves.
	// +optional
	Stopped string `json:"stopped,omitempty"`
}

// RolloutPolicyStarted is one started rollout of a change.
type RolloutPolicyStarted struct {
	// Name is the DeploymentConfig's.
	Name string `json:"name"`
	// Version is the rollout's.
	Version int64 `json:"version"`
	// Wave is its wave, from 1.
	Wave int32 `json:"wave"`
}

// RolloutPolicyFailure is one failed rollout.
type RolloutPolicyFailure struct {
	// Name is the DeploymentConfig's.
	Name string `json:"name"`
	// Version is the rollout's.
	Version int64 `json:"version"`
	// At is when the controller saw it failed.
	At metav1.Time `json:"at"`
}

func init() {
	SchemeBuilder.Register(&RolloutPolicy{}, &RolloutPolicyList{})
}
