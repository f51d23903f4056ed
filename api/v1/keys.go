package v1

// Labels and annotations that deployconfig sets on the objects it manages.
// Users and tools select on them, so their values are part of the API.
const (
	// KeyPrefix prefixes every deployconfig label and annotation key.
	KeyPrefix = "deployconfig.io/"

	// DeploymentConfigLabel is set on every ReplicationController of a
	// DeploymentConfig to the DeploymentConfig's name; the controller adopts
	// RCs by it.
	DeploymentConfigLabel = KeyPrefix + "deployment-config.name"
	// DeployerPodForDeploymentLabel is set on deployer and hook pods to the
	// name of their ReplicationController.
	DeployerPodForDeploymentLabel = KeyPrefix + "deployer-pod-for.name"
	// DeployerPodTypeLabel tells hook pods (hook-pre, hook-mid, hook-post)
	// from the deployer pod.
	DeployerPodTypeLabel = KeyPrefix + "deployer-pod.type"
	// DeploymentSettledLabel ("true") marks a deployment the controller has
	// set aside: finished, scaled to zero and older than the deployment that
	// is active. dc-controller does not cache such RCs, so that its memory
	// grows with the number of DeploymentConfigs rather than with their
	// history; it reads them from the API server when it prunes history,
	// and takes the label off one that is needed again.
	DeploymentSettledLabel = KeyPrefix + "deployment.settled"

	// DeploymentConfigSelectorLabel and DeploymentSelectorLabel are the plain
	// keys OpenShift puts on pods; Services select on them, so they are kept
	// without a prefix.
	DeploymentConfigSelectorLabel = "deploymentconfig"
	// DeploymentSelectorLabel holds the ReplicationController's name on its pods.
	DeploymentSelectorLabel = "deployment"

	// DeploymentConfigAnnotation holds the owning DeploymentConfig's name.
	DeploymentConfigAnnotation = KeyPrefix + "deployment-config.name"
	// DeploymentVersionAnnotation holds the deployment's version.
	DeploymentVersionAnnotation = KeyPrefix + "deployment-config.latest-version"
	// DeploymentAnnotation holds the deployment's (RC's) name on its pods.
	DeploymentAnnotation = KeyPrefix + "deployment.name"
	// DeploymentPhaseAnnotation holds the deployment's DeploymentPhase.
	DeploymentPhaseAnnotation = KeyPrefix + "deployment.phase"
	// DeploymentCancelledAnnotation is "true" once a user or the controller
	// has cancelled the deployment.
	DeploymentCancelledAnnotation = KeyPrefix + "deployment.cancelled"
	// DeploymentStatusReasonAnnotation says why the deployment is in its phase.
	DeploymentStatusReasonAnnotation = KeyPrefix + "deployment.status-reason"
	// DeployerPodAnnotation holds the deployer pod's name.
	DeployerPodAnnotation = KeyPrefix + "deployer-pod.name"
	// DesiredReplicasAnnotation holds the replica count the deployer scales to.
	DesiredReplicasAnnotation = KeyPrefix + "deployment.desired-replicas"
	// DeploymentReplicasAnnotation holds the replica count the deployer (or
	// the controller's fall-back) left the deployment at; a rolling update's
	// intermediate steps are not recorded.
	DeploymentReplicasAnnotation = KeyPrefix + "deployment.replicas"
	// EncodedDeploymentConfigAnnotation holds the whole DeploymentConfig, as
	// JSON, at the deployment's creation.
	EncodedDeploymentConfigAnnotation = KeyPrefix + "encoded-deployment-config"

	// AnalysisAnnotationPrefix starts the annotations in which the deployer
	// records the outcome of each analysis of a deployment, one per place
	// (deployconfig.io/analysis.pre, .mid, .post, or a canary step's label):
	// "<Phase>: <message>", e.g. `Failed: metric "error-rate" failed 1
	// measurement(s) (failureLimit 0): ...`.
	AnalysisAnnotationPrefix = KeyPrefix + "analysis."

	// DeployerPodCreateFailingSinceAnnotation records when the controller
	// first failed to create a deployment's deployer pod; after the
	// strategy's timeout the deployment fails.
	DeployerPodCreateFailingSinceAnnotation = KeyPrefix + "deployer-pod.create-failing-since"

	// ImageTriggerRequestAnnotation, set by a client (`kubectl dc rollout
	// latest`) to a token of its choice, asks the image-trigger controller to
	// resolve every DockerImage trigger now, automatic or not, and write the
	// images they resolve to. Triggers with automatic: false resolve only so.
	ImageTriggerRequestAnnotation = KeyPrefix + "image-trigger-request"

	// RolloutRequestAnnotation on a DeploymentConfig asks dc-controller to
	// cancel ("cancel"), retry ("retry") or promote ("promote",
	// "promote-full") its latest rollout, as `kubectl dc rollout
	// cancel/retry/promote [--full]` do, for clients that can only patch the
	// DeploymentConfig itself (Argo CD's resource actions). The controller
	// acts, or refuses with a RolloutRequestRefused event, and removes it.
	RolloutRequestAnnotation = KeyPrefix + "rollout-request"
	// ImageTriggerResponseAnnotation holds the token of the last request the
	// controller answered, written with the resolved images.
	ImageTriggerResponseAnnotation = KeyPrefix + "image-trigger-response"
	// ImageTriggerErrorAnnotation is written with the response when the
	// request failed (and no image was written for it); it says why.
	ImageTriggerErrorAnnotation = KeyPrefix + "image-trigger-error"

	// RolloutProgressAnnotation holds, as versioned JSON, the one record of
	// how far a deployment's rollout went through its strategy: the stage
	// (a canary step k of n, the final roll, a blue-green switch on trial or
	// for good, done), the wait it is in, the analysis it runs, the promote
	// requests it consumed, and who runs it. Only the rollout's runner
	// writes it, with a compare-and-swap; internal/deployment reads it
	// (deployment.Progress). Clients ask through PromoteRequestAnnotation.
	RolloutProgressAnnotation = KeyPrefix + "rollout"
	// PromoteRequestAnnotation, set on a running deployment's RC by `kubectl
	// dc rollout promote [--full]`, is a request the runner acts on once
	// (deployment.Request, as JSON): a promote ends the wait it names, a
	// full promote skips every remaining step and analysis.
	PromoteRequestAnnotation = KeyPrefix + "promote-request"
	// SwitchedTrial: the active Service selects the deployment while its
	// postPromotionAnalysis runs.
	SwitchedTrial = "trial"
	// SwitchedFinal: the active Service selects the deployment for good.
	SwitchedFinal = "final"
	// ServiceOfLabel marks a Service that dc-controller keeps pointed at a
	// BlueGreen DeploymentConfig's deployments (its active or preview
	// Service); its value is the DeploymentConfig's name. The controller's
	// watch of Services selects on it.
	ServiceOfLabel = KeyPrefix + "service-of"

	// DeployerModeAnnotation on a DeploymentConfig overrides dc-controller's
	// --deployer-mode for its rollouts: DeployerModePod or
	// DeployerModeControllerWhenPossible.
	DeployerModeAnnotation = KeyPrefix + "deployer-mode"
	// DeployerModePod runs every rollout in a deployer pod, as OpenShift does.
	DeployerModePod = "pod"
	// DeployerModeControllerWhenPossible runs a rollout that needs no
	// container of its own (no Custom strategy, no execNewPod hook) inside
	// the leading dc-controller, and every other rollout in a deployer pod.
	DeployerModeControllerWhenPossible = "controller-when-possible"
	// DeploymentRunnerController is the runner kind of a rollout
	// dc-controller runs (deployment.RunnerController).
	DeploymentRunnerController = "controller"
	// DeploymentLogAnnotation holds the log of a rollout dc-controller ran
	// (the lines dc-deploy prints in a deployer pod), its last 16 KiB: the
	// deployment keeps it as a deployer pod keeps its log.
	DeploymentLogAnnotation = KeyPrefix + "deployment.log"

	// DeployerPodIgnoreAnnotation on a DeploymentConfig makes the controller
	// create its ReplicationControllers but never a deployer pod.
	DeployerPodIgnoreAnnotation = KeyPrefix + "deployer-pod.ignore"
	// OpenShiftDeployerPodIgnoreAnnotation is OpenShift's key for
	// DeployerPodIgnoreAnnotation; `kubectl dc convert` maps it to ours.
	OpenShiftDeployerPodIgnoreAnnotation = "deploy.openshift.io/deployer-pod.ignore"

	// DeploymentCancelledByUser is the status reason of a user's cancel.
	DeploymentCancelledByUser = "cancelled by the user"
	// DeploymentCancelledNewerDeploymentExists is the status reason of a
	// deployment superseded by a newer one.
	DeploymentCancelledNewerDeploymentExists = "newer deployment was found running"
)

