package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// tracker remembers, for one namespace, what the cluster's final state no
// longer shows: every deployment that reached Complete (history cleanup
// deletes old ones), every deployer pod each deployment ever had (a
// deployment run twice would have two) and every deployment that said it
// ran in dc-controller (its progress record names dc-controller as its
// runner).
type tracker struct {
	mu sync.Mutex
	// complete holds the deployments seen Complete, each with whether it
	// ran in dc-controller.
	complete     map[types.UID]bool
	deployers    map[string]map[types.UID]bool
	inController map[string]bool
}

// startTracker watches the namespace until ctx ends.
func startTracker(ctx context.Context, cs kubernetes.Interface, ns string) (*tracker, error) {
	tr := &tracker{complete: map[types.UID]bool{}, deployers: map[string]map[types.UID]bool{}, inController: map[string]bool{}}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	rcs := factory.Core().V1().ReplicationControllers().Informer()
	pods := factory.Core().V1().Pods().Informer()
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    tr.observe,
		UpdateFunc: func(_, obj any) { tr.observe(obj) },
	}
	if _, err := rcs.AddEventHandler(handler); err != nil {
		return nil, err
	}
	if _, err := pods.AddEventHandler(handler); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), rcs.HasSynced, pods.HasSynced) {
		return nil, fmt.Errorf("tracker caches of %s did not sync", ns)
	}
	return tr, nil
}

func (tr *tracker) observe(obj any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch o := obj.(type) {
	case *corev1.ReplicationController:
		if deployment.RunsInController(o) {
			tr.inController[o.Name] = true
		}
		if deployment.Phase(o) == dcv1.DeploymentPhaseComplete {
			tr.complete[o.UID] = tr.inController[o.Name]
		}
	case *corev1.Pod:
		rc := o.Labels[dcv1.DeployerPodForDeploymentLabel]
		if _, hook := o.Labels[dcv1.DeployerPodTypeLabel]; rc == "" || hook {
			return
		}
		if tr.deployers[rc] == nil {
			tr.deployers[rc] = map[types.UID]bool{}
		}
		tr.deployers[rc][o.UID] = true
	}
}

// completed counts the deployments seen Complete, and of those the ones
// that ran in dc-controller.
func (tr *tracker) completed() (all, inController int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, controller := range tr.complete {
		if controller {
			inController++
		}
	}
	return len(tr.complete), inController
}

// ranInController reports whether a deployment was ever seen saying that
// dc-controller runs it.
func (tr *tracker) ranInController(rc string) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.inController[rc]
}

// deployerPods counts the deployer pods a deployment has had.
func (tr *tracker) deployerPods(rc string) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.deployers[rc])
}
