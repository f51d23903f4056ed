package playground

import (
	"context"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/localprom"
)

// AnalysisSample is the name of the playground's DeploymentConfig whose
// post hook is an analysis of its error rate.
const AnalysisSample = "analysis"

// analysisSampleYAML is the analysis sample; %s is Prometheus's URL and %q
// the query. Its rollouts pass while the exporter reports no errors for
// the new deployment, and are rolled back when it reports 50%.
const analysisSampleYAML = `apiVersion: apps.deployconfig.io/v1
kind: DeploymentConfig
metadata:
  name: analysis
  labels:
    app: analysis
spec:
  replicas: 2
  selector:
    app: analysis
  strategy:
    type: Rolling
    rollingParams:
      maxSurge: 1
      maxUnavailable: 0
      post:
        failurePolicy: Abort
        analysis:
          interval: 2s
          count: 3
          consecutiveErrorLimit: 10
          metrics:
          - name: error-rate
            prometheus:
              address: %s
              query: %q
            successCondition: result[0] <= 0.05
  triggers:
  - type: ConfigChange
  template:
    metadata:
      labels:
        app: analysis
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: ["ALL"]
`

// ShowAnalysisRollouts rolls the analysis sample out twice, measured by the
// Prometheus of dc-local serve: a version without errors that passes its
// analysis, then one with a 50% error rate that fails it and is rolled
// back. It prints both deployer logs to out, and returns an error unless
// the first completed and the second failed.
func (c *Cluster) ShowAnalysisRollouts(ctx context.Context, out io.Writer, o Options, namespace string, timeout time.Duration) error {
	prom, err := ReadPrometheus(ctx, o, 30*time.Second)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("making a client: %w", err)
	}
	before, err := latestRollout(ctx, dyn, c.Clientset, namespace, AnalysisSample)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	good, bad := before.Version+1, before.Version+2
	for v, errorsPerSecond := range map[int64]float64{good: 0, bad: 5} {
		if err := localprom.PostTraffic(ctx, prom.Exporter, namespace, deployment.Name(AnalysisSample, v), 10, errorsPerSecond); err != nil {
			return err
		}
	}
	if err := applyAnalysisSample(ctx, dyn, namespace, prom.URL, before.Version > 0); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nApplied dc/%s, whose post hook measures its error rate on %s; deployment #%d answers without errors...\n", AnalysisSample, prom.URL, good)
	if err := c.showRollout(ctx, out, namespace, good, timeout, dcv1.DeploymentPhaseComplete); err != nil {
		return err
	}
	if _, err := c.ChangeTemplate(ctx, namespace, AnalysisSample); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nChanged the pod template of dc/%s; deployment #%d answers half of its requests with errors...\n", AnalysisSample, bad)
	return c.showRollout(ctx, out, namespace, bad, timeout, dcv1.DeploymentPhaseFailed)
}

// showRollout waits for rollout #version of the analysis sample, prints
// its deployer log, and checks it ended in want.
func (c *Cluster) showRollout(ctx context.Context, out io.Writer, namespace string, version int64, timeout time.Duration, want dcv1.DeploymentPhase) error {
	start := time.Now()
	r, err := c.WaitRollout(ctx, namespace, AnalysisSample, timeout, func(r Rollout) bool { return r.Version >= version && r.Done() })
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "dc/%s: deployment #%d %s (%s)\n", AnalysisSample, r.Version, r.Phase(), time.Since(start).Round(100*time.Millisecond))
	if log, err := c.DeployerLog(ctx, namespace, r.RC.Name); err == nil {
		fmt.Fprintf(out, "\n$ kubectl dc logs %s -n %s\n%s", AnalysisSample, namespace, log)
	}
	if r.Phase() != want {
		return fmt.Errorf("deployment #%d of dc/%s is %s, want %s: %s", r.Version, AnalysisSample, r.Phase(), want, r.RC.Annotations[dcv1.DeploymentStatusReasonAnnotation])
	}
	if want == dcv1.DeploymentPhaseFailed {
		fmt.Fprintf(out, "Rolled back: %s\n", r.RC.Annotations[dcv1.DeploymentStatusReasonAnnotation])
	}
	return nil
}

// applyAnalysisSample creates the analysis sample, or, when it exists,
// applies it with a changed template so that it rolls out again.
func applyAnalysisSample(ctx context.Context, dyn dynamic.Interface, namespace, promURL string, exists bool) error {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(fmt.Appendf(nil, analysisSampleYAML, promURL, localprom.ErrorRateQuery), &obj.Object); err != nil {
		return fmt.Errorf("the analysis sample: %w", err)
	}
	if exists {
		if err := unstructured.SetNestedField(obj.Object, time.Now().UTC().Format(time.RFC3339Nano), "spec", "template", "metadata", "annotations", dcv1.KeyPrefix+"playground-change"); err != nil {
			return fmt.Errorf("the analysis sample: %w", err)
		}
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return fmt.Errorf("the analysis sample: %w", err)
	}
	_, err = dyn.Resource(dcv1.GroupVersion.WithResource("deploymentconfigs")).Namespace(namespace).
		Patch(ctx, AnalysisSample, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "dc-local", Force: new(true)})
	if err != nil {
		return fmt.Errorf("applying deploymentconfig %s/%s: %w", namespace, AnalysisSample, err)
	}
	return nil
}
