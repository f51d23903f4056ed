package controller

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

var (
	activeRolloutsDesc = prometheus.NewDesc("deployconfig_active_rollouts_duration_seconds",
		"How long each rollout still in progress has been running.", []string{"namespace", "name", "phase", "latest_version"}, nil)
	lastFailedDesc = prometheus.NewDesc("deployconfig_last_failed_rollout_time",
		"Creation time (Unix seconds) of each DeploymentConfig's latest rollout when it failed.", []string{"namespace", "name", "latest_version"}, nil)
	strategyDesc = prometheus.NewDesc("deployconfig_strategy_total",
		"DeploymentConfigs by strategy type.", []string{"type"}, nil)
)

// metricsCollector computes the rollout gauges from the controller's cache
// at scrape time, so they are always consistent with the cluster and need
// no bookkeeping in the reconcilers. Finished rollouts are counted where
// the work is done: the deployer controller counts the phases it writes
// (countFinished), which only the leader does. Counting what the cache sees
// would count each rollout on every replica (the shipped manifest runs
// two), and the cache leaves settled deployments out, so they cannot be
// counted at scrape time either.
//
// The gauges, too, come only from the leader: a standby replica's cache
// holds the same rollouts, and an alert or a sum over the pods would see
// each one twice.
type metricsCollector struct {
	cache ctrlcache.Cache
	clock clock.PassiveClock
	// elected is closed once this replica leads (at once without leader
	// election).
	elected  <-chan struct{}
	finished *prometheus.CounterVec
}

// newMetricsCollector returns a collector whose finished-rollouts counter
// the deployer controller feeds (see countFinished) and whose gauges are
// reported once elected is closed.
func newMetricsCollector(_ context.Context, c ctrlcache.Cache, clk clock.PassiveClock, elected <-chan struct{}) (*metricsCollector, error) {
	m := &metricsCollector{cache: c, clock: clk, elected: elected, finished: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "deployconfig_complete_rollouts_total",
		Help: "Rollouts this dc-controller finished (wrote Complete or Failed) while it led, by outcome (available, failed, cancelled).",
	}, []string{"phase"})}
	for _, outcome := range []string{"available", "failed", "cancelled"} {
		m.finished.WithLabelValues(outcome)
	}
	return m, nil
}

// countFinished counts a deployment the caller has just moved to a
// terminal phase; a nil counter counts nothing.
func countFinished(finished *prometheus.CounterVec, rc *corev1.ReplicationController, phase dcv1.DeploymentPhase) {
	if finished == nil {
		return
	}
	switch {
	case phase == dcv1.DeploymentPhaseComplete:
		finished.WithLabelValues("available").Inc()
	case phase == dcv1.DeploymentPhaseFailed && deployment.IsCancelled(rc):
		finished.WithLabelValues("cancelled").Inc()
	case phase == dcv1.DeploymentPhaseFailed:
		finished.WithLabelValues("failed").Inc()
	}
}

// each calls fn with every cached object of obj's kind, read-only. It walks
// the informer's store rather than listing: a list, even one that skips deep
// copies, copies every object into its items, and a scrape would make
// garbage the size of the cache (16 MB at 5000 DeploymentConfigs).
func (c *metricsCollector) each(ctx context.Context, obj client.Object, fn func(client.Object)) error {
	informer, err := c.cache.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	s, ok := informer.(interface{ GetStore() toolscache.Store })
	if !ok {
		return fmt.Errorf("the informer of %T keeps no store", obj)
	}
	for _, item := range s.GetStore().List() {
		if o, ok := item.(client.Object); ok {
			fn(o)
		}
	}
	return nil
}

// Describe sends the metrics' descriptions.
func (c *metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{activeRolloutsDesc, lastFailedDesc, strategyDesc} {
		ch <- d
	}
	c.finished.Describe(ch)
}

// Collect sends the metrics' current values.
func (c *metricsCollector) Collect(ch chan<- prometheus.Metric) {
	c.finished.Collect(ch)
	select {
	case <-c.elected:
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.collectStrategies(ctx, ch)
	c.collectRollouts(ctx, ch)
}

func (c *metricsCollector) collectStrategies(ctx context.Context, ch chan<- prometheus.Metric) {
	counts := map[string]int{}
	err := c.each(ctx, &dcv1.DeploymentConfig{}, func(o client.Object) {
		dc, ok := o.(*dcv1.DeploymentConfig)
		if !ok {
			return
		}
		t := string(dc.Spec.Strategy.Type)
		if t == "" {
			t = string(dcv1.DeploymentStrategyTypeRolling)
		}
		counts[t]++
	})
	if err != nil {
		return
	}
	for t, n := range counts {
		ch <- prometheus.MustNewConstMetric(strategyDesc, prometheus.GaugeValue, float64(n), t)
	}
}

func (c *metricsCollector) collectRollouts(ctx context.Context, ch chan<- prometheus.Metric) {
	latest := map[string]*corev1.ReplicationController{}
	err := c.each(ctx, &corev1.ReplicationController{}, func(o client.Object) {
		rc, ok := o.(*corev1.ReplicationController)
		if !ok {
			return
		}
		dcKey := rc.Namespace + "/" + rc.Labels[dcv1.DeploymentConfigLabel]
		if old := latest[dcKey]; old == nil || deployment.Version(rc) > deployment.Version(old) {
			latest[dcKey] = rc
		}
		if phase := deployment.Phase(rc); !deployment.IsTerminal(phase) {
			ch <- prometheus.MustNewConstMetric(activeRolloutsDesc, prometheus.GaugeValue,
				c.clock.Since(rc.CreationTimestamp.Time).Seconds(),
				rc.Namespace, rc.Labels[dcv1.DeploymentConfigLabel], string(phase), strconv.FormatInt(deployment.Version(rc), 10))
		}
	})
	if err != nil {
		return
	}
	for _, rc := range latest {
		if deployment.Phase(rc) == dcv1.DeploymentPhaseFailed {
			ch <- prometheus.MustNewConstMetric(lastFailedDesc, prometheus.GaugeValue, float64(rc.CreationTimestamp.Unix()),
				rc.Namespace, rc.Labels[dcv1.DeploymentConfigLabel], strconv.FormatInt(deployment.Version(rc), 10))
		}
	}
}
