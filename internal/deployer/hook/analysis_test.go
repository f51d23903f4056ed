package hook

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/analysis"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
)

// errorRate is a Prometheus answer: a vector of one sample.
func errorRate(v string) string {
	return `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"` + v + `"]}]}}`
}

// scriptedProm answers queries with its answers in turn, the last again
// when they run out.
type scriptedProm struct {
	mu      sync.Mutex
	answers []string
}

func (p *scriptedProm) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	answer := p.answers[0]
	if len(p.answers) > 1 {
		p.answers = p.answers[1:]
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, answer)
}

func TestExecutorAnalysis(t *testing.T) {
	tests := []struct {
		name       string
		policy     dcv1.LifecycleHookFailurePolicy
		answers    []string
		wantErr    string
		wantLast   string
		annotation string
		reason     string
	}{
		{name: "a good version passes", policy: dcv1.LifecycleHookFailurePolicyAbort, answers: []string{errorRate("0.01")},
			wantLast: "--> post: Success", annotation: "Successful: 2 measurement(s)", reason: analysis.ReasonAnalysisSucceeded},
		{name: "Abort fails the rollout naming the metric", policy: dcv1.LifecycleHookFailurePolicyAbort, answers: []string{errorRate("0.5")},
			wantErr:  `post hook failed: analysis Failed: metric "error-rate" failed 1 measurement(s) (failureLimit 0): result [0.5] did not meet successCondition result[0] < 0.05`,
			wantLast: "--> post: Failed", annotation: `Failed: metric "error-rate"`, reason: analysis.ReasonAnalysisFailed},
		{name: "Ignore goes on", policy: dcv1.LifecycleHookFailurePolicyIgnore, answers: []string{errorRate("0.5")},
			wantLast: "--> post: Warning: the hook failed and its failurePolicy is Ignore", annotation: "Failed: ", reason: analysis.ReasonAnalysisFailed},
		{name: "Retry measures again until it passes", policy: dcv1.LifecycleHookFailurePolicyRetry, answers: []string{errorRate("0.5"), errorRate("0.01")},
			wantLast: "--> post: Success", annotation: "Successful: ", reason: analysis.ReasonAnalysisSucceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			rc := testRC()
			rc.Annotations = map[string]string{dcv1.DeploymentConfigAnnotation: "web", dcv1.DeploymentVersionAnnotation: "3"}
			cluster := fc.New(ctx, fc.Options{}, rc.DeepCopy())
			defer cluster.Wait()
			defer cancel()
			prom := httptest.NewServer(&scriptedProm{answers: tt.answers})
			defer prom.Close()
			hook := &dcv1.LifecycleHook{FailurePolicy: tt.policy, Analysis: &dcv1.Analysis{
				Interval: metav1.Duration{Duration: time.Second}, Count: ptr32(2),
				Metrics: []dcv1.AnalysisMetric{{
					Name:             "error-rate",
					Prometheus:       &dcv1.PrometheusMetric{Address: prom.URL, Query: `rate{deployment="{{.Deployment}}"}`},
					SuccessCondition: "result[0] < 0.05",
				}},
			}}
			clock := &fakeTime{now: time.Now()}
			var out bytes.Buffer
			e := NewExecutor(cluster.Client, &out, &dcv1.DeploymentStrategy{}, clock.now.Add(time.Minute))
			e.now, e.pause = clock.Now, clock.Pause
			e.analysisOpts.Sleep = clock.Pause

			err := e.Run(ctx, hook, rc, Post)
			t.Logf("log:\n%s", out.String())
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, tt.wantLast) {
				t.Errorf("last line %q, want %q", last, tt.wantLast)
			}
			if !strings.Contains(out.String(), `--> post: analysis "error-rate" measurement #1: `) {
				t.Errorf("the log does not show the measurements")
			}
			got, err := cluster.Client.CoreV1().ReplicationControllers("shop").Get(ctx, rc.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if a := got.Annotations[dcv1.AnalysisAnnotationPrefix+"post"]; !strings.HasPrefix(a, tt.annotation) {
				t.Errorf("annotation %q, want it to start with %q", a, tt.annotation)
			}
			events, err := cluster.Client.CoreV1().Events("shop").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			last := events.Items[len(events.Items)-1]
			if last.Reason != tt.reason || last.InvolvedObject.Name != rc.Name || !strings.HasPrefix(last.Message, "post analysis ") {
				t.Errorf("last event %s %s %q, want %s regarding %s", last.Reason, last.InvolvedObject.Name, last.Message, tt.reason, rc.Name)
			}
			if got := len(cluster.Created()); got != 0 {
				t.Errorf("%d pods created; an analysis runs in the deployer", got)
			}
		})
	}
}

func ptr32(v int32) *int32 { return &v }
