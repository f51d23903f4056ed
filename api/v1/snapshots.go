package v1

// ConfigSnapshotFollow says which ConfigMaps and Secrets a DeploymentConfig's
// configuration snapshots follow.
// +kubebuilder:validation:Enum=Referenced;Named
type ConfigSnapshotFollow string

const (
	// ConfigSnapshotFollowReferenced follows every ConfigMap and Secret the
	// pod template references: env, envFrom, volumes and projected volumes.
	ConfigSnapshotFollowReferenced ConfigSnapshotFollow = "Referenced"
	// ConfigSnapshotFollowNamed follows only the ConfigMaps and Secrets
	// listed, of those the pod template references.
	ConfigSnapshotFollowNamed ConfigSnapshotFollow = "Named"
)

// ConfigSnapshots makes each deployment run on immutable copies of the
// ConfigMaps and Secrets its pods read (docs/config-snapshots.md): a change
// of their data rolls out like a change of the template, and a rollback or
// the automatic fall-back brings back the configuration of the version it
// restores.
//
// +kubebuilder:validation:XValidation:rule="self.follow != 'Named' || (has(self.configMaps) ? size(self.configMaps) : 0) + (has(self.secrets) ? size(self.secrets) : 0) > 0",message="follow Named needs at least one name in configMaps or secrets",fieldPath=".follow"
// +kubebuilder:validation:XValidation:rule="self.follow != 'Referenced' || ((!has(self.configMaps) || size(self.configMaps) == 0) && (!has(self.secrets) || size(self.secrets) == 0))",message="configMaps and secrets are only used with follow Named",fieldPath=".follow"
type ConfigSnapshots struct {
	// Follow is Referenced (every ConfigMap and Secret the template
	// references) or Named (those of configMaps and secrets).
	// +kubebuilder:default=Referenced
	// +optional
	Follow ConfigSnapshotFollow `json:"follow,omitempty"`

	// ConfigMaps are the names of the ConfigMaps to follow with Named.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	ConfigMaps []string `json:"configMaps,omitempty"`

	// Secrets are the names of the Secrets to follow with Named.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	Secrets []string `json:"secrets,omitempty"`
}

// DeploymentTriggerOnConfigData is the cause of a rollout that a change of
// the data of a followed ConfigMap or Secret started.
const DeploymentTriggerOnConfigData DeploymentTriggerType = "ConfigData"

// DeploymentCauseConfigData names the followed ConfigMaps and Secrets whose
// data changed.
type DeploymentCauseConfigData struct {
	// Changed are the sources whose data differs from the latest
	// deployment's snapshot, as Kind/name (e.g. ConfigMap/app).
	// +kubebuilder:validation:MaxItems=128
	// +optional
	Changed []string `json:"changed,omitempty"`
}

// Keys of configuration snapshots.
const (
	// ConfigSnapshotOfLabel is set on every snapshot copy to the name of
	// the ConfigMap or Secret it copies.
	ConfigSnapshotOfLabel = KeyPrefix + "snapshot-of"
	// ConfigSnapshotsAnnotation holds, on a deployment (RC), the snapshots
	// its pod template points at, as JSON (configsnapshot.Set).
	ConfigSnapshotsAnnotation = KeyPrefix + "config-snapshots"
	// ConfigSnapshotsOwnedAnnotation is "true" on a deployment once each of
	// its snapshot copies carries an owner reference to it.
	ConfigSnapshotsOwnedAnnotation = KeyPrefix + "config-snapshots.owned"
	// ConfigSnapshotPinAnnotation, on a DeploymentConfig, holds the version
	// whose snapshots new deployments use instead of the sources' current
	// data; while it is set, data changes do not roll out. rollout undo
	// sets it to the revision it restores; removing it follows the data
	// again.
	ConfigSnapshotPinAnnotation = KeyPrefix + "config-snapshot-pin"

	// ConfigSnapshotMissingReason is the Progressing condition's reason when
	// a required ConfigMap or Secret of the template does not exist.
	ConfigSnapshotMissingReason = "ConfigSnapshotSourceMissing"
	// ConfigSnapshotPinUnavailableReason is the reason of the Progressing
	// and Stalled conditions when the version ConfigSnapshotPinAnnotation
	// names has no snapshots to give (its deployment was deleted).
	ConfigSnapshotPinUnavailableReason = "ConfigSnapshotPinUnavailable"
	// RolloutQueuedReason is the Progressing condition's reason while a
	// rollout waits for dc-controller's concurrency limits
	// (--max-rollouts, --max-rollouts-per-namespace,
	// --halt-rollouts-on-failure).
	RolloutQueuedReason = "RolloutQueued"
)
