// Package imagetrigger is dc-controller's image-trigger controller. It
// stands in for OpenShift's ImageStreams: for every ImageChange
// trigger with from.kind DockerImage it polls the registry for the digest
// the tag points at, and when an automatic trigger's digest changes it
// writes `repo@sha256:…` into the trigger's containers and
// lastTriggeredImage, in one update of the DeploymentConfig's spec. The
// DeploymentConfig controller then rolls that out as an image change.
//
// Lookups are shared: every DeploymentConfig that watches the same tag with
// the same credentials subscribes to one periodic lookup, whose result fans
// out to all of them.
package imagetrigger

// Reasons of the ImageTriggerFailure condition, and event reasons.
const (
	// ReasonImageResolveFailed: a trigger's tag could not be resolved.
	ReasonImageResolveFailed = "ImageResolveFailed"
	// ReasonImagesResolved: every trigger resolves again.
	ReasonImagesResolved = "ImagesResolved"
	// ReasonImageTriggered (a Normal event): a trigger wrote a new image.
	ReasonImageTriggered = "ImageTriggered"
)

// dockerImageKind is the only trigger source this controller resolves;
// ImageStreamTag sources kept from converted manifests are left alone.
const dockerImageKind = "DockerImage"
