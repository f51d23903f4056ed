package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/dev/localprom"
)

// errorRateHook is a post hook that measures the deployment's error rate
// (the share of code 500 among its requests, from the suite's exporter) on
// prometheus count times, a second apart, and fails above 5%.
func errorRateHook(prometheus string, count, errorLimit int32) *dcv1.LifecycleHook {
	return &dcv1.LifecycleHook{
		FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort,
		Analysis: &dcv1.Analysis{
			Interval:              metav1.Duration{Duration: time.Second},
			Count:                 &count,
			ConsecutiveErrorLimit: &errorLimit,
			Metrics: []dcv1.AnalysisMetric{{
				Name:             "error-rate",
				Prometheus:       &dcv1.PrometheusMetric{Address: prometheus, Query: localprom.ErrorRateQuery},
				SuccessCondition: "result[0] <= 0.05",
			}},
		},
	}
}

// analyzedDC is a Rolling DeploymentConfig whose post hook is hook.
func analyzedDC(name string, replicas int32, hook *dcv1.LifecycleHook) *dcv1.DeploymentConfig {
	s := rolling(intstr.FromInt32(1), intstr.FromInt32(0))
	s.RollingParams.Post = hook
	return newDC(name, replicas, s)
}

// A version whose error rate stays low passes its analysis and completes;
// the next one, whose error rate the exporter raises to 50%, fails it: the
// deployment is Failed with the analysis and the metric as its reason,
// the previous version is back at full size, and `kubectl dc logs` and
// `kubectl dc describe` show the measurements and the outcome.
func TestAnalysisPassesAGoodVersionAndRollsBackABadOne(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	suite.exporter.SetTraffic(ns, "web-1", 10, 0)
	suite.exporter.SetTraffic(ns, "web-2", 10, 5)
	waitRated(t, suite.prometheus.URL(), ns, "web-1")
	createDC(t, ns, analyzedDC("web", 2, errorRateHook(suite.prometheus.URL(), 3, 2)))
	rc := requireComplete(t, ns, "web", 1)

	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> post: analysis started: 1 metric(s), 3 measurement(s) 1s apart",
		`--> post: analysis "error-rate" measurement #1: Successful: result [0] met successCondition result[0] <= 0.05`,
		`--> post: analysis "error-rate" measurement #3: Successful: result [0] met successCondition`,
		`--> post: analysis Successful: 3 measurement(s) of metric "error-rate"`,
		"--> post: Success",
		"--> Success",
	)
	if got := rc.Annotations[dcv1.AnalysisAnnotationPrefix+"post"]; !strings.HasPrefix(got, "Successful: ") {
		t.Errorf("web-1's post analysis annotation %q, want Successful", got)
	}

	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { setEnv(dc, "VERSION", "2") })
	rc = requirePhase(t, ns, "web", 2, dcv1.DeploymentPhaseFailed)
	reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]
	if !strings.Contains(reason, `post hook failed: analysis Failed: metric "error-rate" failed 1 measurement(s) (failureLimit 0): result [0.5]`) {
		t.Errorf("web-2's failure reason %q does not name the analysis and its metric", reason)
	}
	log := deployerLog(t, ns, "web")
	assertInOrder(t, log,
		"Scaling web-2 up to 2",
		`--> post: analysis "error-rate" measurement #1: Failed: result [0.5] did not meet successCondition result[0] <= 0.05`,
		`--> post: analysis Failed: metric "error-rate"`,
		"--> post: Failed",
	)
	if strings.Contains(log, "--> Success") || strings.Contains(log, "Warning") {
		t.Errorf("the rollout went on after the analysis failed:\n%s", log)
	}
	waitScaled(t, ns, map[string]int32{"web-1": 2, "web-2": 0})
	describe := mustDC(t, ns, "describe", "web")
	for _, want := range []string{
		"Analysis post:",
		`Failed: metric "error-rate" failed 1 measurement(s)`,
		"AnalysisFailed",
	} {
		if !strings.Contains(describe, want) {
			t.Errorf("kubectl dc describe does not show %q:\n%s", want, describe)
		}
	}
	t.Logf("kubectl dc logs web:\n%s\nkubectl dc describe web:\n%s", log, describe)
}

