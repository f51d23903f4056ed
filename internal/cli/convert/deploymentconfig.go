package convert

import (
	"encoding/json"
	"fmt"
	"strings"

	sjson "sigs.k8s.io/json"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// lastAppliedAnnotation holds kubectl apply's record of the old object; it
// describes an OpenShift object, so a later `kubectl apply` of the converted
// one would compute a wrong three-way merge from it.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// convertDeploymentConfig rewrites one OpenShift DeploymentConfig, in place,
// into ours and returns it.
func convertDeploymentConfig(dc map[string]any, opts Options, res *Result) (map[string]any, error) {
	ref := objectRef(dc)
	dc["apiVersion"] = dcv1.GroupVersion.String()
	dc["kind"] = "DeploymentConfig"
	delete(dc, "status")
	// First, so that what follows sees a key with no value as absent (an
	// annotations map of empty values is empty).
	removeNulls(dc)
	meta := child(dc, "metadata")
	if meta == nil {
		return nil, fmt.Errorf("%s: metadata is required", ref)
	}
	cleanMetadata(meta, ref, res)
	spec := child(dc, "spec")
	if spec == nil {
		return nil, fmt.Errorf("%s: spec is required", ref)
	}
	if tmeta := child(child(spec, "template"), "metadata"); tmeta != nil {
		delete(tmeta, "creationTimestamp")
	}
	namespace := str(meta, "namespace")
	convertTriggers(spec, namespace, opts, ref, res)
	convertTagImages(spec, namespace, opts, ref, res)
	warnCustomDeployer(spec, ref, res)
	typed, err := dropUnknownFields(dc, ref, res)
	if err != nil {
		return nil, err
	}
	warnImageless(typed, ref, res)
	return dc, nil
}

// cleanMetadata drops what the old cluster set and maps OpenShift's
// annotation keys to ours.
func cleanMetadata(meta map[string]any, ref string, res *Result) {
	for _, key := range []string{"resourceVersion", "uid", "selfLink", "creationTimestamp", "generation", "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		delete(meta, key)
	}
	// Owner references name objects of the old cluster by uid: the garbage
	// collector would delete the new object at once.
	if _, ok := meta["ownerReferences"]; ok {
		delete(meta, "ownerReferences")
		res.warnf("%s: metadata.ownerReferences name objects of the old cluster: dropped", ref)
	}
	annotations := child(meta, "annotations")
	if annotations == nil {
		return
	}
	delete(annotations, lastAppliedAnnotation)
	if v, ok := annotations[dcv1.OpenShiftDeployerPodIgnoreAnnotation]; ok {
		delete(annotations, dcv1.OpenShiftDeployerPodIgnoreAnnotation)
		annotations[dcv1.DeployerPodIgnoreAnnotation] = v
	}
	if len(annotations) == 0 {
		delete(meta, "annotations")
	}
}

// convertTriggers turns ImageStreamTag triggers into DockerImage ones when a
// registry is given; otherwise it keeps them, never automatic, since nothing
// here resolves ImageStreams.
func convertTriggers(spec map[string]any, namespace string, opts Options, ref string, res *Result) {
	triggers, _ := spec["triggers"].([]any)
	for i, t := range triggers {
		trigger, _ := t.(map[string]any)
		if str(trigger, "type") != string(dcv1.DeploymentTriggerOnImageChange) {
			continue
		}
		params := child(trigger, "imageChangeParams")
		from := child(params, "from")
		if !isImageStreamRef(from) {
			continue
		}
		source := describeStreamRef(from, namespace)
		if image, ok := opts.ImageRegistry.Reference(str(from, "name"), streamNamespace(from, namespace)); ok {
			setDockerImage(from, image)
			// The image OpenShift last triggered names the old cluster's
			// registry: without it the first rollout waits until the
			// trigger has resolved the new registry's tag, and uses it.
			delete(params, "lastTriggeredImage")
			res.warnf("%s: spec.triggers[%d]: ImageChange trigger on %s now watches the DockerImage %s", ref, i, source, image)
			continue
		}
		hint := registryHint(opts, from, namespace)
		if automatic, _ := params["automatic"].(bool); automatic {
			params["automatic"] = false
			res.warnf("%s: spec.triggers[%d]: ImageChange trigger on %s kept with automatic=false: there are no ImageStreams to resolve it (%s)", ref, i, source, hint)
			continue
		}
		res.warnf("%s: spec.triggers[%d]: ImageChange trigger on %s is never resolved: there are no ImageStreams (%s)", ref, i, source, hint)
	}
}

// convertTagImages points tagImages hooks that tag into ImageStreamTags at
// the registry. Without a registry to map them to they cannot be kept (the
// API refuses a tag target that is not a registry reference), so they are
// dropped with a warning, and so is a hook left with nothing to do.
func convertTagImages(spec map[string]any, namespace string, opts Options, ref string, res *Result) {
	strategy := child(spec, "strategy")
	for _, params := range []string{"recreateParams", "rollingParams"} {
		for _, point := range []string{"pre", "mid", "post"} {
			hook := child(child(strategy, params), point)
			tags, _ := hook["tagImages"].([]any)
			if len(tags) == 0 {
				continue
			}
			var kept []any
			for i, t := range tags {
				to := child(asMap(t), "to")
				if !isImageStreamRef(to) {
					kept = append(kept, t)
					continue
				}
				path := fmt.Sprintf("spec.strategy.%s.%s.tagImages[%d]", params, point, i)
				source := describeStreamRef(to, namespace)
				if image, ok := opts.ImageRegistry.Reference(str(to, "name"), streamNamespace(to, namespace)); ok {
					setDockerImage(to, image)
					kept = append(kept, t)
					res.warnf("%s: %s: tags into the DockerImage %s instead of %s", ref, path, image, source)
					continue
				}
				res.warnf("%s: %s: dropped: it tags into %s, and tagImages hooks need a registry reference (to.kind DockerImage) here (%s)", ref, path, source, registryHint(opts, to, namespace))
			}
			dropTagImages(strategy, params, point, kept, ref, res)
		}
	}
}

// dropTagImages keeps only the given tagImages of a hook, and removes the
// hook when nothing is left for it to do.
func dropTagImages(strategy map[string]any, paramsName, point string, kept []any, ref string, res *Result) {
	params := child(strategy, paramsName)
	hook := child(params, point)
	if len(kept) > 0 {
		hook["tagImages"] = kept
		return
	}
	delete(hook, "tagImages")
	if hook["execNewPod"] == nil {
		delete(params, point)
		res.warnf("%s: spec.strategy.%s.%s: the hook had only tagImages into ImageStreamTags and was dropped", ref, paramsName, point)
	}
}

// warnCustomDeployer notes custom strategies written for OpenShift's
// deployer, which must call ours instead.
func warnCustomDeployer(spec map[string]any, ref string, res *Result) {
	custom := child(child(spec, "strategy"), "customParams")
	if custom == nil {
		return
	}
	if image := str(custom, "image"); strings.Contains(image, "origin-deployer") || strings.Contains(image, "ose-deployer") {
		res.warnf("%s: spec.strategy.customParams.image %s is OpenShift's deployer: use an image that has dc-deploy", ref, image)
	}
	command, _ := custom["command"].([]any)
	for _, arg := range command {
		if s, _ := arg.(string); strings.Contains(s, "openshift-deploy") {
			res.warnf("%s: spec.strategy.customParams.command runs openshift-deploy: the deployer here is dc-deploy (same --until values)", ref)
			return
		}
	}
}

// dropUnknownFields removes the fields apps.deployconfig.io/v1 does not
// have (OpenShift's server would have dropped most of them silently; ours
// refuses them under kubectl's strict validation) and returns the typed
// object.
func dropUnknownFields(dc map[string]any, ref string, res *Result) (*dcv1.DeploymentConfig, error) {
	data, err := json.Marshal(dc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	typed := &dcv1.DeploymentConfig{}
	strict, err := sjson.UnmarshalStrict(data, typed, sjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	for _, e := range strict {
		fe, ok := e.(sjson.FieldError)
		if !ok {
			res.warnf("%s: %v", ref, e)
			continue
		}
		deletePath(dc, fe.FieldPath())
		res.warnf("%s: %s is not a field of %s: dropped", ref, fe.FieldPath(), dcv1.GroupVersion.String())
	}
	return typed, nil
}

// warnImageless notes containers that have no image and no DockerImage
// trigger to give them one: they never roll out until someone sets it.
func warnImageless(dc *dcv1.DeploymentConfig, ref string, res *Result) {
	if dc.Spec.Template == nil {
		return
	}
	fed := map[string]bool{}
	for _, t := range dc.Spec.Triggers {
		if p := t.ImageChangeParams; p != nil && p.From.Kind == "DockerImage" {
			for _, name := range p.ContainerNames {
				fed[name] = true
			}
		}
	}
	for _, c := range dc.Spec.Template.Spec.Containers {
		if strings.TrimSpace(c.Image) == "" && !fed[c.Name] {
			res.warnf("%s: container %q has no image and no DockerImage trigger to set one: it cannot roll out until you set its image", ref, c.Name)
		}
	}
}

func isImageStreamRef(ref map[string]any) bool {
	kind := str(ref, "kind")
	return kind == "ImageStreamTag" || kind == "ImageStreamImage"
}

// streamNamespace is the namespace an ImageStream reference lives in: its
// own, else the DeploymentConfig's (as OpenShift resolves it).
func streamNamespace(ref map[string]any, dcNamespace string) string {
	if ns := str(ref, "namespace"); ns != "" {
		return ns
	}
	return dcNamespace
}

// describeStreamRef names an ImageStream reference, e.g.
// "ImageStreamTag openshift/ruby:latest".
func describeStreamRef(ref map[string]any, dcNamespace string) string {
	name := str(ref, "name")
	if ns := streamNamespace(ref, dcNamespace); ns != "" {
		name = ns + "/" + name
	}
	return str(ref, "kind") + " " + name
}

func setDockerImage(ref map[string]any, image string) {
	ref["kind"] = "DockerImage"
	ref["name"] = image
	delete(ref, "namespace")
}

// registryHint says how to get a registry reference for an ImageStream
// reference that could not be mapped.
func registryHint(opts Options, ref map[string]any, dcNamespace string) string {
	if opts.ImageRegistry != nil && streamNamespace(ref, dcNamespace) == "" {
		return "its namespace is unknown: set metadata.namespace or pass --image-registry=HOST/PATH"
	}
	return "pass --image-registry to map it to a registry, or set kind DockerImage"
}

// removeNulls deletes null values from maps, recursively: YAML's empty
// values ("rollingParams:") mean "not set".
func removeNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			if item == nil {
				delete(v, k)
				continue
			}
			removeNulls(item)
		}
	case []any:
		for _, item := range v {
			removeNulls(item)
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