// Environment variables that tell deployer, hook and custom strategy
// containers which deployment they work on. The OPENSHIFT_ names keep
// scripts written for OpenShift working.
const (
	EnvDeploymentName               = "DC_DEPLOYMENT_NAME"
	EnvDeploymentNamespace          = "DC_DEPLOYMENT_NAMESPACE"
	EnvOpenShiftDeploymentName      = "OPENSHIFT_DEPLOYMENT_NAME"
	EnvOpenShiftDeploymentNamespace = "OPENSHIFT_DEPLOYMENT_NAMESPACE"
)

// DeploymentPhase is the state of one deployment (ReplicationController).
type DeploymentPhase string

const (
	// DeploymentPhaseNew means the deployer pod is not created yet.
	DeploymentPhaseNew DeploymentPhase = "New"
	// DeploymentPhasePending means the deployer pod is created but not running.
	DeploymentPhasePending DeploymentPhase = "Pending"
	// DeploymentPhaseRunning means the deployer pod is running the strategy.
	DeploymentPhaseRunning DeploymentPhase = "Running"
	// DeploymentPhaseComplete means the rollout succeeded.
	DeploymentPhaseComplete DeploymentPhase = "Complete"
	// DeploymentPhaseFailed means the rollout failed or was cancelled.
	DeploymentPhaseFailed DeploymentPhase = "Failed"
)