// Prometheus stopped in the middle of an analysis: each measurement is an
// error, tolerated up to consecutiveErrorLimit; one more ends the analysis
// in Error and fails the rollout. When Prometheus comes back before the
// limit, the analysis goes on and passes.
func TestAnalysisWhenPrometheusGoesDown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		comesBack  bool
		count      int32
		errorLimit int32
	}{
		{name: "errors up to the limit fail the rollout", count: 20, errorLimit: 2},
		{name: "back before the limit, the analysis passes", comesBack: true, count: 6, errorLimit: 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := dcNamespace(t)
			suite.exporter.SetTraffic(ns, "web-1", 10, 0)
			prom := privatePrometheus(t)
			waitRated(t, prom.URL(), ns, "web-1")
			createDC(t, ns, analyzedDC("web", 1, errorRateHook(prom.URL(), tc.count, tc.errorLimit)))

			waitDeployerLog(t, ns, "web-1", `--> post: analysis "error-rate" measurement #1: Successful`)
			if err := prom.Stop(); err != nil {
				t.Fatal(err)
			}
			if !tc.comesBack {
				rc := requirePhase(t, ns, "web", 1, dcv1.DeploymentPhaseFailed)
				log := deployerLog(t, ns, "web")
				t.Logf("kubectl dc logs web:\n%s", log)
				assertInOrder(t, log,
					`Error (1 in a row, consecutiveErrorLimit 2): query `+prom.URL(),
					`Error (2 in a row, consecutiveErrorLimit 2)`,
					`Error (3 in a row, consecutiveErrorLimit 2)`,
					`--> post: analysis Error: metric "error-rate" had 3 errors in a row (consecutiveErrorLimit 2)`,
					"--> post: Failed",
				)
				if reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]; !strings.Contains(reason, `analysis Error: metric "error-rate" had 3 errors in a row`) {
					t.Errorf("failure reason %q does not name the analysis's errors", reason)
				}
				return
			}
			waitDeployerLog(t, ns, "web-1", "Error (1 in a row")
			if err := prom.Restart(t.Context()); err != nil {
				t.Fatal(err)
			}
			requireComplete(t, ns, "web", 1)
			log := deployerLog(t, ns, "web")
			t.Logf("kubectl dc logs web:\n%s", log)
			assertInOrder(t, log,
				`measurement #1: Successful`,
				`Error (1 in a row, consecutiveErrorLimit 30): query `+prom.URL(),
				`--> post: analysis Successful: `,
				"--> Success",
			)
		})
	}
}

// privatePrometheus starts a Prometheus of the test's own, scraping the
// suite's exporter, that the test may stop.
func privatePrometheus(t *testing.T) *localprom.Server {
	t.Helper()
	prom, err := localprom.Start(t.Context(), localprom.Options{
		Binary: filepath.Join(suite.binDir, "prometheus"), Targets: []string{suite.exporter.Addr()},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prom.Close)
	return prom
}

// waitDeployerLog waits until the deployer log of a deployment holds text.
func waitDeployerLog(t *testing.T, ns, rcName, text string) {
	t.Helper()
	waitFor(t, "deployer log of "+rcName+" to show "+text, rolloutTimeout, func(ctx context.Context) (bool, error) {
		log, err := suite.cluster.DeployerLog(ctx, ns, rcName)
		return err == nil && strings.Contains(log, text), nil
	})
}

// waitRated waits until Prometheus at base has two scrapes of the
// deployment's requests, so that the error rate is a number and the first
// measurement a verdict.
func waitRated(t *testing.T, base, ns, deployment string) {
	t.Helper()
	query := `rate(` + localprom.RequestsMetric + `{namespace="` + ns + `",deployment="` + deployment + `",code="200"}[5s]) > 0`
	waitFor(t, "prometheus to rate "+deployment, rolloutTimeout, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/query?query="+url.QueryEscape(query), nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		var answer struct {
			Data struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
			return false, nil
		}
		return len(answer.Data.Result) > 0, nil
	})
}
