package bench

import (
	"path/filepath"
	"testing"

	"github.com/deployconfig/deployconfig/internal/controller"
)

// TestCacheLayout: the cache scenario counts the footprint's RCs as
// populateDC makes them, each size's new DCs with that size's revisions.
func TestCacheLayout(t *testing.T) {
	tests := []struct {
		name             string
		sizes, revisions []int
		at               int
		wantRCs          int
	}{
		{name: "one size", sizes: []int{100}, revisions: []int{10}, at: 100, wantRCs: 1000},
		{name: "second size", sizes: []int{5000, 20000}, revisions: []int{10, 2}, at: 20000, wantRCs: 80000},
		{name: "first of two", sizes: []int{5000, 20000}, revisions: []int{10, 2}, at: 5000, wantRCs: 50000},
		{name: "beyond the last", sizes: []int{100}, revisions: []int{3}, at: 200, wantRCs: 600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &cacheCorpus{sizes: tt.sizes, revisions: tt.revisions}
			if l := c.layout(tt.at); l.dcs != tt.at || l.rcs != tt.wantRCs {
				t.Errorf("layout(%d) = %+v, want %d DCs, %d RCs", tt.at, l, tt.at, tt.wantRCs)
			}
		})
	}
}

// TestCacheKindsAdmitted: the corpus objects meet dc-controller's cache
// options as the footprint's do: only the kinds the layout counts as
// cached get in.
func TestCacheKindsAdmitted(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.CompatDir = compatDir(root)
	o.FootprintSizes, o.FootprintRevisions = []int{10}, []int{2}
	c, err := newCacheCorpus(o)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"DeploymentConfig": true, "RC, latest (Complete)": true, "RC, settled (main cache)": false,
		"RC, settled, hand-scaled (settled cache)": true, "RC, rollout in flight (pod mode)": true,
		"RC, rollout in flight (controller mode)": true, "deployer pod, Succeeded": false,
		"deployer pod, Running (pod mode)": true, "Service (BlueGreen)": true, "ConfigMap (metadata)": true,
	}
	mainOpts, settledOpts := controller.CacheOptions(nil, nil)
	for _, k := range c.cacheKinds() {
		t.Run(k.name, func(t *testing.T) {
			opts := mainOpts
			if k.settled {
				opts = settledOpts
			}
			by, ok := byObject(opts, k.key)
			if !ok {
				t.Fatalf("no cache options for %s", k.name)
			}
			obj, err := k.object(3)
			if err != nil {
				t.Fatal(err)
			}
			if got := admits(by, obj); got != want[k.name] {
				t.Errorf("admitted %v, want %v", got, want[k.name])
			}
			if len(obj.GetManagedFields()) == 0 || obj.GetUID() == "" || obj.GetResourceVersion() == "" {
				t.Errorf("%s lacks what the API server sets: %+v", k.name, obj)
			}
		})
	}
}
