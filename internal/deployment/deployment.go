// Package deployment knows the shape of one deployment of a
// DeploymentConfig: the ReplicationController named <dc>-<version>, its
// labels and annotations, its phase, and the DeploymentConfig encoded in it.
// The controllers, the deployer and the CLI all read deployments through it
// so that they agree on every key.
package deployment

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Name returns the name of a DeploymentConfig's deployment of a version.
func Name(dcName string, version int64) string {
	return fmt.Sprintf("%s-%d", dcName, version)
}

// DeployerPodName returns the name of a deployment's deployer pod.
func DeployerPodName(rcName string) string {
	return rcName + "-deploy"
}

// HookPodName returns the name of a deployment's hook pod of a type (pre,
// mid or post).
func HookPodName(rcName, hookType string) string {
	return rcName + "-hook-" + hookType
}

// Phase returns the deployment's phase; a deployment without one is New.
func Phase(rc *corev1.ReplicationController) dcv1.DeploymentPhase {
	if p := rc.Annotations[dcv1.DeploymentPhaseAnnotation]; p != "" {
		return dcv1.DeploymentPhase(p)
	}
	return dcv1.DeploymentPhaseNew
}

// IsKnown reports whether a phase is one of the five deployconfig writes.
// Anyone who may edit RCs can write another value; the deployer controller
// fails such a deployment (see CanTransition).
func IsKnown(p dcv1.DeploymentPhase) bool {
	switch p {
	case dcv1.DeploymentPhaseNew, dcv1.DeploymentPhasePending, dcv1.DeploymentPhaseRunning,
		dcv1.DeploymentPhaseComplete, dcv1.DeploymentPhaseFailed:
		return true
	}
	return false
}

// IsTerminal reports whether a phase is final (Complete or Failed).
func IsTerminal(p dcv1.DeploymentPhase) bool {
	return p == dcv1.DeploymentPhaseComplete || p == dcv1.DeploymentPhaseFailed
}

// IsCancelled reports whether the deployment has been cancelled. As in
// OpenShift, the annotation's value is matched without regard to case:
// "True" and "TRUE" cancel too.
func IsCancelled(rc *corev1.ReplicationController) bool {
	return strings.EqualFold(rc.Annotations[dcv1.DeploymentCancelledAnnotation], "true")
}

// CanTransition reports whether a deployment may move from one phase to
// another. Failed → New happens only through a user's retry, which does not
// go through this check. A phase outside the known set may only move to
// Failed: nothing can tell how far such a deployment got.
func CanTransition(from, to dcv1.DeploymentPhase) bool {
	if from == to {
		return true
	}
	if !IsKnown(from) {
		return to == dcv1.DeploymentPhaseFailed
	}
	switch from {
	case dcv1.DeploymentPhaseNew:
		return to == dcv1.DeploymentPhasePending || to == dcv1.DeploymentPhaseRunning || IsTerminal(to)
	case dcv1.DeploymentPhasePending:
		return to == dcv1.DeploymentPhaseRunning || IsTerminal(to)
	case dcv1.DeploymentPhaseRunning:
		return IsTerminal(to)
	}
	return false
}

