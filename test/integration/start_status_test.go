package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// TestStartWritesStatusOnce: the status write that claims a trigger's
// version already says what the sync goes on to create, so that a
// rollout's start costs one status write, as a Deployment's does. A user
// watching the DeploymentConfig sees, from the first status with the new
// latestVersion on, the Progressing condition name the new RC, and never
// "waiting for its replication controller to be created" for a rollout
// that waited for nothing; in each deployer mode, for a first rollout and
// a template change.
func TestStartWritesStatusOnce(t *testing.T) {
	for _, mode := range deployerModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			m := newModeRollouts(t, mode)
			seen := watchStatuses(t, m.ns)
			firstAndChange(t, m, nil)
			for version := int64(1); version <= 2; version++ {
				statuses := seen.withVersion(t, version)
				if len(statuses) == 0 {
					t.Fatalf("no status with latestVersion %d", version)
				}
				rc := fmt.Sprintf("%q", fmt.Sprintf("web-%d", version))
				if p := progressingOf(statuses[0]); !strings.Contains(p, rc) {
					t.Errorf("first status of version %d: Progressing %q, want it to name %s", version, p, rc)
				}
				for _, s := range statuses {
					for _, c := range s.Conditions {
						if c.Reason == dcv1.RolloutPendingReason {
							t.Errorf("version %d: condition %s %s %q, though its RC was created in the sync that claimed it", version, c.Type, c.Reason, c.Message)
						}
					}
				}
			}
		})
	}
}

// statusRecorder keeps every status a watch of a namespace's
// DeploymentConfigs delivered, in order.
type statusRecorder struct {
	ns       string
	mu       sync.Mutex
	statuses []dcv1.DeploymentConfigStatus
	rv       string
}

func watchStatuses(t *testing.T, ns string) *statusRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := dynamic.NewForConfigOrDie(cluster.cfg).Resource(dcResource).Namespace(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch dcs: %v", err)
	}
	rec := &statusRecorder{ns: ns}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			dc := &dcv1.DeploymentConfig{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, dc); err != nil {
				continue
			}
			rec.mu.Lock()
			rec.statuses = append(rec.statuses, dc.Status)
			rec.rv = dc.ResourceVersion
			rec.mu.Unlock()
		}
	}()
	return rec
}

// withVersion returns the statuses seen with latestVersion version, once
// the watch has caught up with the DeploymentConfig "web".
func (r *statusRecorder) withVersion(t *testing.T, version int64) []dcv1.DeploymentConfigStatus {
	t.Helper()
	var out []dcv1.DeploymentConfigStatus
	rv := getDCUnstructured(context.Background(), t, r.ns, "web").GetResourceVersion()
	waitFor(t, "the watch to catch up with "+rv, func(context.Context) (bool, string, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		out = out[:0]
		for _, s := range r.statuses {
			if s.LatestVersion == version {
				out = append(out, s)
			}
		}
		return r.rv == rv, r.rv, nil
	})
	return out
}

// progressingOf is the message of a status's Progressing condition.
func progressingOf(s dcv1.DeploymentConfigStatus) string {
	for _, c := range s.Conditions {
		if c.Type == dcv1.DeploymentProgressing {
			return c.Message
		}
	}
	return ""
}