// ImageTriggerFailure is True while an ImageChange trigger cannot be
// resolved (registry unreachable, credentials refused, tag missing); it
// turns False once every trigger resolves again, and is only present once
// something went wrong.
const ImageTriggerFailure DeploymentConditionType = "ImageTriggerFailure"

// Reasons of the Progressing and Available conditions.
const (
	NewReplicationControllerCreatedReason  = "NewReplicationControllerCreated"
	ReplicationControllerCreateErrorReason = "ReplicationControllerCreateError"
	// InvalidAnalysisReason: an analysis of the strategy has a condition
	// that does not compile or a query that does not render, so the
	// rollout did not start (also the reason of the event).
	InvalidAnalysisReason                   = "InvalidAnalysis"
	ReplicationControllerUpdatedReason      = "ReplicationControllerUpdated"
	NewReplicationControllerAvailableReason = "NewReplicationControllerAvailable"
	ProgressDeadlineExceededReason          = "ProgressDeadlineExceeded"
	RolloutCancelledReason                  = "RolloutCancelled"
	PausedConfigReason                      = "DeploymentConfigPaused"
	ResumedConfigReason                     = "DeploymentConfigResumed"
	MinimumReplicasAvailableReason          = "MinimumReplicasAvailable"
	MinimumReplicasUnavailableReason        = "MinimumReplicasUnavailable"
)

// Reasons of the Ready, Reconciling and Stalled conditions (kstatus). The
// three carry the same reason and message: the one that is True says what
// state the DeploymentConfig is in, the others say why they are False.
const (
	// RolloutCompleteReason: the latest rollout is Complete and its pods
	// are available (Ready).
	RolloutCompleteReason = "RolloutComplete"
	// ManualRolloutReason: no trigger starts a rollout of this spec; one
	// starts with `kubectl dc rollout latest` (Ready).
	ManualRolloutReason = "ManualRollout"
	// RolloutPendingReason: the latest version's deployment is not created
	// yet (Reconciling).
	RolloutPendingReason = "RolloutPending"
	// RolloutInProgressReason: the latest rollout runs (Reconciling).
	RolloutInProgressReason = "RolloutInProgress"
	// ReplicasNotReadyReason: the latest rollout is Complete but the pods do
	// not match spec.replicas yet (Reconciling).
	ReplicasNotReadyReason = "ReplicasNotReady"
	// WaitingForImageReason: an automatic ImageChange trigger has not
	// resolved its first image (Reconciling).
	WaitingForImageReason = "WaitingForImage"
	// PausedReason: the DeploymentConfig is paused (Reconciling).
	PausedReason = "Paused"
	// RolloutFailedReason: the latest rollout failed (Stalled).
	RolloutFailedReason = "RolloutFailed"
	// AwaitingPromotionReason: the latest rollout waits for `kubectl dc
	// rollout promote` (a pause step, an Inconclusive analysis, a
	// blue-green promotion gate); Reconciling, and Argo CD calls it
	// Suspended.
	AwaitingPromotionReason = "AwaitingPromotion"
)

// PauseReason says why a rollout waits for a person
// (deployment.Wait, in RolloutProgressAnnotation).
type PauseReason string

// The reasons a rollout waits for `kubectl dc rollout promote`.
const (
	// PauseReasonPause: a canary pause step without a duration (or before
	// its duration is up).
	PauseReasonPause PauseReason = "Pause"
	// PauseReasonInconclusive: an analysis was Inconclusive; promote goes
	// on, cancel aborts.
	PauseReasonInconclusive PauseReason = "Inconclusive"
	// PauseReasonPromotion: a blue-green rollout waits to switch the active
	// Service.
	PauseReasonPromotion PauseReason = "Promotion"
)
