package controller

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Details messages of the rollouts triggers start.
const (
	configChangeMessage = "config change"
	imageChangeMessage  = "image change"
)

// triggeredRollout decides whether the DeploymentConfig's triggers start a
// new rollout, given its latest deployment (nil when there is none yet). It
// returns the details to record, or nil when nothing fires.
func triggeredRollout(dc *dcv1.DeploymentConfig, latest *corev1.ReplicationController) *dcv1.DeploymentDetails {
	if latest == nil && dc.Status.LatestVersion > 0 {
		// The deployment of latestVersion is about to be created.
		return nil
	}
	if !imagesResolved(dc) || hasEmptyImage(dc.Spec.Template) {
		return nil
	}
	templateChanged := latest == nil || !templateMatches(dc, latest)
	if !templateChanged {
		return nil
	}
	if causes := imageCauses(dc, latest); len(causes) > 0 {
		return &dcv1.DeploymentDetails{Message: imageChangeMessage, Causes: causes}
	}
	if hasTrigger(dc, dcv1.DeploymentTriggerOnConfigChange) {
		return &dcv1.DeploymentDetails{
			Message: configChangeMessage,
			Causes:  []dcv1.DeploymentCause{{Type: dcv1.DeploymentTriggerOnConfigChange}},
		}
	}
	return nil
}

// imagesResolved reports whether every automatic ImageChange trigger has
// resolved an image: until then no rollout may start.
func imagesResolved(dc *dcv1.DeploymentConfig) bool {
	for _, t := range dc.Spec.Triggers {
		p := t.ImageChangeParams
		if t.Type == dcv1.DeploymentTriggerOnImageChange && p != nil && p.Automatic && p.LastTriggeredImage == "" {
			return false
		}
	}
	return true
}

// imageCauses returns a cause for every automatic ImageChange trigger whose
// image differs from the one the latest deployment was made with.
func imageCauses(dc *dcv1.DeploymentConfig, latest *corev1.ReplicationController) []dcv1.DeploymentCause {
	var deployed map[string]string
	if latest != nil {
		deployed = configSummary(latest).Images
	}
	var causes []dcv1.DeploymentCause
	for _, t := range dc.Spec.Triggers {
		p := t.ImageChangeParams
		if t.Type != dcv1.DeploymentTriggerOnImageChange || p == nil || !p.Automatic || p.LastTriggeredImage == "" {
			continue
		}
		if deployed[p.From.Name] == p.LastTriggeredImage {
			continue
		}
		causes = append(causes, dcv1.DeploymentCause{
			Type: dcv1.DeploymentTriggerOnImageChange,
			ImageTrigger: &dcv1.DeploymentCauseImageTrigger{
				From: corev1.ObjectReference{Kind: "DockerImage", Name: p.LastTriggeredImage},
			},
		})
	}
	return causes
}

func hasTrigger(dc *dcv1.DeploymentConfig, t dcv1.DeploymentTriggerType) bool {
	for _, trigger := range dc.Spec.Triggers {
		if trigger.Type == t {
			return true
		}
	}
	return false
}

// hasEmptyImage reports whether a container of the template has no image: a
// deployment of it could never run, so none is made.
func hasEmptyImage(template *corev1.PodTemplateSpec) bool {
	if template == nil {
		return true
	}
	for _, list := range [][]corev1.Container{template.Spec.InitContainers, template.Spec.Containers} {
		for _, c := range list {
			if strings.TrimSpace(c.Image) == "" {
				return true
			}
		}
	}
	return false
}
