package cli

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/configsnapshot"
)

// withSnapshots turns configuration snapshots on.
func withSnapshots(dc *dcv1.DeploymentConfig) {
	dc.Spec.ConfigSnapshots = &dcv1.ConfigSnapshots{Follow: dcv1.ConfigSnapshotFollowReferenced}
}

// snapshotsOn records a set of snapshots on a deployment, as dc-controller
// does.
func snapshotsOn(t *testing.T, entries ...configsnapshot.Entry) rcOption {
	return func(rc *corev1.ReplicationController) {
		value, err := configsnapshot.NewSet(entries...).Encode()
		if err != nil {
			t.Fatal(err)
		}
		rc.Annotations[dcv1.ConfigSnapshotsAnnotation] = value
	}
}

// snapshotHistory is web with snapshots: #1 read app-1 and creds-1; #2,
// after both changed, app-2 and creds-2 and a new optional, absent source.
func snapshotHistory(opts ...dcOption) func(t *testing.T) []runtime.Object {
	return func(t *testing.T) []runtime.Object {
		dc := newDC("web", 2, append([]dcOption{withSnapshots}, opts...)...)
		cm := func(name string, data map[string]string) *corev1.ConfigMap {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: data}
		}
		secret := func(name string, data map[string]string) *corev1.Secret {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
			for k, v := range data {
				s.Data[k] = []byte(v)
			}
			return s
		}
		return []runtime.Object{
			dc,
			cm("app-1", map[string]string{"GREETING": "hello", "LEVEL": "info", "OLD": "x"}),
			cm("app-2", map[string]string{"GREETING": "bonjour", "LEVEL": "info", "NEW": "y"}),
			secret("creds-1", map[string]string{"password": "hunter2", "user": "admin"}),
			secret("creds-2", map[string]string{"password": "correct horse", "user": "admin", "token": "t0k3n"}),
			newRC(t, dc, 1, dcv1.DeploymentPhaseComplete, 30*time.Minute, scaled(0, 0, 0, 0), snapshotsOn(t,
				configsnapshot.Entry{Kind: "ConfigMap", Name: "app", Copy: "app-1"},
				configsnapshot.Entry{Kind: "Secret", Name: "creds", Copy: "creds-1"})),
			newRC(t, dc, 2, dcv1.DeploymentPhaseComplete, 2*time.Minute, scaled(3, 3, 3, 3), snapshotsOn(t,
				configsnapshot.Entry{Kind: "ConfigMap", Name: "app", Copy: "app-2"},
				configsnapshot.Entry{Kind: "ConfigMap", Name: "extra"},
				configsnapshot.Entry{Kind: "Secret", Name: "creds", Copy: "creds-2"})),
		}
	}
}

func pinned(dc *dcv1.DeploymentConfig) {
	dc.Annotations = map[string]string{dcv1.ConfigSnapshotPinAnnotation: "1"}
}

func TestConfigSnapshotsCLI(t *testing.T) {
	runCases(t, []commandCase{{
		name: "history revision shows its snapshots",
		objs: snapshotHistory(),
		args: []string{"rollout", "history", "web", "--revision", "2"},
	}, {
		name: "config diff hides secret values",
		objs: snapshotHistory(),
		args: []string{"rollout", "history", "web", "--revision", "2", "--config-diff", "1"},
	}, {
		name: "config diff without revision",
		objs: snapshotHistory(),
		args: []string{"rollout", "history", "web", "--config-diff", "1"},
	}, {
		name: "describe",
		objs: snapshotHistory(pinned),
		args: []string{"describe", "web"},
	}, {
		name: "undo pins the restored revision's snapshots",
		objs: snapshotHistory(),
		args: []string{"rollout", "undo", "web", "--to-revision", "1"},
		check: func(t *testing.T, f *fixture) {
			if got := f.getDC("web").Annotations[dcv1.ConfigSnapshotPinAnnotation]; got != "1" {
				t.Errorf("pin = %q, want 1", got)
			}
		},
	}})
}

func TestDiffData(t *testing.T) {
	tests := []struct {
		name          string
		before, after snapshotData
		secret        bool
		want          []string
	}{
		{"configmap values shown", snapshotData{"a": "1", "b": "2"}, snapshotData{"a": "9", "c": "3"}, false,
			[]string{`~ a: "1" -> "9"`, `- b: "2"`, `+ c: "3"`}},
		{"secret values hidden", snapshotData{"a": "d1", "b": "d2", secretTypeKey: "Opaque"}, snapshotData{"a": "d9", "c": "d3", secretTypeKey: "kubernetes.io/tls"}, true,
			[]string{"~ a: changed (value hidden)", "- b: (value hidden)", "+ c: (value hidden)", `~ type (Secret): "Opaque" -> "kubernetes.io/tls"`}},
		{"same", snapshotData{"a": "1"}, snapshotData{"a": "1"}, false, []string{"(same data)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := diffData(tt.before, tt.after, tt.secret)
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
			}
		})
	}
}
