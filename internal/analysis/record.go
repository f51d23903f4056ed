package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// Reasons of the events Record writes.
const (
	ReasonAnalysisSucceeded = "AnalysisSucceeded"
	ReasonAnalysisFailed    = "AnalysisFailed"
)

// reportingController names the deployer in the events it writes.
const reportingController = "deployconfig.io/dc-deploy"

// maxRecorded bounds the message kept in the annotation and the event.
const maxRecorded = 1024

// VarsFor are the template values of the deployment rc.
func VarsFor(rc *corev1.ReplicationController) Vars {
	vars := Vars{
		Namespace:        rc.Namespace,
		DeploymentConfig: rc.Annotations[dcv1.DeploymentConfigAnnotation],
		Deployment:       rc.Name,
		Version:          deployment.Version(rc),
	}
	if dc, err := deployment.DecodeConfig(rc); err == nil && dc.Spec.Strategy.RollingParams != nil {
		if tr := dc.Spec.Strategy.RollingParams.TrafficRouting; tr != nil {
			vars.StableService, vars.CanaryService = tr.StableService, tr.CanaryService
		}
	}
	return vars
}

// AnnotationKey is the RC annotation that holds the outcome of the
// analysis at place label (pre, mid, post, step-2, ...).
func AnnotationKey(label string) string {
	return deployment.AnalysisKey(label)
}

// Record writes the outcome of the analysis at place label onto the
// deployment rc: the annotation AnnotationKey(label) and an event
// regarding the RC (AnalysisSucceeded, or AnalysisFailed as a Warning),
// which `kubectl dc describe` shows.
func Record(ctx context.Context, client kubernetes.Interface, rc *corev1.ReplicationController, label string, o Outcome) error {
	text := truncate(o.String())
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{AnnotationKey(label): text}}})
	if err != nil {
		return fmt.Errorf("encode the analysis annotation: %w", err)
	}
	if _, err := client.CoreV1().ReplicationControllers(rc.Namespace).Patch(ctx, rc.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("record the %s analysis on replicationcontroller %s/%s: %w", label, rc.Namespace, rc.Name, err)
	}
	if _, err := client.CoreV1().Events(rc.Namespace).Create(ctx, event(rc, label, o), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("record the %s analysis as an event: %w", label, err)
	}
	return nil
}

// event is the event of an outcome. It is a core/v1 Event, the kind the
// deployer's role may create.
func event(rc *corev1.ReplicationController, label string, o Outcome) *corev1.Event {
	now := metav1.Now()
	reason, kind := ReasonAnalysisSucceeded, corev1.EventTypeNormal
	if o.Phase != Successful {
		reason, kind = ReasonAnalysisFailed, corev1.EventTypeWarning
	}
	instance, _ := os.Hostname()
	if instance == "" {
		instance = rc.Name
	}
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: rc.Name + "." + strconv.FormatInt(now.UnixNano(), 36), Namespace: rc.Namespace},
		InvolvedObject: corev1.ObjectReference{
			Kind: "ReplicationController", APIVersion: "v1",
			Namespace: rc.Namespace, Name: rc.Name, UID: rc.UID, ResourceVersion: rc.ResourceVersion,
		},
		Reason:              reason,
		Message:             truncate(label + " analysis " + o.String()),
		Type:                kind,
		Source:              corev1.EventSource{Component: reportingController},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		Action:              "Analysis",
		ReportingController: reportingController,
		ReportingInstance:   truncateTo(instance, 128),
	}
}

// truncate bounds a recorded message.
func truncate(s string) string {
	return truncateTo(s, maxRecorded)
}

// truncateTo cuts s to at most n bytes, marking the cut.
func truncateTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
