package imagetrigger

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/registry"
)

// trigger is one DockerImage ImageChange trigger of a DeploymentConfig.
type trigger struct {
	// index is the trigger's position in spec.triggers.
	index     int
	from      string
	automatic bool
	// tag is the parsed from.name; err says why it did not parse.
	tag name.Tag
	err error
}

// dockerTriggers returns the DeploymentConfig's ImageChange triggers with a
// DockerImage source.
func dockerTriggers(dc *dcv1.DeploymentConfig) []trigger {
	if dc.Spec.Template == nil {
		return nil
	}
	var out []trigger
	for i, t := range dc.Spec.Triggers {
		p := t.ImageChangeParams
		if t.Type != dcv1.DeploymentTriggerOnImageChange || p == nil || p.From.Kind != dockerImageKind {
			continue
		}
		tr := trigger{index: i, from: p.From.Name, automatic: p.Automatic}
		tr.tag, tr.err = registry.ParseTag(p.From.Name)
		out = append(out, tr)
	}
	return out
}

// outcome is what resolving a trigger gave: the image to deploy, by
// digest, and the error of the last lookup. Both may be set: a registry
// that stops answering leaves the last image it gave in place.
type outcome struct {
	trigger trigger
	image   string
	err     error
}

// answer is the reply to a "resolve now" request (dcv1.ImageTriggerRequestAnnotation).
type answer struct {
	token string
	// err is why the request failed; then none of its images is written.
	err error
}

// change is one container image a trigger rewrote.
type change struct {
	from       string
	image      string
	containers []string
}

// apply writes the images of the outcomes into the DeploymentConfig's
// triggers and containers and answers the request, in place. An automatic
// trigger always gets its image; a manual one only from a request that
// succeeded. Outcomes whose trigger has moved or changed since they were
// computed are skipped: the next sync recomputes them. It returns the
// image changes and whether anything changed.
func apply(dc *dcv1.DeploymentConfig, outcomes []outcome, ans *answer) ([]change, bool) {
	var changes []change
	changed := false
	for _, o := range outcomes {
		if o.image == "" || (!o.trigger.automatic && (ans == nil || ans.err != nil)) {
			continue
		}
		p := triggerParams(dc, o.trigger)
		if p == nil {
			continue
		}
		if p.LastTriggeredImage != o.image {
			p.LastTriggeredImage = o.image
			changed = true
		}
		if names := setImages(dc.Spec.Template, p.ContainerNames, o.image); len(names) > 0 {
			changes = append(changes, change{from: o.trigger.from, image: o.image, containers: names})
			changed = true
		}
	}
	if ans != nil && answerRequest(dc, ans) {
		changed = true
	}
	return changes, changed
}

// triggerParams returns the parameters of the trigger, if it is still at
// its index with the same source and automatic setting.
func triggerParams(dc *dcv1.DeploymentConfig, t trigger) *dcv1.DeploymentTriggerImageChangeParams {
	if t.index >= len(dc.Spec.Triggers) {
		return nil
	}
	p := dc.Spec.Triggers[t.index].ImageChangeParams
	if p == nil || p.From.Kind != dockerImageKind || p.From.Name != t.from || p.Automatic != t.automatic {
		return nil
	}
	return p
}

// setImages sets the image of the named containers and init containers of
// the template and returns the names of those it changed.
func setImages(template *corev1.PodTemplateSpec, names []string, image string) []string {
	if template == nil {
		return nil
	}
	var changed []string
	for _, list := range [][]corev1.Container{template.Spec.InitContainers, template.Spec.Containers} {
		for i := range list {
			c := &list[i]
			if c.Image == image || !slices.Contains(names, c.Name) {
				continue
			}
			c.Image = image
			changed = append(changed, c.Name)
		}
	}
	return changed
}

// answerRequest replaces a pending request with its answer, if the request
// is still the one answered. It reports whether it changed anything.
func answerRequest(dc *dcv1.DeploymentConfig, ans *answer) bool {
	if dc.Annotations[dcv1.ImageTriggerRequestAnnotation] != ans.token {
		return false
	}
	delete(dc.Annotations, dcv1.ImageTriggerRequestAnnotation)
	dc.Annotations[dcv1.ImageTriggerResponseAnnotation] = ans.token
	if ans.err != nil {
		dc.Annotations[dcv1.ImageTriggerErrorAnnotation] = truncate(ans.err.Error())
	} else {
		delete(dc.Annotations, dcv1.ImageTriggerErrorAnnotation)
	}
	return true
}

// failureMessage joins the errors of the outcomes into one message, or ""
// when there are none.
func failureMessage(outcomes []outcome) string {
	var parts []string
	for _, o := range outcomes {
		if o.err != nil {
			parts = append(parts, fmt.Sprintf("%s: %v", o.trigger.from, o.err))
		}
	}
	return truncate(strings.Join(parts, "; "))
}

// maxMessage bounds condition messages and annotations: registry errors
// can be long, and the object must stay small.
const maxMessage = 1024

// truncate shortens s to at most maxMessage bytes, on a rune boundary.
func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
