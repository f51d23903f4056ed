package deployer

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployer/strategy"
)

// TestStepAnalysisOutcomes checks how the deployer's runner reports each
// outcome to the strategies: Successful passes, Failed is an error that
// fails the rollout, and Inconclusive an error wrapping
// strategy.ErrInconclusive, on which the strategies wait for a person.
func TestStepAnalysisOutcomes(t *testing.T) {
	tests := []struct {
		name, value      string
		wantErr          string
		wantInconclusive bool
	}{
		{name: "Successful", value: "0.01"},
		{name: "Failed", value: "0.5", wantErr: `analysis Failed: metric "errors" failed`},
		{name: "Inconclusive", value: "0.07", wantErr: `analysis inconclusive: metric "errors" was inconclusive`, wantInconclusive: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,%q]}]}}`, tt.value)
			}))
			defer prom.Close()
			rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: "shop",
				Annotations: map[string]string{dcv1.DeploymentConfigAnnotation: "web", dcv1.DeploymentVersionAnnotation: "2"}}}
			client := fake.NewSimpleClientset(rc.DeepCopy())
			spec := &dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{{
				Name:             "errors",
				Prometheus:       &dcv1.PrometheusMetric{Address: prom.URL, Query: "errors"},
				SuccessCondition: "result[0] < 0.05",
				FailureCondition: "result[0] > 0.1",
			}}}
			err := stepAnalysis{client: client, out: &bytes.Buffer{}}.Run(t.Context(), spec, rc, "step-2")
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one with %q", err, tt.wantErr)
			}
			if got := errors.Is(err, strategy.ErrInconclusive); got != tt.wantInconclusive {
				t.Errorf("errors.Is(err, ErrInconclusive) = %v, want %v", got, tt.wantInconclusive)
			}
		})
	}
}

// TestValidateStepAnalysesCoversEveryAnalysis checks that the analyses
// the deployer runs outside hooks are all validated before anything moves,
// naming their field: canary steps, the background analysis, and
// blue-green's pre- and postPromotionAnalysis.
func TestValidateStepAnalysesCoversEveryAnalysis(t *testing.T) {
	bad := func() *dcv1.Analysis {
		return &dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{{
			Name:             "errors",
			Prometheus:       &dcv1.PrometheusMetric{Address: "http://prometheus:9090", Query: "errors"},
			SuccessCondition: "result[0] <",
		}}}
	}
	tests := []struct {
		field    string
		strategy dcv1.DeploymentStrategy
	}{
		{"spec.strategy.rollingParams.steps[1].analysis", dcv1.DeploymentStrategy{RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Steps: []dcv1.RollingStep{{}, {Analysis: bad()}}}}},
		{"spec.strategy.rollingParams.analysis", dcv1.DeploymentStrategy{RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Analysis: bad()}}},
		{"spec.strategy.blueGreenParams.prePromotionAnalysis", dcv1.DeploymentStrategy{BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
			PrePromotionAnalysis: bad()}}},
		{"spec.strategy.blueGreenParams.postPromotionAnalysis", dcv1.DeploymentStrategy{BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
			PostPromotionAnalysis: bad()}}},
	}
	for _, tt := range tests {
		err := validateStepAnalyses(&tt.strategy)
		if err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: err = %v, want one naming the field", tt.field, err)
		}
	}
}
