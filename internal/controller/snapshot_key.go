package controller

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/deployconfig/deployconfig/internal/configsnapshot"
)

// snapshotKeys holds the key of each namespace's Secret copy names
// (configsnapshot.SecretHash), read from or created as its
// configsnapshot.SnapshotKeySecret on first use. A nil *snapshotKeys reads
// the Secret every time.
type snapshotKeys struct {
	mu   sync.Mutex
	byNS map[string][]byte
}

func newSnapshotKeys() *snapshotKeys {
	return &snapshotKeys{byNS: map[string][]byte{}}
}

// get returns the namespace's key, creating its Secret when there is none.
// Two replicas creating it at once agree: the one whose create fails reads
// the other's.
func (k *snapshotKeys) get(ctx context.Context, c client.Client, reader client.Reader, namespace string) ([]byte, error) {
	if key := k.cached(namespace); key != nil {
		return key, nil
	}
	name := types.NamespacedName{Namespace: namespace, Name: configsnapshot.SnapshotKeySecret}
	secret := &corev1.Secret{}
	err := reader.Get(ctx, name, secret)
	if apierrors.IsNotFound(err) {
		secret, err = createSnapshotKey(ctx, c, namespace)
		if apierrors.IsAlreadyExists(err) {
			err = reader.Get(ctx, name, secret)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the key of Secret snapshots, secret %s: %w", name, err)
	}
	key := secret.Data[configsnapshot.SnapshotKeyField]
	if len(key) < configsnapshot.MinKeyLength {
		return nil, fmt.Errorf("secret %s holds no key of at least %d bytes in %q: delete it and dc-controller makes a new one", name, configsnapshot.MinKeyLength, configsnapshot.SnapshotKeyField)
	}
	k.store(namespace, key)
	return key, nil
}

// createSnapshotKey creates a namespace's key Secret with a random key.
func createSnapshotKey(ctx context.Context, c client.Client, namespace string) (*corev1.Secret, error) {
	key := make([]byte, configsnapshot.MinKeyLength)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("make a key: %w", err)
	}
	immutable := true
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace,
			Name:      configsnapshot.SnapshotKeySecret,
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "dc-controller"},
		},
		Immutable: &immutable,
		Type:      corev1.SecretTypeOpaque,
		Data:      map[string][]byte{configsnapshot.SnapshotKeyField: key},
	}
	return secret, c.Create(ctx, secret)
}

func (k *snapshotKeys) cached(namespace string) []byte {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.byNS[namespace]
}

func (k *snapshotKeys) store(namespace string, key []byte) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.byNS[namespace] = key
}
