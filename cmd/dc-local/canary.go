package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
)

// canaryRequests is how many requests the real node's canary sample is
// shown answering.
const canaryRequests = 200

// showCanary rolls the traffic-routing sample out on the real node up to
// its pause at 10% of the requests, and shows a sample of requests through
// the Gateway: who answered them, as `uniq -c` counts.
func showCanary(ctx context.Context, out io.Writer, cluster *realnode.Cluster, pc *playground.Cluster, namespace string, timeout time.Duration) error {
	fmt.Fprintf(out, "\nRolling out dc/%s through the Gateway %s/%s (Traefik): a canary at %d%% of the requests...\n",
		playground.TrafficSample, realnode.GatewayNamespace, realnode.GatewayName, playground.TrafficSampleWeight)
	r, err := pc.RollOutTrafficSample(ctx, out, namespace, cluster.Image(imagebuild.SampleAppImageName),
		realnode.GatewayNamespace, realnode.GatewayName, timeout)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "dc/%s: deployment #%d paused at %d%% of the requests\n", playground.TrafficSample, r.Version, playground.TrafficSampleWeight)
	counts, err := sampleRequests(ctx, cluster.HTTPClient(5*time.Second), playground.TrafficSampleHost, "", canaryRequests)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n$ for i in $(seq %d); do curl -s -H 'Host: %s' http://%s/; done | sort | uniq -c    # from the cluster's network namespace\n%s",
		canaryRequests, playground.TrafficSampleHost, realnode.GatewayAddr, formatCounts(counts))
	counts, err = sampleRequests(ctx, cluster.HTTPClient(5*time.Second), playground.TrafficSampleHost, "X-Canary: yes", 10)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n$ for i in $(seq 10); do curl -s -H 'Host: %s' -H 'X-Canary: yes' http://%s/; done | sort | uniq -c    # the header route\n%s",
		playground.TrafficSampleHost, realnode.GatewayAddr, formatCounts(counts))
	fmt.Fprintf(out, "\n'kubectl dc rollout promote %[1]s' sends every request to the new version; 'kubectl dc rollout cancel %[1]s' sends them all back.\n", playground.TrafficSample)
	return nil
}

// sampleRequests sends n requests through the Gateway for host (with
// header "Name: value" when not empty) and counts their answers.
func sampleRequests(ctx context.Context, client *http.Client, host, header string, n int) (map[string]int, error) {
	defer client.CloseIdleConnections()
	counts := map[string]int{}
	for range n {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+realnode.GatewayAddr+"/", nil)
		if err != nil {
			return nil, err
		}
		req.Host = host
		if name, value, ok := strings.Cut(header, ":"); ok {
			req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("a request through the Gateway: %w", err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("a request through the Gateway: %w", err)
		}
		answer := strings.TrimSpace(string(body))
		if resp.StatusCode != http.StatusOK {
			answer = fmt.Sprintf("(%s) %s", resp.Status, answer)
		}
		counts[answer]++
	}
	return counts, nil
}

// formatCounts prints counts as `sort | uniq -c` does.
func formatCounts(counts map[string]int) string {
	var b strings.Builder
	for _, answer := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "%7d %s\n", counts[answer], answer)
	}
	return b.String()
}
