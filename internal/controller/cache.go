package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// The cache keeps of each object only what the controllers read, so that
// dc-controller's memory per DeploymentConfig stays small: a DC with ten
// revisions has ten RCs, each with a pod template and an encoded copy of the
// DC, and ten deployer pods. What the cache drops is never written back: the
// controllers write RCs and pods only with patches of the fields they change
// (a merge patch computed against the cached copy carries only differences),
// creates of new objects, and deletes.

// cachedSummaryAnnotation holds, in dc-controller's cache only, the
// deployment.ConfigSummary of an RC whose encoded DeploymentConfig the cache
// has dropped. The API server never sees it.
const cachedSummaryAnnotation = dcv1.KeyPrefix + "cached-config-summary"

// transformRC slims an RC for the cache: no managedFields, no pod template,
// and, once its deployer pod exists (phase past New), the encoded
// DeploymentConfig replaced by its summary. A New RC keeps the encoding:
// the deployer controller builds the deployer pod from it.
func transformRC(obj any) (any, error) {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return obj, nil
	}
	rc.ManagedFields = nil
	rc.Spec.Template = nil
	if _, encoded := rc.Annotations[dcv1.EncodedDeploymentConfigAnnotation]; !encoded || deployment.Phase(rc) == dcv1.DeploymentPhaseNew {
		return rc, nil
	}
	summary, err := json.Marshal(deployment.Summarize(rc))
	if err != nil {
		return nil, fmt.Errorf("summarize replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	annotations := maps.Clone(rc.Annotations)
	delete(annotations, dcv1.EncodedDeploymentConfigAnnotation)
	annotations[cachedSummaryAnnotation] = string(summary)
	rc.Annotations = annotations
	return rc, nil
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
