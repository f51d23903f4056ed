package e2e

import (
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

const (
	// scaleDCs is how many DeploymentConfigs the dashboard's scale test
	// puts in one namespace: the issue asks for pages usable at 500.
	scaleDCs = 500
	// scaleWriters create them side by side.
	scaleWriters = 8
)

// The list page at 500 DeploymentConfigs in a namespace shows every one
// and still follows a change live. It logs the figures (the page's load,
// its size, how soon a change shows); tests assert no timings. The
// DeploymentConfigs have no triggers, so that nothing rolls out and the
// test stays light for the suite's other tests.
func TestDashboardAt500DCs(t *testing.T) {
	t.Parallel()
	browser := newBrowser(t)
	ns := newNamespace(t)
	start := time.Now()
	createIdleDCs(t, ns, scaleDCs)
	t.Logf("created %d DeploymentConfigs in %s", scaleDCs, time.Since(start).Round(time.Millisecond))
	admin := startDashboard(t)

	start = time.Now()
	browse(t, browser, admin+"?namespace="+ns)
	waitPage(t, browser, fmt.Sprintf("%d rows", scaleDCs), fmt.Sprintf(`document.querySelectorAll('table.dcs tbody tr').length === %d`, scaleDCs))
	loaded := time.Since(start)
	nav := evaluate[map[string]float64](t, browser, `(() => { const n = performance.getEntriesByType('navigation')[0]; return {dcl: n.domContentLoadedEventEnd, size: n.transferSize}; })()`)

	start = time.Now()
	updateDC(t, ns, "app-250", func(dc *dcv1.DeploymentConfig) { dc.Spec.Replicas = 3 })
	waitPage(t, browser, "app-250 wanting 3 replicas", `document.querySelector('tr[data-dc="`+ns+`/app-250"] td:nth-child(5)')?.textContent === "0 / 3"`)
	shown := time.Since(start)

	start = time.Now()
	browse(t, browser, admin+"dc/"+ns+"/app-250")
	waitPage(t, browser, "app-250's page", `document.querySelector('#rollout-title') !== null`)
	dcPage := time.Since(start)
	t.Logf("list page of %d DeploymentConfigs: shown in %s (DOMContentLoaded %.0f ms, %.0f KiB); a change shown live after %s; one DeploymentConfig's page in %s",
		scaleDCs, loaded.Round(time.Millisecond), nav["dcl"], nav["size"]/1024, shown.Round(time.Millisecond), dcPage.Round(time.Millisecond))
	screenshot(t, browser, "dc-among-500")
}

// createIdleDCs creates n DeploymentConfigs app-000... with no replicas
// and no triggers.
func createIdleDCs(t *testing.T, ns string, n int) {
	t.Helper()
	c := dcs(t)
	g, ctx := errgroup.WithContext(t.Context())
	g.SetLimit(scaleWriters)
	for i := range n {
		g.Go(func() error {
			dc := newDC(fmt.Sprintf("app-%03d", i), 0, recreate(nil, nil, nil))
			dc.Namespace = ns
			// An empty list (not a missing one) means no triggers.
			dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{}
			if err := c.Create(ctx, dc); err != nil {
				return fmt.Errorf("creating deploymentconfig %s: %w", dc.Name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}
