package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// recentCreateTTL is how long a deployment the DeploymentConfig controller
// created is waited for in the cache before a sync may try to create it
// again. Past it the create is tried, and refused if the deployment
// exists, as when nothing was remembered; a deployment deleted before the
// cache showed it is made again this much later.
const recentCreateTTL = 10 * time.Second

// createdVersion names a deployment by its DeploymentConfig's UID, so that
// a DeploymentConfig deleted and made again under the same name is not
// taken for the one that created it.
type createdVersion struct {
	dc      types.UID
	version int64
}

// recentCreates remembers, for a minute at most, what a controller
// created that its cache may not show yet; its workers share it. The
// deployer controller keys it by deployment (its deployer pods), the
// DeploymentConfig controller by createdVersion: the status write that
// claims a version wakes the DeploymentConfig again at once, often before
// the cache has the replication controller created after it, and that
// sync would create it again, for a refusal and a read of the existing one.
// The zero value is empty and ready.
type recentCreates[K comparable] struct {
	mu sync.Mutex
	at map[K]time.Time
}

// record notes a create at now and forgets creates older than a minute.
func (c *recentCreates[K]) record(key K, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[K]time.Time{}
	}
	for k, t := range c.at {
		if now.Sub(t) > time.Minute {
			delete(c.at, k)
		}
	}
	c.at[key] = now
}

// within reports whether key was created less than d before now.
func (c *recentCreates[K]) within(key K, now time.Time, d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.at[key]
	return ok && now.Sub(t) < d
}

// forget drops key: the cache shows what was created.
func (c *recentCreates[K]) forget(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.at, key)
}
