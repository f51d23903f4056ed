package invariants

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// deploymentConfigInformer watches the DeploymentConfigs of a namespace (all
// when empty) as unstructured objects: the checker reads only their
// identity and latestVersion, so it needs no typed client.
func deploymentConfigInformer(cfg *rest.Config, namespace string) (dynamicinformer.DynamicSharedInformerFactory, cache.SharedIndexInformer, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("invariants dynamic client: %w", err)
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, namespace, nil)
	informer := factory.ForResource(dcv1.GroupVersion.WithResource("deploymentconfigs")).Informer()
	return factory, informer, nil
}

// observeDeploymentConfig checks an update of a DeploymentConfig: its
// latestVersion never goes down (a rollout that disappears from the
// record would be rolled out again).
func (c *Checker) observeDeploymentConfig(oldObj, newObj any) {
	before, ok1 := oldObj.(*unstructured.Unstructured)
	after, ok2 := newObj.(*unstructured.Unstructured)
	if !ok1 || !ok2 || before.GetUID() != after.GetUID() {
		return
	}
	was, _, _ := unstructured.NestedInt64(before.Object, "status", "latestVersion")
	is, _, _ := unstructured.NestedInt64(after.Object, "status", "latestVersion")
	if is < was {
		c.report("latestVersion went down",
			fmt.Sprintf("dc %s/%s went from latestVersion %d to %d", after.GetNamespace(), after.GetName(), was, is), before.Object, after.Object)
	}
}

// checkOwnerUIDs runs at rest: an RC of a DeploymentConfig made since the
// DeploymentConfig of that name was created is controlled by that very
// DeploymentConfig (its UID), not by another of the same name. Older RCs
// of a deleted DeploymentConfig are left to the garbage collector.
func (c *Checker) checkOwnerUIDs() {
	if c.dcs == nil {
		return
	}
	for _, obj := range c.rcs.List() {
		rc := obj.(*corev1.ReplicationController)
		name := rc.Labels[dcv1.DeploymentConfigLabel]
		if name == "" || rc.DeletionTimestamp != nil {
			continue
		}
		item, ok, _ := c.dcs.GetByKey(rc.Namespace + "/" + name)
		if !ok {
			continue
		}
		dc, ok := item.(*unstructured.Unstructured)
		if !ok || rc.CreationTimestamp.Before(ptrTime(dc.GetCreationTimestamp())) {
			continue
		}
		if ref := metav1.GetControllerOf(rc); ref != nil && ref.Kind == "DeploymentConfig" && ref.Name == name && ref.UID != dc.GetUID() {
			c.report("rc controlled by another deploymentconfig",
				fmt.Sprintf("rc %s/%s names controller uid %s, but dc %s has uid %s", rc.Namespace, rc.Name, ref.UID, name, dc.GetUID()), rc, dc.Object)
		}
	}
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }
