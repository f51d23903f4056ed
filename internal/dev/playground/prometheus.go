package playground

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/deployconfig/deployconfig/internal/dev/localprom"
)

// prometheusStateFile, in the cluster's directory, tells dc-local up where
// the Prometheus and the exporter of dc-local serve listen.
const prometheusStateFile = "prometheus.json"

// PrometheusState is where the playground's Prometheus and exporter listen.
type PrometheusState struct {
	// URL is Prometheus's base URL, e.g. http://127.0.0.1:39123.
	URL string `json:"url"`
	// Exporter is the exporter's host:port (localprom.PostTraffic).
	Exporter string `json:"exporter"`
}

// prometheusStatePath is the state file of the cluster's Prometheus.
func (o Options) prometheusStatePath() (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	return filepath.Join(o.clusterDir(), prometheusStateFile), nil
}

// StartPrometheus starts the exporter and a Prometheus scraping it, both on
// loopback, with Prometheus's data in a temporary directory, and records
// where they listen for ReadPrometheus. The returned function stops both.
// Without bin/prometheus it returns an error saying how to build it.
func StartPrometheus(ctx context.Context, o Options) (func(), error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	path, err := o.prometheusStatePath()
	if err != nil {
		return nil, err
	}
	_ = os.Remove(path)
	exporter, err := localprom.StartExporter()
	if err != nil {
		return nil, err
	}
	prom, err := localprom.Start(ctx, localprom.Options{Binary: o.binary("prometheus"), Targets: []string{exporter.Addr()}})
	if err != nil {
		exporter.Close()
		return nil, err
	}
	stop := func() {
		_ = os.Remove(path)
		prom.Close()
		exporter.Close()
	}
	data, err := json.Marshal(PrometheusState{URL: prom.URL(), Exporter: exporter.Addr()})
	if err == nil {
		err = os.WriteFile(path, data, 0o600)
	}
	if err != nil {
		stop()
		return nil, fmt.Errorf("record where prometheus listens: %w", err)
	}
	return stop, nil
}

// ReadPrometheus waits up to timeout for dc-local serve to have started its
// Prometheus and returns where it listens.
func ReadPrometheus(ctx context.Context, o Options, timeout time.Duration) (PrometheusState, error) {
	path, err := o.prometheusStatePath()
	if err != nil {
		return PrometheusState{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			var s PrometheusState
			if err := json.Unmarshal(data, &s); err != nil {
				return PrometheusState{}, fmt.Errorf("read %s: %w", path, err)
			}
			return s, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return PrometheusState{}, fmt.Errorf("read %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return PrometheusState{}, fmt.Errorf("dc-local serve has not started prometheus (no %s): %w", path, ctx.Err())
		case <-tick.C:
		}
	}
}
