package localprom

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestExporterCountersGrowAtTheirRate(t *testing.T) {
	e, err := StartExporter()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	now := time.Unix(1000, 0)
	e.now = func() time.Time { return now }
	e.SetTraffic("shop", "web-2", 10, 4)
	now = now.Add(2 * time.Second)
	e.SetRate("shop", "web-2", "500", 0)
	now = now.Add(3 * time.Second)

	resp, err := http.Get("http://" + e.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`# TYPE app_requests_total counter`,
		`app_requests_total{namespace="shop",deployment="web-2",code="200"} 30`,
		`app_requests_total{namespace="shop",deployment="web-2",code="500"} 8`,
	} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
}

func TestPostTraffic(t *testing.T) {
	e, err := StartExporter()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := PostTraffic(t.Context(), e.Addr(), "shop", "web-3", 10, 2); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	c := e.series[seriesKey{"shop", "web-3", "500"}]
	e.mu.Unlock()
	if c == nil || c.perSec != 2 {
		t.Errorf("the 500 series of web-3 is not set to 2/s: %+v", c)
	}
	if err := PostTraffic(t.Context(), e.Addr(), "shop", "web-3", 1, 2); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("more errors than requests accepted: %v", err)
	}
}
