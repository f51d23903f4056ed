package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func httpGet(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

func TestMetricsAndHealthEndpoints(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) { dc.Spec.Strategy.Type = dcv1.DeploymentStrategyTypeRecreate }))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	mustCreate(t, newDC(ns, "slow", nil))
	waitPhase(t, ns, "slow-1", dcv1.DeploymentPhasePending)

	want := []string{
		`deployconfig_strategy_total{type="Recreate"}`,
		`deployconfig_complete_rollouts_total{phase="available"}`,
		fmt.Sprintf(`deployconfig_active_rollouts_duration_seconds{latest_version="1",name="slow",namespace="%s",phase="Pending"}`, ns),
		`workqueue_adds_total{controller="deploymentconfig",name="deploymentconfig"}`,
	}
	waitFor(t, "metrics", func(ctx context.Context) (bool, string, error) {
		code, body, err := httpGet(ctx, cluster.metricsURL)
		if err != nil || code != http.StatusOK {
			return false, fmt.Sprintf("status %d: %v", code, err), nil
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				return false, "missing " + w, nil
			}
		}
		return true, "", nil
	})
	for _, path := range []string{"/healthz", "/readyz"} {
		code, body, err := httpGet(context.Background(), cluster.healthURL+path)
		if err != nil || code != http.StatusOK {
			t.Errorf("%s: %d %s %v", path, code, body, err)
		}
	}
}