// Version returns the DeploymentConfig version the deployment was made for.
// An RC named <dc>-<version>, as every RC the controller makes is, has the
// version of its name, which cannot change: the version annotation, which
// anyone who may edit RCs can rewrite, then changes nothing. Any other RC
// (one adopted by its label) has the version of its annotation, or 0 when
// the annotation is missing or malformed.
func Version(rc *corev1.ReplicationController) int64 {
	if v, ok := NameVersion(rc.Labels[dcv1.DeploymentConfigLabel], rc.Name); ok {
		return v
	}
	v, err := strconv.ParseInt(rc.Annotations[dcv1.DeploymentVersionAnnotation], 10, 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// NameVersion returns the version in the name of a DeploymentConfig's
// deployment (Name's inverse), and whether name has that form.
func NameVersion(dcName, name string) (int64, bool) {
	if dcName == "" {
		return 0, false
	}
	digits, ok := strings.CutPrefix(name, dcName+"-")
	if !ok || digits == "" || digits[0] < '1' || digits[0] > '9' {
		return 0, false
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// DesiredReplicas returns the replica count the deployer scales the
// deployment to, and whether the annotation holds one.
func DesiredReplicas(rc *corev1.ReplicationController) (int32, bool) {
	v, err := strconv.ParseInt(rc.Annotations[dcv1.DesiredReplicasAnnotation], 10, 32)
	if err != nil || v < 0 {
		return 0, false
	}
	return int32(v), true
}

// Encode returns dc as the JSON stored in a deployment's annotation.
func Encode(dc *dcv1.DeploymentConfig) (string, error) {
	data, err := json.Marshal(dc)
	if err != nil {
		return "", fmt.Errorf("encode deploymentconfig %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	return string(data), nil
}

// DecodeConfig returns the DeploymentConfig encoded in a deployment, with
// every default applied.
func DecodeConfig(rc *corev1.ReplicationController) (*dcv1.DeploymentConfig, error) {
	data, ok := rc.Annotations[dcv1.EncodedDeploymentConfigAnnotation]
	if !ok {
		return nil, fmt.Errorf("replicationcontroller %s/%s has no %s annotation", rc.Namespace, rc.Name, dcv1.EncodedDeploymentConfigAnnotation)
	}
	dc := &dcv1.DeploymentConfig{}
	if err := json.Unmarshal([]byte(data), dc); err != nil {
		return nil, fmt.Errorf("decode the deploymentconfig of replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	if dc.Spec.Template == nil {
		return nil, fmt.Errorf("the deploymentconfig encoded in replicationcontroller %s/%s has no template", rc.Namespace, rc.Name)
	}
	dcv1.SetDefaults(dc)
	return dc, nil
}

// TemplateMatches reports whether the DeploymentConfig's pod template is the
// one its deployment was made from: when it is not, a config change is due.
func TemplateMatches(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) bool {
	encoded, err := DecodeConfig(rc)
	if err != nil {
		return false
	}
	return apiequality.Semantic.DeepEqual(dc.Spec.Template, encoded.Spec.Template)
}

// New builds the deployment (ReplicationController) for the
// DeploymentConfig's latestVersion, at 0 replicas and in phase New.
func New(dc *dcv1.DeploymentConfig) (*corev1.ReplicationController, error) {
	if dc.Spec.Template == nil {
		return nil, fmt.Errorf("deploymentconfig %s/%s has no template", dc.Namespace, dc.Name)
	}
	encoded, err := Encode(dc)
	if err != nil {
		return nil, err
	}
	name := Name(dc.Name, dc.Status.LatestVersion)
	selector := Selector(dc, name)

	template := dc.Spec.Template.DeepCopy()
	if template.Labels == nil {
		template.Labels = map[string]string{}
	}
	for k, v := range selector {
		template.Labels[k] = v
	}
	if template.Annotations == nil {
		template.Annotations = map[string]string{}
	}
	template.Annotations[dcv1.DeploymentConfigAnnotation] = dc.Name
	template.Annotations[dcv1.DeploymentVersionAnnotation] = strconv.FormatInt(dc.Status.LatestVersion, 10)
	template.Annotations[dcv1.DeploymentAnnotation] = name

	labels := map[string]string{}
	for k, v := range dc.Labels {
		labels[k] = v
	}
	labels[dcv1.DeploymentConfigLabel] = dc.Name

	annotations := map[string]string{
		dcv1.DeploymentConfigAnnotation:        dc.Name,
		dcv1.DeploymentVersionAnnotation:       strconv.FormatInt(dc.Status.LatestVersion, 10),
		dcv1.DeploymentPhaseAnnotation:         string(dcv1.DeploymentPhaseNew),
		dcv1.DeployerPodAnnotation:             DeployerPodName(name),
		dcv1.DesiredReplicasAnnotation:         strconv.Itoa(int(dc.Spec.Replicas)),
		dcv1.DeploymentReplicasAnnotation:      "0",
		dcv1.EncodedDeploymentConfigAnnotation: encoded,
		dcv1.RolloutProgressAnnotation:         NewProgress(name).Encode(),
	}
	// As OpenShift's, the RC gets none of the DeploymentConfig's
	// annotations but the one that says to create no deployer pod.
	if v, ok := dc.Annotations[dcv1.DeployerPodIgnoreAnnotation]; ok {
		annotations[dcv1.DeployerPodIgnoreAnnotation] = v
	}

	zero := int32(0)
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       dc.Namespace,
			Labels:          labels,
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dc, dcv1.GroupVersion.WithKind("DeploymentConfig"))},
		},
		Spec: corev1.ReplicationControllerSpec{
			Replicas:        &zero,
			MinReadySeconds: dc.Spec.MinReadySeconds,
			Selector:        selector,
			Template:        template,
		},
	}, nil
}

// Env returns the environment variables that name the deployment, set in
// its deployer, hook and custom strategy containers.
func Env(rc *corev1.ReplicationController) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: dcv1.EnvDeploymentName, Value: rc.Name},
		{Name: dcv1.EnvDeploymentNamespace, Value: rc.Namespace},
		{Name: dcv1.EnvOpenShiftDeploymentName, Value: rc.Name},
		{Name: dcv1.EnvOpenShiftDeploymentNamespace, Value: rc.Namespace},
	}
}

