package controller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/deployconfig/deployconfig/internal/configsnapshot"
)

// TestKeepEqualSecretCopies: after the namespace's key changed (its
// Secret was deleted, or the copies were named before names were keyed),
// a Secret's copy gets another name for the same data; the recorded copy
// holds that data, so it stays, and nothing is reported changed. A copy
// whose data differs is a change.
func TestKeepEqualSecretCopies(t *testing.T) {
	ctx := context.Background()
	source := &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("1234")}}
	source.Namespace, source.Name = "shop", "creds"
	oldKey := []byte("0123456789abcdef0123456789abcdef")
	kept := configsnapshot.SecretCopy(source, oldKey)
	other := source.DeepCopy()
	other.Data["password"] = []byte("5678")
	stale := configsnapshot.SecretCopy(other, oldKey)
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(source, kept, stale).Build()
	// No key Secret: the reconciler makes a new key, as after a deletion.
	r := &DeploymentConfigReconciler{Client: c, APIReader: c, keys: newSnapshotKeys()}
	for _, tc := range []struct {
		name, recorded string
		changed        bool
	}{
		{"same data under the old key", kept.Name, false},
		{"other data", stale.Name, true},
		{"a recorded copy that is gone", "creds-0000000000", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			current, err := r.readSource(ctx, "shop", configsnapshot.Ref{Kind: configsnapshot.KindSecret, Name: "creds"})
			if err != nil {
				t.Fatal(err)
			}
			if current.entry.Copy == tc.recorded {
				t.Fatalf("the new key names the copy %s as the old one did", current.entry.Copy)
			}
			recorded := configsnapshot.NewSet(configsnapshot.Entry{Kind: configsnapshot.KindSecret, Name: "creds", Copy: tc.recorded})
			snapshots := []snapshot{current}
			if err := r.keepEqualSecretCopies(ctx, "shop", recorded, snapshots); err != nil {
				t.Fatal(err)
			}
			if changed := len(configsnapshot.Changed(recorded, setOf(snapshots))) > 0; changed != tc.changed {
				t.Errorf("changed = %v, want %v (copy %s, recorded %s)", changed, tc.changed, snapshots[0].entry.Copy, tc.recorded)
			}
		})
	}
}
