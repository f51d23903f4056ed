package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/cachedconfig"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// The cache keeps of each object only what the controllers read, so that
// dc-controller's memory per DeploymentConfig stays small: a DC with ten
// revisions has ten RCs, each with a pod template and an encoded copy of the
// DC, and ten deployer pods. What the cache drops is never written back: the
// controllers write RCs and pods only with patches of the fields they change
// (a merge patch computed against the cached copy carries only differences),
// creates of new objects, and deletes.

// CacheOptions returns the options of dc-controller's two caches, the
// manager's (cacheOptions) and the settled RCs' (settledCacheOptions), so
// that the benchmark can push objects through the very selectors and
// transforms dc-controller uses and measure what each cache keeps.
func CacheOptions(namespaces []string, scheme *runtime.Scheme) (manager, settledRCs cache.Options) {
	return cacheOptions(namespaces), settledCacheOptions(namespaces, scheme)
}

// cachedSummaryAnnotation holds, in dc-controller's cache only, the
// deployment.ConfigSummary of an RC whose encoded DeploymentConfig the cache
// has dropped. The API server never sees it.
const cachedSummaryAnnotation = dcv1.KeyPrefix + "cached-config-summary"

// transformRC slims an RC for the cache: no managedFields, no pod template,
// no selector once an RC manager has reported on it, no in-controller
// rollout log, and, once its
// deployer pod exists (phase past New), the encoded DeploymentConfig
// replaced by its summary. A New RC keeps the encoding: the deployer
// controller builds the deployer pod from it.
func transformRC(obj any) (any, error) {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return obj, nil
	}
	rc.ManagedFields = nil
	rc.Spec.Template = nil
	_, encoded := rc.Annotations[dcv1.EncodedDeploymentConfigAnnotation]
	if _, summary := rc.Annotations[cachedSummaryAnnotation]; summary && encoded {
		// Only the cache writes a summary, in place of the encoding; next
		// to the encoding someone put it there by hand, and it would stand
		// in for the encoded config. (An RC this transform has already
		// slimmed has the summary and no encoding: client-go may pass it
		// again, so the transform must leave it as it is.)
		annotations := maps.Clone(rc.Annotations)
		delete(annotations, cachedSummaryAnnotation)
		rc.Annotations = annotations
	}
	if rc.Status.ObservedGeneration > 0 {
		// Only the lookup of the pods of an RC no RC manager has reported
		// on yet reads the selector (leftoverPods); a new version of the
		// RC comes through here whole.
		rc.Spec.Selector = nil
	}
	if encoded && deployment.Phase(rc) != dcv1.DeploymentPhaseNew {
		summary, err := json.Marshal(deployment.Summarize(rc))
		if err != nil {
			return nil, fmt.Errorf("summarize replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
		}
		annotations := maps.Clone(rc.Annotations)
		delete(annotations, dcv1.EncodedDeploymentConfigAnnotation)
		annotations[cachedSummaryAnnotation] = string(summary)
		rc.Annotations = annotations
	}
	if deployment.HasLog(rc) {
		// The log of an in-controller rollout (up to 16 KiB) is read
		// from the API server by whoever needs it: kept here it would be
		// most of a live RC's size.
		rc.Annotations = deployment.WithoutLog(rc.Annotations)
	}
	internMeta(&rc.ObjectMeta)
	internTypeMeta(&rc.TypeMeta)
	return rc, nil
}

// settled reports whether an RC is finished with: scaled to zero, and
// reported so by an RC manager that has seen its latest spec.
func settled(rc *corev1.ReplicationController) bool {
	return deployment.IsTerminal(deployment.Phase(rc)) && deployment.Replicas(rc) == 0 &&
		rc.Status.Replicas == 0 && rc.Status.ObservedGeneration == rc.Generation
}

// transformDC is the cache's DeploymentConfig: no managedFields, its pod
// template encoded (see cachedconfig; readers expand their copy), its
// metadata's strings shared (see internMeta), and its selector, when it is
// its labels, the same map.
func transformDC(obj any) (any, error) {
	dc, ok := obj.(*dcv1.DeploymentConfig)
	if !ok {
		return obj, nil
	}
	dc.ManagedFields = nil
	if err := cachedconfig.Compact(dc); err != nil {
		return nil, err
	}
	internMeta(&dc.ObjectMeta)
	internTypeMeta(&dc.TypeMeta)
	if maps.Equal(dc.Spec.Selector, dc.Labels) && dc.Spec.Selector != nil {
		// Most DCs select by their own labels ({app: name}): one map for
		// both saves a map, a third of a cached DC's. Readers of the cache
		// get deep copies, or with UnsafeDisableDeepCopy only read.
		dc.Spec.Selector = dc.Labels
	}
	dc.Status.Conditions = internConditions(dc.Status.Conditions)
	return dc, nil
}

// internTypeMeta shares the kind and API version a watch event's object
// was decoded with: its own copy of "ReplicationController" and "v1" for
// every object otherwise.
func internTypeMeta(t *metav1.TypeMeta) {
	t.Kind, t.APIVersion = intern(t.Kind), intern(t.APIVersion)
}

