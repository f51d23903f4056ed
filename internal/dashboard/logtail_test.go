package dashboard

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// TestAnalysisLogReadOnce: however often a DeploymentConfig's page
// renders its analyses (every change of its pods does), the deployer log
// is asked for once, followed, and each new line wakes the page.
func TestAnalysisLogReadOnce(t *testing.T) {
	objs := canaryAtStep()
	for _, o := range objs {
		rc, ok := o.(*corev1.ReplicationController)
		if !ok || rc.Name != "web-2" {
			continue
		}
		dc, err := deployment.DecodeConfig(rc)
		if err != nil {
			t.Fatal(err)
		}
		dc.Spec.Strategy.RollingParams.Steps = append(dc.Spec.Strategy.RollingParams.Steps, dcv1.RollingStep{Analysis: &dcv1.Analysis{Metrics: []dcv1.AnalysisMetric{{
			Name: "error-rate", SuccessCondition: "result[0] < 0.05",
			Prometheus: &dcv1.PrometheusMetric{Address: "http://127.0.0.1:9090", Query: "up"},
		}}}})
		if rc.Annotations[dcv1.EncodedDeploymentConfigAnnotation], err = deployment.Encode(dc); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var calls [][]string
	more := make(chan struct{})
	run := func(ctx context.Context, args []string, stdout, _ io.Writer) error {
		mu.Lock()
		calls = append(calls, args)
		mu.Unlock()
		fmt.Fprintln(stdout, `--> step-3: analysis "error-rate" measurement #1: Successful: result [0.02] met successCondition result[0] < 0.05`)
		select {
		case <-more:
			fmt.Fprintln(stdout, `--> step-3: analysis "error-rate" measurement #2: Successful: result [0.01] met successCondition result[0] < 0.05`)
		case <-ctx.Done():
		}
		return nil
	}
	s := testServer(t, false, run, objs...)
	sub, cancel := s.store.hub.subscribe("shop", "web")
	defer cancel()
	// measured reports whether the page charts n measurements.
	measured := func(n int) bool {
		v := s.dcData(t.Context(), "shop", "web")
		points := 0
		for _, a := range v.Analyses {
			for _, m := range a.Metrics {
				points += len(m.Points)
			}
		}
		return points == n
	}
	waitUntil(t, "the first measurement", sub, func() bool { return measured(1) })
	close(more)
	waitUntil(t, "the second measurement", sub, func() bool { return measured(2) })
	for range 20 {
		s.dcData(t.Context(), "shop", "web")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 || !slices.Contains(calls[0], "--follow") {
		t.Errorf("kubectl dc runs %q; want one `logs --follow`", calls)
	}
}

// waitUntil waits for cond, looking again on every wake-up of sub.
func waitUntil(t *testing.T, what string, sub *subscription, cond func() bool) {
	t.Helper()
	timeout := time.After(pushTimeout)
	for !cond() {
		select {
		case <-sub.changed:
		case <-timeout:
			t.Fatalf("no %s within %s", what, pushTimeout)
		}
	}
}

// TestLogTailsBounded: past maxLogTails rollouts, the tail read least
// recently goes, and its follower stops with it.
func TestLogTailsBounded(t *testing.T) {
	stopped := make(chan int64, maxLogTails+1)
	run := func(ctx context.Context, args []string, _, _ io.Writer) error {
		<-ctx.Done()
		var v int64
		fmt.Sscan(args[3], &v)
		stopped <- v
		return ctx.Err()
	}
	var mu sync.Mutex
	clock := testNow
	tick := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	tails := newLogTails(t.Context(), run, newHub(), tick)
	for v := int64(1); v <= maxLogTails+1; v++ {
		tails.read("shop", "web", v)
	}
	select {
	case v := <-stopped:
		if v != 1 {
			t.Errorf("the follower of rollout #%d stopped, want #1's, the least recently read", v)
		}
	case <-time.After(pushTimeout):
		t.Fatal("no follower stopped")
	}
	if n := len(tails.byKey); n != maxLogTails {
		t.Errorf("%d tails kept, want %d", n, maxLogTails)
	}
}