// SortByVersion sorts deployments oldest first.
func SortByVersion(rcs []*corev1.ReplicationController) {
	sort.SliceStable(rcs, func(i, j int) bool { return Version(rcs[i]) < Version(rcs[j]) })
}

// Live returns the deployment that serves, of rcs other than skip (which
// may be nil), or nil when there is none: the newest one that is Complete
// or that a blue-green rollout switched the active Service to for good
// (its progress record says SwitchFinal). Such a deployment stays
// live when its rollout fails or is cancelled afterwards (a newer version
// arriving during scaleDownDelaySeconds): the fall-back, the next rollout
// and history build on it, not on the version it replaced. One switched
// on trial (a postPromotionAnalysis still running) is not live: its
// deployer switches back should the analysis fail.
func Live(rcs []*corev1.ReplicationController, skip *corev1.ReplicationController) *corev1.ReplicationController {
	var best *corev1.ReplicationController
	for _, rc := range rcs {
		if rc == skip || (skip != nil && rc.Name == skip.Name) || !IsLive(rc) {
			continue
		}
		if best == nil || Version(rc) > Version(best) {
			best = rc
		}
	}
	return best
}

// IsLive reports whether a deployment may serve: it is Complete, or the
// active Service was switched to it for good.
func IsLive(rc *corev1.ReplicationController) bool {
	return Phase(rc) == dcv1.DeploymentPhaseComplete || IsSwitchedFinal(rc)
}

// Selector returns the selector of the deployment named name of the
// DeploymentConfig, as New builds it: the DeploymentConfig's pod selector
// plus the deployment label.
func Selector(dc *dcv1.DeploymentConfig, name string) map[string]string {
	selector := map[string]string{}
	for k, v := range dc.PodSelector() {
		selector[k] = v
	}
	selector[dcv1.DeploymentSelectorLabel] = name
	return selector
}

// Replicas returns the RC's desired replica count (spec.replicas, 1 when unset
// as the API server defaults it).
func Replicas(rc *corev1.ReplicationController) int32 {
	if rc.Spec.Replicas == nil {
		return 1
	}
	return *rc.Spec.Replicas
}

// ConfigSummary is what the controllers read, on every sync, from the
// DeploymentConfig encoded in a deployment. It is small where the encoded
// DeploymentConfig is not: a cache can hold it in place of the encoding.
type ConfigSummary struct {
	// TemplateHash is TemplateHash of the encoded pod template.
	TemplateHash string `json:"templateHash,omitempty"`
	// Test is the encoded DeploymentConfig's spec.test.
	Test bool `json:"test,omitempty"`
	// Images maps the From name of each ImageChange trigger to the image it
	// had last triggered.
	Images map[string]string `json:"images,omitempty"`
	// Error says why the encoding could not be decoded; the other fields
	// are then empty.
	Error string `json:"error,omitempty"`
}

// Summarize decodes the DeploymentConfig encoded in a deployment and returns
// its summary; a deployment whose encoding cannot be decoded gets a summary
// that says why.
func Summarize(rc *corev1.ReplicationController) ConfigSummary {
	dc, err := DecodeConfig(rc)
	if err != nil {
		return ConfigSummary{Error: err.Error()}
	}
	s := ConfigSummary{TemplateHash: TemplateHash(dc.Spec.Template), Test: dc.Spec.Test}
	for _, t := range dc.Spec.Triggers {
		if p := t.ImageChangeParams; p != nil {
			if s.Images == nil {
				s.Images = map[string]string{}
			}
			s.Images[p.From.Name] = p.LastTriggeredImage
		}
	}
	return s
}

// TemplateHash digests a pod template's JSON. Two templates have the same
// hash exactly when they encode alike, which is when they are semantically
// equal: quantities encode in canonical form, and nil and empty lists and
// maps both encode as absent.
func TemplateHash(t *corev1.PodTemplateSpec) string {
	data, err := json.Marshal(t)
	if err != nil {
		// A pod template always encodes; should it not, it matches nothing.
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}