// internConditions copies a DeploymentConfig's conditions into a slice of
// their number (decoding leaves room for eight) with their strings shared:
// five per DC (Available, Progressing and kstatus's three), whose types,
// statuses, reasons and most messages ("Rollout #3 is complete") are the
// same on many DCs. Decoded, they were a third of a cached DC.
func internConditions(conditions []dcv1.DeploymentCondition) []dcv1.DeploymentCondition {
	if conditions == nil {
		return nil
	}
	out := make([]dcv1.DeploymentCondition, len(conditions))
	for i, c := range conditions {
		c.Type = dcv1.DeploymentConditionType(intern(string(c.Type)))
		c.Status = corev1.ConditionStatus(intern(string(c.Status)))
		c.Reason, c.Message = intern(c.Reason), intern(c.Message)
		out[i] = c
	}
	return out
}

// uniqueValue reports whether an annotation's value differs on every
// object; interning it would only cost the interning table's entry.
func uniqueValue(key string) bool {
	switch key {
	case cachedSummaryAnnotation, cachedconfig.TemplateAnnotation, dcv1.EncodedDeploymentConfigAnnotation, dcv1.DeploymentStatusReasonAnnotation,
		dcv1.DeployerPodAnnotation, dcv1.DeployerPodCreateFailingSinceAnnotation:
		return true
	}
	return deployment.IsProgressKey(key)
}

// internMeta makes the strings that cached objects repeat share one copy:
// decoding gives each RC its own copy of the namespace, every label and
// annotation key, the DeploymentConfig's name (four times) and values
// such as "Complete" or "0", and at tens of thousands of RCs those copies
// are a large part of dc-controller's memory. unique.Make keeps one copy
// of each for as long as something refers to it.
func internMeta(m *metav1.ObjectMeta) {
	m.Namespace = intern(m.Namespace)
	m.Labels = internMap(m.Labels, func(string) bool { return false })
	m.Annotations = internMap(m.Annotations, uniqueValue)
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind, ref.Name = intern(ref.APIVersion), intern(ref.Kind), intern(ref.Name)
		ref.UID = types.UID(intern(string(ref.UID)))
	}
}

func intern(s string) string {
	return unique.Make(s).Value()
}

// internMap copies m with its keys and, but where keep says so, its values
// interned.
func internMap(m map[string]string, keep func(key string) bool) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if !keep(k) {
			v = intern(v)
		}
		out[intern(k)] = v
	}
	return out
}

// transformPod slims a deployer or hook pod for the cache to its metadata
// and the parts of its status the deployer controller follows: phase,
// reason, and the termination messages of its containers.
func transformPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Pod{TypeMeta: pod.TypeMeta, ObjectMeta: pod.ObjectMeta}
	slim.ManagedFields = nil
	internMeta(&slim.ObjectMeta)
	internTypeMeta(&slim.TypeMeta)
	// What deployerSucceeded reads: whether the pod restarts its
	// containers, and how many it has.
	slim.Spec.RestartPolicy = pod.Spec.RestartPolicy
	for _, c := range pod.Spec.Containers {
		slim.Spec.Containers = append(slim.Spec.Containers, corev1.Container{Name: c.Name})
	}
	slim.Status.Phase = pod.Status.Phase
	slim.Status.Reason = pod.Status.Reason
	for _, s := range pod.Status.ContainerStatuses {
		t := s.State.Terminated
		if t == nil {
			continue
		}
		slim.Status.ContainerStatuses = append(slim.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: s.Name,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: t.ExitCode, Reason: t.Reason, Message: t.Message,
			}},
		})
	}
	return slim, nil
}

// configSummary returns the summary of the DeploymentConfig encoded in a
// deployment: the cache's when it has replaced the encoding, else made from
// the encoding.
func configSummary(rc *corev1.ReplicationController) deployment.ConfigSummary {
	if cached, ok := rc.Annotations[cachedSummaryAnnotation]; ok {
		var s deployment.ConfigSummary
		if err := json.Unmarshal([]byte(cached), &s); err != nil {
			return deployment.ConfigSummary{Error: fmt.Sprintf("cached summary of %s/%s: %v", rc.Namespace, rc.Name, err)}
		}
		return s
	}
	return deployment.Summarize(rc)
}

// templateMatches reports whether the DeploymentConfig's pod template is the
// one its deployment was made from (deployment.TemplateMatches, on the
// summary).
func templateMatches(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) bool {
	s := configSummary(rc)
	return s.Error == "" && s.TemplateHash == deployment.TemplateHash(dc.Spec.Template)
}

// encodedConfig decodes the DeploymentConfig encoded in a deployment, reading
// the RC from the API server when the cache has dropped the encoding.
func encodedConfig(ctx context.Context, reader client.Reader, rc *corev1.ReplicationController) (*dcv1.DeploymentConfig, error) {
	if _, ok := rc.Annotations[dcv1.EncodedDeploymentConfigAnnotation]; ok {
		return deployment.DecodeConfig(rc)
	}
	if _, ok := rc.Annotations[cachedSummaryAnnotation]; !ok {
		return deployment.DecodeConfig(rc)
	}
	fresh := &corev1.ReplicationController{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(rc), fresh); err != nil {
		return nil, fmt.Errorf("get replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	return deployment.DecodeConfig(fresh)
}
