package imagetrigger

import (
	"context"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/deployconfig/deployconfig/internal/registry"
)

// credentialCache keeps the keychains built from pull secrets for a while,
// so that DeploymentConfigs of a namespace that pull with the same secrets
// read them from the API server once per period rather than on every sync.
// Secrets are read without a cache (informers on every secret of the
// cluster would cost memory and widen what the controller holds), so a
// rotated secret is seen within ttl.
type credentialCache struct {
	reader registry.ObjectReader
	ttl    time.Duration
	clock  clock.PassiveClock

	mu    sync.Mutex
	items map[string]cachedKeychain
}

type cachedKeychain struct {
	keychain *registry.Keychain
	expires  time.Time
}

func newCredentialCache(reader registry.ObjectReader, ttl time.Duration, c clock.PassiveClock) *credentialCache {
	return &credentialCache{reader: reader, ttl: ttl, clock: c, items: map[string]cachedKeychain{}}
}

// keychain returns the keychain a pod of the template would pull with.
func (c *credentialCache) keychain(ctx context.Context, namespace string, spec *corev1.PodSpec) (*registry.Keychain, error) {
	key := cacheKey(namespace, spec)
	now := c.clock.Now()
	c.mu.Lock()
	item, ok := c.items[key]
	c.mu.Unlock()
	if ok && now.Before(item.expires) {
		return item.keychain, nil
	}
	kc, err := registry.KeychainForPod(ctx, c.reader, namespace, spec)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.items {
		if !now.Before(v.expires) {
			delete(c.items, k)
		}
	}
	c.items[key] = cachedKeychain{keychain: kc, expires: now.Add(c.ttl)}
	return kc, nil
}

// cacheKey names what a pod template's keychain is built from: the
// namespace, the service account and the template's secrets, in order.
func cacheKey(namespace string, spec *corev1.PodSpec) string {
	parts := []string{namespace, spec.ServiceAccountName, spec.DeprecatedServiceAccount}
	for _, s := range spec.ImagePullSecrets {
		parts = append(parts, s.Name)
	}
	return strings.Join(parts, "\x00")
}
