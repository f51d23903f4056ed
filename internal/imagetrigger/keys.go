// Package imagetrigger is dc-controller's image-trigger controller. It
// stands in for OpenShift's ImageStreams (DESIGN §7): for every ImageChange
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

import dcv1 "github.com/deployconfig/deployconfig/api/v1"

// Annotations of the "resolve now" handshake that `kubectl dc rollout
// latest` uses, since triggers with automatic: false are resolved only when
// a user asks.
const (
	// TriggerRequestAnnotation, set by a client to a token of its choice (an
	// RFC 3339 timestamp is fine), asks the controller to resolve every
	// DockerImage trigger of the DeploymentConfig now, automatic or not,
	// and to write the images they resolve to.
	TriggerRequestAnnotation = dcv1.KeyPrefix + "image-trigger-request"
	// TriggerResponseAnnotation holds the token of the last request the
	// controller answered. It is written in the same update that writes the
	// resolved images and removes TriggerRequestAnnotation.
	TriggerResponseAnnotation = dcv1.KeyPrefix + "image-trigger-response"
	// TriggerErrorAnnotation is written with TriggerResponseAnnotation when
	// the request failed (and then no image was written for it); it says
	// why. A successful answer removes it.
	TriggerErrorAnnotation = dcv1.KeyPrefix + "image-trigger-error"
)

// ConditionImageTriggerFailure is True while an ImageChange trigger cannot
// be resolved (registry unreachable, credentials refused, tag missing,
// reference invalid). It turns False once every trigger resolves again.
// Like ReplicaFailure, it is only present once something went wrong.
const ConditionImageTriggerFailure dcv1.DeploymentConditionType = "ImageTriggerFailure"

// Reasons of ConditionImageTriggerFailure, and event reasons.
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
