package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Analysis measures a new deployment with metric queries and decides whether
// the rollout goes on. Its fields follow Argo Rollouts' AnalysisTemplate so that
// queries carry over; conditions are CEL expressions over `result`
// (docs/progressive-delivery.md).
//
// +kubebuilder:validation:XValidation:rule="!has(self.count) || self.count <= 1 || has(self.interval)",message="interval is required when count is more than 1",fieldPath=".interval"
// +kubebuilder:validation:XValidation:rule="self.metrics.all(m, self.metrics.exists_one(n, n.name == m.name))",message="metric names must be unique",fieldPath=".metrics"
type Analysis struct {
	// Interval is the time between two measurements, e.g. "30s"; at least 1s.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('1s')",message="must be a duration of at least 1s, e.g. 30s or 1m"
	// +optional
	Interval metav1.Duration `json:"interval,omitzero"`

	// Count is how many measurements of each metric are taken (errors
	// excepted); the analysis succeeds when all were taken without reaching
	// a limit. Default 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Count *int32 `json:"count,omitempty"`

	// FailureLimit is how many failed measurements of a metric are
	// tolerated; one more fails the analysis. Default 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	FailureLimit *int32 `json:"failureLimit,omitempty"`

	// ConsecutiveErrorLimit is how many measurements of a metric in a row
	// may end in an error (the metric source unreachable, a query error, a
	// result the conditions cannot judge) before the analysis ends in
	// Error. Default 4.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	ConsecutiveErrorLimit *int32 `json:"consecutiveErrorLimit,omitempty"`

	// Metrics are the measurements taken at each interval.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Metrics []AnalysisMetric `json:"metrics"`

	// DryRun names metrics that are measured and recorded but never decide
	// the analysis, as Argo Rollouts' dryRun: their failures, errors and
	// inconclusive results are logged and counted only. A metricName of
	// "*" makes every metric a dry run.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=metricName
	// +optional
	DryRun []DryRunMetric `json:"dryRun,omitempty"`
}

// DryRunMetric names a metric of an analysis that runs as a dry run.
type DryRunMetric struct {
	// MetricName is the name of a metric of the analysis, or "*" for all.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	MetricName string `json:"metricName"`
}

// AnalysisMetric is one query and the conditions that judge its result.
//
// +kubebuilder:validation:XValidation:rule="has(self.successCondition) || has(self.failureCondition)",message="at least one of successCondition or failureCondition is required"
type AnalysisMetric struct {
	// Name identifies the metric in logs, events and status.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Prometheus is the query that measures the metric.
	Prometheus *PrometheusMetric `json:"prometheus"`

	// SuccessCondition is a CEL expression over `result` that is true when a
	// measurement succeeded. A vector result is a list of doubles
	// (`result[0] < 0.05`), a scalar a double.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	SuccessCondition string `json:"successCondition,omitempty"`

	// FailureCondition is a CEL expression over `result` that is true when a
	// measurement failed; it is checked first.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	FailureCondition string `json:"failureCondition,omitempty"`
}

// PrometheusMetric is a PromQL query against a Prometheus server.
type PrometheusMetric struct {
	// Address is the Prometheus server's base URL, e.g. http://prometheus.monitoring:9090.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^/?#\s]+`
	Address string `json:"address"`

	// Query is the PromQL query. It may use {{.Namespace}},
	// {{.DeploymentConfig}}, {{.Deployment}} (the ReplicationController),
	// {{.Version}}, and with trafficRouting {{.StableService}} and
	// {{.CanaryService}}, and nothing else of Go templates (no actions,
	// functions or pipelines); it must return a vector or a scalar.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=8192
	Query string `json:"query"`
}

// RollingStep is one step of a canary rollout.
//
// +kubebuilder:validation:XValidation:rule="(has(self.setWeight) ? 1 : 0) + (has(self.pause) ? 1 : 0) + (has(self.analysis) ? 1 : 0) + (has(self.setCanaryScale) ? 1 : 0) + (has(self.setHeaderRoute) ? 1 : 0) == 1",message="a step has exactly one of setWeight, pause, analysis, setCanaryScale or setHeaderRoute"
type RollingStep struct {
	// SetWeight is the new deployment's share, in percent, at the end of
	// the step: of the pods (by replica counts), or with trafficRouting of
	// the requests (by the route's weights).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	SetWeight *int32 `json:"setWeight,omitempty"`

	// Pause waits for its duration, or without one until
	// `kubectl dc rollout promote`.
	// +optional
	Pause *RolloutPause `json:"pause,omitempty"`

	// Analysis measures the new deployment; a failed analysis fails the rollout.
	// +optional
	Analysis *Analysis `json:"analysis,omitempty"`

	// SetCanaryScale sizes the new deployment apart from the traffic
	// weight; it needs trafficRouting.
	// +optional
	SetCanaryScale *SetCanaryScale `json:"setCanaryScale,omitempty"`

	// SetHeaderRoute sends requests with matching headers to the new
	// deployment; it needs trafficRouting.
	// +optional
	SetHeaderRoute *SetHeaderRoute `json:"setHeaderRoute,omitempty"`
}

// RolloutPause halts a canary rollout.
type RolloutPause struct {
	// Duration is how long to wait, e.g. "5m"; without it the rollout waits
	// for `kubectl dc rollout promote`. A pause with a duration ends early
	// on promote too.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// BlueGreenDeploymentStrategyParams are the parameters of the BlueGreen
// strategy: the new deployment comes up at full size beside the old one and
// Services are switched to it.
//
// +kubebuilder:validation:XValidation:rule="!has(self.previewService) || self.previewService != self.activeService",message="previewService must differ from activeService",fieldPath=".previewService"
type BlueGreenDeploymentStrategyParams struct {
	// ActiveService is the Service that selects the live deployment: the
	// deployer sets its selector to the DeploymentConfig's selector plus the
	// live deployment's `deployment` label. It must exist in the
	// DeploymentConfig's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	ActiveService string `json:"activeService"`

	// PreviewService, if set, selects the new deployment once its pods are
	// ready, before promotion, and keeps selecting it. It must exist in the
	// DeploymentConfig's namespace.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	PreviewService string `json:"previewService,omitempty"`

	// PrePromotionAnalysis measures the new deployment before the active
	// Service switches to it.
	// +optional
	PrePromotionAnalysis *Analysis `json:"prePromotionAnalysis,omitempty"`

	// PostPromotionAnalysis measures the new deployment after the active
	// Service switched to it, before the old deployment scales down. A
	// failure switches the active Service back to the old deployment and
	// fails the rollout; once it passes, the switch is final.
	// +optional
	PostPromotionAnalysis *Analysis `json:"postPromotionAnalysis,omitempty"`

	// AutoPromotionSeconds promotes the new deployment this long after it is
	// ready; without it the rollout waits for `kubectl dc rollout promote`.
	// +kubebuilder:validation:Minimum=0
	// +optional
	AutoPromotionSeconds *int32 `json:"autoPromotionSeconds,omitempty"`

	// ScaleDownDelaySeconds is how long the old deployment keeps its pods
	// after the active Service switched away from it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ScaleDownDelaySeconds *int32 `json:"scaleDownDelaySeconds,omitempty"`

	// TimeoutSeconds is how long to wait for the new deployment's pods to be
	// ready (without progress), as the other strategies' timeoutSeconds. The
	// wait for promotion does not count against it.
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	// +optional
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
}
