package controller

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fieldIndexPrefix is how controller-runtime's cache reader names the
// informer index it consults for client.MatchingFields: a List with
// MatchingFields{field: v} and InNamespace(ns) looks up the key "ns/v" in
// the index "field:<field>".
const fieldIndexPrefix = "field:"

// indexInNamespace adds a field index that answers only lists within one
// namespace. controller-runtime's IndexField also files every object under
// a second, all-namespaces key; for an index with a value per
// DeploymentConfig (its RCs, its config sources) that doubles the index's
// sets, one small map each, which at 20,000 DeploymentConfigs is megabytes
// no reader uses: every list of these indexes names its namespace. A list
// of one without InNamespace would find nothing, so only indexes read that
// way are built here.
func indexInNamespace(ctx context.Context, informers cache.Informers, obj client.Object, field string, extract client.IndexerFunc) error {
	informer, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return fmt.Errorf("informer of %T: %w", obj, err)
	}
	return informer.AddIndexers(toolscache.Indexers{fieldIndexPrefix + field: namespacedKeys(extract)})
}

// namespacedKeys turns an index function's values into the keys a
// namespaced list reads: "<namespace>/<value>".
func namespacedKeys(extract client.IndexerFunc) toolscache.IndexFunc {
	return func(raw any) ([]string, error) {
		obj, ok := raw.(client.Object)
		if !ok {
			return nil, fmt.Errorf("index: %T is not a Kubernetes object", raw)
		}
		values := extract(obj)
		keys := make([]string, len(values))
		for i, v := range values {
			keys[i] = obj.GetNamespace() + "/" + v
		}
		return keys, nil
	}
}
